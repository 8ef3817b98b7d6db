"""evals: runs of scenarios at the voice provider

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "evals"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("agent_id", Uuid, nullable=False),
        sa.Column("eval_id", Uuid, nullable=False),
        sa.Column("eval_name", sa.Text, nullable=False),
        sa.Column("batch_id", Uuid),
        sa.Column("provider_run_id", sa.Text, unique=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("passed", sa.Boolean),
        sa.Column("results", JSONB, nullable=False),
        sa.Column("ended_reason", sa.Text),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("ended_at", Ts),
        schema=S)
    op.create_index("runs_agent_created", "runs", ["agent_id", "created_at"], schema=S)


def downgrade() -> None:
    op.drop_table("runs", schema=S)
