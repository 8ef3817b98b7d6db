"""calls: the (business_id, newest first) index also carries agent_id, status and duration, so an analytics
aggregate reads each business's window as one index-only range instead of the table

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

S = "calls"
NEWEST = [sa.text("created_at DESC"), sa.text("id DESC")]


def upgrade() -> None:
    op.drop_index("calls_business_created", "calls", schema=S)
    op.create_index("calls_business_created", "calls", ["business_id", *NEWEST], schema=S,
                    postgresql_include=["agent_id", "status", "duration"])


def downgrade() -> None:
    op.drop_index("calls_business_created", "calls", schema=S)
    op.create_index("calls_business_created", "calls", ["business_id", *NEWEST], schema=S)
