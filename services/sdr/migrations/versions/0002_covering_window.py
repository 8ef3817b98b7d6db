"""sdr: the (business_id, newest first) index of leads also carries agent_id, status and source, so an
analytics aggregate reads each business's window as one index-only range instead of the table

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "sdr"
NEWEST = [sa.text("created_at DESC"), sa.text("id DESC")]


def upgrade() -> None:
    op.drop_index("leads_business_created", "leads", schema=S)
    op.create_index("leads_business_created", "leads", ["business_id", *NEWEST], schema=S,
                    postgresql_include=["agent_id", "status", "source"])


def downgrade() -> None:
    op.drop_index("leads_business_created", "leads", schema=S)
    op.create_index("leads_business_created", "leads", ["business_id", *NEWEST], schema=S)
