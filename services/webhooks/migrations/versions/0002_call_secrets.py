"""webhooks: the per-business secret that signs per-call webhooks

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "webhooks"
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "call_secrets",
        sa.Column("business_id", UUID(as_uuid=False), primary_key=True),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("secret_tail", sa.Text, nullable=False),
        sa.Column("previous_secret_sealed", sa.Text),
        sa.Column("previous_secret_expires_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )


def downgrade() -> None:
    op.drop_table("call_secrets", schema=S)
