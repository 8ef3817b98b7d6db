"""calls: the privacy retention's scans of the calls still holding a recording or a transcript (services.calls.
data_retention, issue 56)

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None
SCHEMA = "calls"
TRANSCRIBED = "transcript IS NOT NULL OR summary IS NOT NULL"


def upgrade() -> None:
    # IF NOT EXISTS: an operator may have built them CONCURRENTLY first (README, "Operations: bounded storage")
    op.create_index("calls_recorded", "calls", ["business_id", "created_at"], schema=SCHEMA, if_not_exists=True,
                    postgresql_where=sa.text("recording_url IS NOT NULL"))
    op.create_index("calls_transcribed", "calls", ["business_id", "created_at"], schema=SCHEMA, if_not_exists=True,
                    postgresql_where=sa.text(TRANSCRIBED))


def downgrade() -> None:
    op.drop_index("calls_transcribed", table_name="calls", schema=SCHEMA)
    op.drop_index("calls_recorded", table_name="calls", schema=SCHEMA)
