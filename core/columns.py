"""The column types every schema's tables share: ids as UUIDs read and written as text, times with their zone."""
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import UUID

Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)
