"""agents: request_id makes an agent creation safe to retry (signup's provisioning)

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

S = "agents"


def upgrade() -> None:
    op.add_column("agents", sa.Column("request_id", sa.Text), schema=S)
    op.create_index("agents_request_once", "agents", ["business_id", "request_id"], unique=True, schema=S,
                    postgresql_where=sa.text("request_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("agents_request_once", "agents", schema=S)
    op.drop_column("agents", "request_id", schema=S)
