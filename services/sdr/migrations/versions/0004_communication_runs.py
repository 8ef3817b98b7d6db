"""sdr: communication runs, their jobs (one per touch, claimed by the scheduler under leases) and call attempts

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

S = "sdr"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)
NEWEST = [sa.text("created_at DESC"), sa.text("id DESC")]


def upgrade() -> None:
    op.create_table(
        "communication_runs",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("account_id", Uuid, nullable=False),
        sa.Column("external_ref", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.Text, nullable=False),
        sa.Column("request_hash", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("agent_id", Uuid, nullable=False),
        sa.Column("retry", JSONB, nullable=False),
        sa.Column("touches", sa.Integer, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("started_at", Ts),
        sa.Column("ended_at", Ts),
        sa.UniqueConstraint("business_id", "idempotency_key", name="communication_runs_idempotency"),
        sa.UniqueConstraint("business_id", "external_ref", name="communication_runs_external_ref"),
        schema=S,
    )
    op.create_index("communication_runs_business_created", "communication_runs", ["business_id", *NEWEST], schema=S)
    op.create_table(
        "communication_jobs",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("run_id", Uuid, sa.ForeignKey(f"{S}.communication_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("touch_index", sa.Integer, nullable=False),
        sa.Column("touch_id", sa.Text, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("timezone", sa.Text),
        sa.Column("agent_id", Uuid, nullable=False),
        sa.Column("context", JSONB, nullable=False),
        sa.Column("scheduled_at", Ts, nullable=False),
        sa.Column("due_at", Ts, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("rule", sa.Text),
        sa.Column("code", sa.Text),
        sa.Column("reason", sa.Text),
        sa.Column("call_id", Uuid),
        sa.Column("message_id", Uuid),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("ended_at", Ts),
        sa.UniqueConstraint("run_id", "touch_id", name="communication_jobs_touch"),
        schema=S,
    )
    op.create_index("communication_jobs_due", "communication_jobs", ["due_at"], schema=S,
                    postgresql_where=sa.text("status IN ('pending', 'deferred', 'retrying')"))
    op.create_index("communication_jobs_executing", "communication_jobs", ["lease_until"], schema=S,
                    postgresql_where=sa.text("status = 'executing'"))
    op.create_index("communication_jobs_in_flight", "communication_jobs", ["business_id"], schema=S,
                    postgresql_where=sa.text("channel = 'call' AND status IN ('executing', 'in_progress')"))
    op.create_index("communication_jobs_run", "communication_jobs", ["run_id", "status"], schema=S)
    op.create_index("communication_jobs_run_scheduled", "communication_jobs",
                    ["run_id", sa.text("scheduled_at DESC"), sa.text("id DESC")], schema=S)
    op.create_table(
        "communication_attempts",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("job_id", Uuid, sa.ForeignKey(f"{S}.communication_jobs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("run_id", Uuid, nullable=False),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("call_id", Uuid, unique=True),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("retry_eligible", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("reason", sa.Text),
        sa.Column("next_attempt_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("ended_at", Ts),
        sa.UniqueConstraint("job_id", "attempt", name="communication_attempts_once"),
        schema=S,
    )
    op.create_index("communication_attempts_business_created", "communication_attempts", ["business_id", *NEWEST],
                    schema=S)
    op.create_index("communication_attempts_run", "communication_attempts", ["run_id", *NEWEST], schema=S)


def downgrade() -> None:
    op.drop_table("communication_attempts", schema=S)
    op.drop_table("communication_jobs", schema=S)
    op.drop_table("communication_runs", schema=S)
