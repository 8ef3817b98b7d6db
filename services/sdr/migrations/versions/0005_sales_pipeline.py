"""sdr: the sales pipeline: each business's SDR config, the activity log of its touches, and the pipeline's
counters on leads (touch_count, last_touch_at, paused)

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "sdr"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)
NEWEST = [sa.text("created_at DESC"), sa.text("id DESC")]


def upgrade() -> None:
    op.add_column("leads", sa.Column("touch_count", sa.Integer, nullable=False, server_default="0"), schema=S)
    op.add_column("leads", sa.Column("last_touch_at", Ts), schema=S)
    op.add_column("leads", sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()), schema=S)
    op.create_table(
        "pipeline_configs",
        sa.Column("business_id", Uuid, primary_key=True),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("min_touch_gap_hours", sa.Integer, nullable=False),
        sa.Column("max_touches", sa.Integer, nullable=False),
        sa.Column("auto_call", sa.Boolean, nullable=False),
        sa.Column("auto_email", sa.Boolean, nullable=False),
        sa.Column("auto_sms", sa.Boolean, nullable=False),
        sa.Column("sdr_agent_id", Uuid),
        sa.Column("business_hours_start", sa.Integer, nullable=False),
        sa.Column("business_hours_end", sa.Integer, nullable=False),
        sa.Column("email_from_account_id", sa.Text),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    op.create_table(
        "pipeline_activity",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("lead_id", Uuid, sa.ForeignKey(f"{S}.leads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("touch_number", sa.Integer),
        sa.Column("reference", sa.Text),
        sa.Column("origin", sa.Text, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("pipeline_activity_business_created", "pipeline_activity", ["business_id", *NEWEST], schema=S)
    op.create_index("pipeline_activity_lead_created", "pipeline_activity", ["lead_id", *NEWEST], schema=S)
    op.create_index("pipeline_activity_touch_once", "pipeline_activity", ["lead_id", "touch_number"], unique=True,
                    schema=S, postgresql_where=sa.text("touch_number IS NOT NULL AND status <> 'failed'"))


def downgrade() -> None:
    op.drop_table("pipeline_activity", schema=S)
    op.drop_table("pipeline_configs", schema=S)
    for column in ("paused", "last_touch_at", "touch_count"):
        op.drop_column("leads", column, schema=S)
