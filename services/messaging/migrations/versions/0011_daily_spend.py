"""messaging: what each business spent on each UTC day (calls placed, texts sent, seconds of calls ended), counted
against its plan's daily limits (services.messaging.spend), and each ended call's seconds, counted once

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

S = "messaging"


def upgrade() -> None:
    op.create_table(
        "daily_spend",
        sa.Column("business_id", UUID(as_uuid=False), primary_key=True),
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("what", sa.Text, primary_key=True),
        sa.Column("used", sa.BigInteger, nullable=False),
        schema=S)
    op.create_table(
        "call_seconds",
        sa.Column("call_id", UUID(as_uuid=False), primary_key=True),
        sa.Column("business_id", UUID(as_uuid=False), nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("seconds", sa.Integer, nullable=False),
        schema=S)


def downgrade() -> None:
    op.drop_table("call_seconds", schema=S)
    op.drop_table("daily_spend", schema=S)
