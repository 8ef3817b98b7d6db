"""agents: the opt-in eval gate on prompt changes, and each version's gate outcome (passed, forced, ...)

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "agents"


def upgrade() -> None:
    op.add_column("agents", sa.Column("eval_gate", sa.Boolean, nullable=False, server_default=sa.false()), schema=S)
    op.add_column("agent_versions", sa.Column("eval_gate", JSONB), schema=S)


def downgrade() -> None:
    op.drop_column("agent_versions", "eval_gate", schema=S)
    op.drop_column("agents", "eval_gate", schema=S)
