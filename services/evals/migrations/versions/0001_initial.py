"""evals: eval scenarios mirrored to the voice provider

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "evals"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "scenarios",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("agent_id", Uuid, nullable=False),
        sa.Column("provider_eval_id", sa.Text, nullable=False, unique=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("messages", JSONB, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        schema=S)
    op.create_index("scenarios_agent_created", "scenarios", ["agent_id", "created_at"], schema=S)
    op.create_index("scenarios_business_created", "scenarios", ["business_id", "created_at"], schema=S)


def downgrade() -> None:
    op.drop_table("scenarios", schema=S)
