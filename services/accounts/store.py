"""Tables of the accounts schema and the queries on them."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from core.inbox import inbox_table
from core.outbox import outbox_table

SCHEMA = "accounts"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

users = sa.Table(
    "users", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("email", sa.Text, nullable=False, unique=True),
    sa.Column("email_confirmed_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
)

businesses = sa.Table(
    "businesses", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("lifecycle_state", sa.Text, nullable=False),
    sa.Column("metadata", JSONB, nullable=False),
    sa.Column("external_ref", sa.Text),
    sa.Column("business_type", sa.Text),
    sa.Column("website", sa.Text),
    sa.Column("phone_forward_to", sa.Text),
    sa.Column("plan_id", sa.Text, nullable=False),
    sa.Column("subscription_status", sa.Text, nullable=False),
    sa.Column("trial_ends_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

api_keys = sa.Table(
    "api_keys", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id)),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("prefix", sa.Text, nullable=False),
    sa.Column("key_hash", sa.Text, nullable=False, unique=True),
    sa.Column("scopes", ARRAY(sa.Text), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("last_used_at", Ts),
    sa.Column("expires_at", Ts),
    sa.Column("revoked_at", Ts),
)

magic_links = sa.Table(
    "magic_links", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("used_at", Ts),
)

sessions = sa.Table(
    "sessions", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
)

signup_attempts = sa.Table(
    "signup_attempts", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("client_ip", sa.Text, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
)

usage_log = sa.Table(
    "usage_log", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, nullable=False),
    sa.Column("business_id", Uuid),
    sa.Column("api_key_id", Uuid, nullable=False),
    sa.Column("endpoint", sa.Text, nullable=False),
    sa.Column("method", sa.Text, nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("call_id", sa.Text),
    sa.Column("cost_cents", sa.Integer, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
)

sa.Index("businesses_account_created", businesses.c.account_id, businesses.c.created_at.desc())
sa.Index("api_keys_account", api_keys.c.account_id)
sa.Index("signup_attempts_ip_time", signup_attempts.c.client_ip, signup_attempts.c.created_at)
sa.Index("usage_log_account_created", usage_log.c.account_id, usage_log.c.created_at.desc())

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
