"""calls: the tool calls still running, by when they were claimed (the tool-call sweep's scan)

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
    op.create_index("tool_calls_running", "tool_calls", ["created_at"], schema="calls",
                    postgresql_where=sa.text("outcome = 'running'"))


def downgrade() -> None:
    op.drop_index("tool_calls_running", table_name="tool_calls", schema="calls")
