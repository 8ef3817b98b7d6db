"""The webhooks schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from core.columns import Ts, Uuid
from core.inbox import inbox_table

SCHEMA = "webhooks"
metadata = sa.MetaData(schema=SCHEMA)

subscriptions = sa.Table(
    "subscriptions", metadata,
    sa.Column("id", sa.Text, primary_key=True),  # wh_<hex>
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("events", ARRAY(sa.Text), nullable=False),
    sa.Column("description", sa.Text),
    sa.Column("is_active", sa.Boolean, nullable=False),
    sa.Column("secret_sealed", sa.Text, nullable=False),  # core.sealing.SecretBox
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
)

# Every event of the platform, kept for reading, replay and backfill.
events = sa.Table(
    "events", metadata,
    sa.Column("event_id", Uuid, primary_key=True),
    sa.Column("type", sa.Text, nullable=False),
    sa.Column("business_id", Uuid),
    sa.Column("occurred_at", Ts, nullable=False),
    sa.Column("data", JSONB, nullable=False),
)

deliveries = sa.Table(
    "deliveries", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("subscription_id", sa.Text),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("event_id", Uuid, nullable=False),
    sa.Column("event_type", sa.Text, nullable=False),
    # Set for one-off targets (a call's own webhook_url); otherwise the subscription's URL.
    sa.Column("target_url", sa.Text),
    sa.Column("status", sa.Text, nullable=False),  # pending, delivered, failed, canceled
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("next_attempt_at", Ts, nullable=False),
    sa.Column("last_status_code", sa.Integer),
    sa.Column("last_error", sa.Text),
    sa.Column("last_latency_ms", sa.Integer),
    sa.Column("delivered_at", Ts),
    sa.Column("replay", sa.Boolean, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
)

attempts = sa.Table(
    "attempts", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("delivery_id", Uuid, nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("status_code", sa.Integer),
    sa.Column("latency_ms", sa.Integer, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("at", Ts, nullable=False),
)

# The secret that signs a business's per-call webhooks (deliveries with a target_url and no subscription); the
# columns are a subscription's, so the same signing code reads either.
call_secrets = sa.Table(
    "call_secrets", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("secret_sealed", sa.Text, nullable=False),
    sa.Column("secret_tail", sa.Text, nullable=False),
    sa.Column("previous_secret_sealed", sa.Text),
    sa.Column("previous_secret_expires_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

sa.Index("events_business_occurred", events.c.business_id, events.c.occurred_at.desc())
sa.Index("deliveries_once", deliveries.c.event_id, deliveries.c.subscription_id, unique=True,
         postgresql_where=sa.text("NOT replay"))
sa.Index("deliveries_due", deliveries.c.next_attempt_at, postgresql_where=sa.text("status = 'pending'"))
sa.Index("deliveries_business_created", deliveries.c.business_id, deliveries.c.created_at.desc())
# An event's deliveries, replays too (the retention a business set: services.webhooks.data_retention).
sa.Index("deliveries_event", deliveries.c.event_id)
sa.Index("attempts_delivery", attempts.c.delivery_id)
# The retention sweep's scan (services.webhooks.retention).
sa.Index("deliveries_finished", deliveries.c.created_at, postgresql_where=sa.text("status <> 'pending'"))

inbox = inbox_table(metadata, SCHEMA)
