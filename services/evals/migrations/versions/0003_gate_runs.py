"""evals: what started a run (a request or an agent's eval gate), the channel a gate run tested, and the tool
calls the provider stubbed during it (test mode)

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

S = "evals"


def upgrade() -> None:
    op.add_column("runs", sa.Column("trigger", sa.Text, nullable=False, server_default="request"), schema=S)
    op.add_column("runs", sa.Column("channel", sa.Text), schema=S)
    op.add_column("runs", sa.Column("stubbed_tool_calls", JSONB, nullable=False, server_default="[]"), schema=S)


def downgrade() -> None:
    for column in ("stubbed_tool_calls", "channel", "trigger"):
        op.drop_column("runs", column, schema=S)
