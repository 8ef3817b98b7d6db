"""agents: ring-first forwarding of a number (forward_to, ring_seconds)

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

S = "agents"


def upgrade() -> None:
    op.add_column("phone_numbers", sa.Column("forward_to", sa.Text), schema=S)
    op.add_column("phone_numbers", sa.Column("ring_seconds", sa.Integer), schema=S)
    op.create_check_constraint("phone_numbers_forwarding_whole", "phone_numbers",
                               "(forward_to IS NULL) = (ring_seconds IS NULL)", schema=S)


def downgrade() -> None:
    op.drop_constraint("phone_numbers_forwarding_whole", "phone_numbers", schema=S)
    op.drop_column("phone_numbers", "ring_seconds", schema=S)
    op.drop_column("phone_numbers", "forward_to", schema=S)
