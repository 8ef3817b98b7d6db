"""calls: calls, idempotency keys, outbox, inbox

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

from core.migrations import create_event_tables, drop_event_tables

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "calls"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "calls",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("agent_id", Uuid, nullable=False),
        sa.Column("agent_name", sa.Text),
        sa.Column("lead_id", Uuid),
        sa.Column("direction", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("to_number", sa.Text, nullable=False),
        sa.Column("from_number", sa.Text),
        sa.Column("name", sa.Text),
        sa.Column("context", sa.Text),
        sa.Column("first_message", sa.Text),
        sa.Column("max_duration", sa.Integer, nullable=False),
        sa.Column("webhook_url", sa.Text),
        sa.Column("compliance", sa.Text, nullable=False),
        sa.Column("variables", JSONB, nullable=False),
        sa.Column("provider_call_id", sa.Text, unique=True),
        sa.Column("ended_reason", sa.Text),
        sa.Column("duration", sa.Integer, nullable=False, server_default="0"),
        sa.Column("summary", sa.Text),
        sa.Column("recording_url", sa.Text),
        sa.Column("quality_dimensions", JSONB),
        sa.Column("answered", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("transcript", sa.Text),
        sa.Column("structured_data", JSONB),
        sa.Column("cost_cents", sa.Integer, nullable=False, server_default="0"),
        sa.Column("started_at", Ts),
        sa.Column("ended_at", Ts),
        sa.Column("reported_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    newest = [sa.text("created_at DESC"), sa.text("id DESC")]
    op.create_index("calls_business_created", "calls", ["business_id", *newest], schema=S)
    op.create_index("calls_business_agent", "calls", ["business_id", "agent_id", *newest], schema=S)
    op.create_index("calls_business_status", "calls", ["business_id", "status", *newest], schema=S)
    op.create_index("calls_open", "calls", ["created_at"], schema=S, postgresql_where=sa.text(
        "status IN ('queued', 'ringing', 'in-progress', 'forwarding', 'ended')"))  # domain.PROGRESS at 0001
    op.create_table(
        "idempotency_keys",
        sa.Column("account_id", Uuid, primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("request_hash", sa.Text, nullable=False),
        sa.Column("call_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("idempotency_keys_created", "idempotency_keys", ["created_at"], schema=S)
    create_event_tables(S)


def downgrade() -> None:
    drop_event_tables(S)
    op.drop_table("idempotency_keys", schema=S)
    op.drop_table("calls", schema=S)
