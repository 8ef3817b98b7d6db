"""agents: the secret that signs an agent's custom tool requests, sealed, with the previous one during a rotation

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

S = "agents"
COLUMNS = ("tool_secret_sealed", "tool_secret_tail", "tool_secret_previous_sealed")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("agents", sa.Column(name, sa.Text), schema=S)
    op.add_column("agents", sa.Column("tool_secret_previous_expires_at", Ts), schema=S)


def downgrade() -> None:
    for name in ("tool_secret_previous_expires_at", *reversed(COLUMNS)):
        op.drop_column("agents", name, schema=S)
