"""The sdr schema's metadata and column types, shared by the modules that declare its tables (store.py for leads
and their records, runs_store.py for communication runs); store.metadata holds them all."""
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import UUID

SCHEMA = "sdr"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)
