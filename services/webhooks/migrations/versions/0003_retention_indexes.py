"""webhooks: the retention sweep's scans (inbox.processed_at, deliveries.created_at; core.retention)

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
SCHEMA = "webhooks"


def upgrade() -> None:
    # IF NOT EXISTS: an operator may have built them CONCURRENTLY first (README, "Operations: bounded storage")
    op.create_index("inbox_processed", "inbox", ["processed_at"], schema=SCHEMA, if_not_exists=True)
    op.create_index("deliveries_finished", "deliveries", ["created_at"], schema=SCHEMA, if_not_exists=True, postgresql_where=sa.text("status <> 'pending'"))


def downgrade() -> None:
    op.drop_index("inbox_processed", table_name="inbox", schema=SCHEMA)
    op.drop_index("deliveries_finished", table_name="deliveries", schema=SCHEMA)
