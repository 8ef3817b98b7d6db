"""messaging: texts the provider took whose callbacks never settled them, for the reconciliation to ask about

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("status_check_due", sa.TIMESTAMP(timezone=True)), schema="messaging")
    op.add_column("messages", sa.Column("status_checks", sa.Integer, nullable=False, server_default="0"),
                  schema="messaging")
    op.execute("CREATE INDEX messages_in_flight ON messaging.messages (updated_at) "
               "WHERE status IN ('accepted', 'queued', 'sending', 'sent')")


def downgrade() -> None:
    op.execute("DROP INDEX messaging.messages_in_flight")
    op.drop_column("messages", "status_checks", schema="messaging")
    op.drop_column("messages", "status_check_due", schema="messaging")
