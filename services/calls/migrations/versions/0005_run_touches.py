"""calls: the communication run touch a call is for (external_ref, touch_id), carried on its events

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "calls"


def upgrade() -> None:
    op.add_column("calls", sa.Column("external_ref", sa.Text), schema=S)
    op.add_column("calls", sa.Column("touch_id", sa.Text), schema=S)


def downgrade() -> None:
    op.drop_column("calls", "touch_id", schema=S)
    op.drop_column("calls", "external_ref", schema=S)
