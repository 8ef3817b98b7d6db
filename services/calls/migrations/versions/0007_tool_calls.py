"""calls: the model's calls of the agent's tools during a call (tool_calls), one per the provider's tool call id

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

S = "calls"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tool_calls",
        sa.Column("call_id", Uuid, sa.ForeignKey(f"{S}.calls.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tool_call_id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("arguments", JSONB, nullable=False),
        sa.Column("result", sa.Text),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("duration_ms", sa.Integer),
        sa.Column("created_at", Ts, nullable=False),
        schema=S)


def downgrade() -> None:
    op.drop_table("tool_calls", schema=S)
