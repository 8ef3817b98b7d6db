"""webhooks: subscriptions, the event history, deliveries and their attempts, inbox

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "webhooks"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("events", ARRAY(sa.Text), nullable=False),
        sa.Column("description", sa.Text),
        sa.Column("is_active", sa.Boolean, nullable=False),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("secret_tail", sa.Text, nullable=False),
        sa.Column("previous_secret_sealed", sa.Text),
        sa.Column("previous_secret_expires_at", Ts),
        sa.Column("failure_count", sa.Integer, nullable=False),
        sa.Column("failing_since", Ts),
        sa.Column("last_triggered_at", Ts),
        sa.Column("disabled_reason", sa.Text),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.UniqueConstraint("business_id", "url", name="subscriptions_one_per_url"),
        schema=S,
    )
    op.create_table(
        "events",
        sa.Column("event_id", Uuid, primary_key=True),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("business_id", Uuid),
        sa.Column("occurred_at", Ts, nullable=False),
        sa.Column("data", JSONB, nullable=False),
        schema=S,
    )
    op.create_index("events_business_occurred", "events", ["business_id", sa.text("occurred_at DESC")], schema=S)
    op.create_table(
        "deliveries",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("subscription_id", sa.Text),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("event_id", Uuid, nullable=False),
        sa.Column("event_type", sa.Text, nullable=False),
        sa.Column("target_url", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", Ts, nullable=False),
        sa.Column("last_status_code", sa.Integer),
        sa.Column("last_error", sa.Text),
        sa.Column("last_latency_ms", sa.Integer),
        sa.Column("delivered_at", Ts),
        sa.Column("replay", sa.Boolean, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    # An event reaches a subscription once (replays are deliveries of their own).
    op.create_index("deliveries_once", "deliveries", ["event_id", "subscription_id"], unique=True, schema=S,
                    postgresql_where=sa.text("NOT replay"))
    op.create_index("deliveries_due", "deliveries", ["next_attempt_at"], schema=S,
                    postgresql_where=sa.text("status = 'pending'"))
    op.create_index("deliveries_business_created", "deliveries", ["business_id", sa.text("created_at DESC")],
                    schema=S)
    op.create_table(
        "attempts",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("delivery_id", Uuid, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("status_code", sa.Integer),
        sa.Column("latency_ms", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("attempts_delivery", "attempts", ["delivery_id"], schema=S)
    op.create_table(
        "inbox",
        sa.Column("consumer", sa.Text, primary_key=True),
        sa.Column("event_id", Uuid, primary_key=True),
        sa.Column("processed_at", Ts, server_default=sa.func.now(), nullable=False),
        schema=S,
    )


def downgrade() -> None:
    for table in ("inbox", "attempts", "deliveries", "events", "subscriptions"):
        op.drop_table(table, schema=S)
