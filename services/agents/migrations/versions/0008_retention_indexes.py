"""agents: the retention sweep's scans (outbox.published_at, inbox.processed_at; core.retention)

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None
SCHEMA = "agents"


def upgrade() -> None:
    # IF NOT EXISTS: an operator may have built them CONCURRENTLY first (README, "Operations: bounded storage")
    op.create_index("outbox_published", "outbox", ["published_at"], schema=SCHEMA, if_not_exists=True, postgresql_where=sa.text("published_at IS NOT NULL"))
    op.create_index("inbox_processed", "inbox", ["processed_at"], schema=SCHEMA, if_not_exists=True)


def downgrade() -> None:
    op.drop_index("outbox_published", table_name="outbox", schema=SCHEMA)
    op.drop_index("inbox_processed", table_name="inbox", schema=SCHEMA)
