"""accounts: the retention sweep's scans (outbox.published_at, inbox.processed_at, usage_log.created_at; core.retention)

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None
SCHEMA = "accounts"


def upgrade() -> None:
    # IF NOT EXISTS: an operator may have built them CONCURRENTLY first (README, "Operations: bounded storage")
    op.create_index("outbox_published", "outbox", ["published_at"], schema=SCHEMA, if_not_exists=True, postgresql_where=sa.text("published_at IS NOT NULL"))
    op.create_index("inbox_processed", "inbox", ["processed_at"], schema=SCHEMA, if_not_exists=True)
    op.create_index("usage_log_requests", "usage_log", ["created_at"], schema=SCHEMA, if_not_exists=True, postgresql_where=sa.text("method <> 'CALL'"))


def downgrade() -> None:
    op.drop_index("outbox_published", table_name="outbox", schema=SCHEMA)
    op.drop_index("inbox_processed", table_name="inbox", schema=SCHEMA)
    op.drop_index("usage_log_requests", table_name="usage_log", schema=SCHEMA)
