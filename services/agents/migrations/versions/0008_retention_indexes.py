"""agents: the retention sweep's scans (outbox.published_at, inbox.processed_at; core.retention), built without blocking writes

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
    # CONCURRENTLY: these tables are the large ones, written on every change; it cannot run in a transaction
    with op.get_context().autocommit_block():
        op.create_index("outbox_published", "outbox", ["published_at"], schema=SCHEMA, postgresql_concurrently=True, postgresql_where=sa.text("published_at IS NOT NULL"))
        op.create_index("inbox_processed", "inbox", ["processed_at"], schema=SCHEMA, postgresql_concurrently=True)


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index("outbox_published", table_name="outbox", schema=SCHEMA, postgresql_concurrently=True)
        op.drop_index("inbox_processed", table_name="inbox", schema=SCHEMA, postgresql_concurrently=True)
