"""sdr: the standing of businesses (core.standing) as announced by accounts, so scheduled outreach skips held ones

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

S = "sdr"


def upgrade() -> None:
    op.create_table(
        "business_standings",
        sa.Column("business_id", UUID(as_uuid=False), primary_key=True),
        sa.Column("standing", sa.Text, nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        schema=S,
    )


def downgrade() -> None:
    op.drop_table("business_standings", schema=S)
