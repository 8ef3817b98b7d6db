"""calls: ring-first forwarding (forwarded_to) and the time of the provider message behind the status

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "calls"


def upgrade() -> None:
    op.add_column("calls", sa.Column("forwarded_to", sa.Text), schema=S)
    op.add_column("calls", sa.Column("status_at", sa.DateTime(timezone=True)), schema=S)


def downgrade() -> None:
    op.drop_column("calls", "status_at", schema=S)
    op.drop_column("calls", "forwarded_to", schema=S)
