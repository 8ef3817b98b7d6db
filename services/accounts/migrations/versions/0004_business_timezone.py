"""accounts: each business's IANA time zone, the one its reports cut days and weeks in

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

S = "accounts"


def upgrade() -> None:
    op.add_column("businesses", sa.Column("timezone", sa.Text, nullable=False, server_default="UTC"), schema=S)


def downgrade() -> None:
    op.drop_column("businesses", "timezone", schema=S)
