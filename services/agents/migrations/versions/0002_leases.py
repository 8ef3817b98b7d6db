"""agents: write leases on agents and phone numbers (no provider call inside a transaction)

Revision ID: 0002
Revises: 0001
"""
from alembic import op

from core.leases import lease_columns

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "agents"


def upgrade() -> None:
    for table in ("agents", "phone_numbers"):
        for column in lease_columns():
            op.add_column(table, column, schema=S)


def downgrade() -> None:
    for table in ("agents", "phone_numbers"):
        for column in lease_columns():
            op.drop_column(table, column.name, schema=S)
