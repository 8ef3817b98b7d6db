"""calls: the claimed rounds of periodic jobs (schema.rounds; the inbound calls' reconciliation, issue 55)

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None
SCHEMA = "calls"


def upgrade() -> None:
    op.create_table("rounds", sa.Column("name", sa.Text, primary_key=True), sa.Column("due_at", Ts, nullable=False),
                    schema=SCHEMA)


def downgrade() -> None:
    op.drop_table("rounds", schema=SCHEMA)
