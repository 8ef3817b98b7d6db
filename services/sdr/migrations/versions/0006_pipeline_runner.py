"""sdr: the scheduled pipeline runner: one claim per (business, two-hour window), the briefing of each run, and
the run that made each activity entry

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

S = "sdr"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runner_windows",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("window_start", Ts, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("lease_token", sa.Text),
        sa.Column("lease_until", Ts),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
        sa.Column("started_at", Ts, nullable=False),
        sa.Column("ended_at", Ts),
        sa.UniqueConstraint("business_id", "window_start", name="runner_windows_once"),
        schema=S,
    )
    op.create_table(
        "briefings",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("window_id", Uuid, sa.ForeignKey(f"{S}.runner_windows.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("summary", JSONB, nullable=False),
        sa.Column("needs_owner", JSONB, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("email_id", sa.Text),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("briefings_business_created", "briefings",
                    ["business_id", sa.text("created_at DESC"), sa.text("id DESC")], schema=S)
    op.add_column("pipeline_activity", sa.Column("window_id", Uuid), schema=S)
    op.create_index("pipeline_activity_window", "pipeline_activity", ["window_id", "lead_id"], schema=S,
                    postgresql_where=sa.text("window_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("pipeline_activity_window", "pipeline_activity", schema=S)
    op.drop_column("pipeline_activity", "window_id", schema=S)
    op.drop_table("briefings", schema=S)
    op.drop_table("runner_windows", schema=S)
