"""messaging: texts of unknown outcome (the provider did not answer the send), for the reconciliation to find

Revision ID: 0007
Revises: 0006
"""
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX messages_unknown ON messaging.messages (updated_at) WHERE status = 'unknown'")


def downgrade() -> None:
    op.execute("DROP INDEX messaging.messages_unknown")
