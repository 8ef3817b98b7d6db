"""webhooks: the retention sweep's scans (inbox.processed_at, deliveries.created_at; core.retention), built without blocking writes

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
    # CONCURRENTLY: these tables are the large ones, written on every change; it cannot run in a transaction
    with op.get_context().autocommit_block():
        op.create_index("inbox_processed", "inbox", ["processed_at"], schema=SCHEMA, postgresql_concurrently=True)
        op.create_index("deliveries_finished", "deliveries", ["created_at"], schema=SCHEMA, postgresql_concurrently=True, postgresql_where=sa.text("status <> 'pending'"))


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index("inbox_processed", table_name="inbox", schema=SCHEMA, postgresql_concurrently=True)
        op.drop_index("deliveries_finished", table_name="deliveries", schema=SCHEMA, postgresql_concurrently=True)
