"""The agents schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from core.columns import Ts, Uuid
from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table

SCHEMA = "agents"
metadata = sa.MetaData(schema=SCHEMA)

agents = sa.Table(
    "agents", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("provider_assistant_id", sa.Text, nullable=False, unique=True),
    # domain.AgentConfig without the name: prompts, greetings, voice, model, provider settings.
    sa.Column("config", JSONB, nullable=False),
    sa.Column("metadata", JSONB, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    # Who last wrote the inbound prompt (create, update, persona, rollback): the owner-edit guard reads it.
    sa.Column("inbound_prompt_source", sa.Text, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # One configuration writer at a time while the provider assistant is synced (core.leases).
    *lease_columns(),
    # Set by a creator that may retry (CreateAgentRequest.request_id): one agent per request in a business.
    sa.Column("request_id", sa.Text),
    # Opt-in: a change of what the agent says first runs its eval scenarios against the new configuration.
    sa.Column("eval_gate", sa.Boolean, nullable=False, server_default=sa.false()),
    # The secret that signs the requests of the agent's custom tools (made with its first custom tool), sealed
    # (core.sealing.SecretBox) and kept out of the versioned config; after a rotation the previous one signs too
    # until tool_secret_previous_expires_at.
    sa.Column("tool_secret_sealed", sa.Text),
    sa.Column("tool_secret_tail", sa.Text),
    sa.Column("tool_secret_previous_sealed", sa.Text),
    sa.Column("tool_secret_previous_expires_at", Ts),
    sa.Index("agents_business_created", "business_id", "created_at"),
    sa.Index("agents_request_once", "business_id", "request_id", unique=True,
             postgresql_where=sa.text("request_id IS NOT NULL")),
)

agent_versions = sa.Table(
    "agent_versions", metadata,
    sa.Column("agent_id", Uuid, sa.ForeignKey(agents.c.id, ondelete="CASCADE"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("content_hash", sa.Text, nullable=False),
    sa.Column("config_snapshot", JSONB, nullable=False),  # redacted
    sa.Column("parent_version", sa.Integer),
    sa.Column("rollback_of", sa.Integer),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("changed_fields", ARRAY(sa.Text), nullable=False),
    sa.Column("api_key_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    # The eval gate's outcome for this change: {status: passed|no_scenarios|forced, batch_id?, total?, ...}.
    sa.Column("eval_gate", JSONB),
)

# Audit history of prompt changes (one row per changed prompt field).
prompt_history = sa.Table(
    "prompt_history", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("agent_id", Uuid, sa.ForeignKey(agents.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("field", sa.Text, nullable=False),
    sa.Column("previous", sa.Text),
    sa.Column("current", sa.Text),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("api_key_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    sa.Index("prompt_history_agent", "agent_id", "created_at"),
)

# Every number the platform holds: in the pool while business_id is null.
phone_numbers = sa.Table(
    "phone_numbers", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("phone_number", sa.Text, nullable=False, unique=True),
    sa.Column("country", sa.Text, nullable=False),
    sa.Column("area_code", sa.Text, nullable=False),
    sa.Column("locality", sa.Text),
    sa.Column("capabilities", JSONB, nullable=False),
    sa.Column("blocked", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("block_reason", sa.Text),
    sa.Column("a2p_status", sa.Text, nullable=False),
    sa.Column("emergency_status", sa.Text, nullable=False),
    sa.Column("emergency_address", sa.Text),
    sa.Column("business_id", Uuid),
    sa.Column("agent_id", Uuid, sa.ForeignKey(agents.c.id, ondelete="SET NULL")),
    sa.Column("provider_phone_number_id", sa.Text),
    sa.Column("assigned_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    # Ring-first forwarding (both set or neither): offered to forward_to for ring_seconds, then the agent answers.
    sa.Column("forward_to", sa.Text),
    sa.Column("ring_seconds", sa.Integer),
    # A number bought from the SMS provider (services.agents.stock): its reference there (Twilio's PN sid), which
    # releases it; None for the pool file's numbers. pooled_at: when it last went (back) into the pool (None: when
    # it was added), so that one left free too long is given back.
    sa.Column("provider_ref", sa.Text),
    sa.Column("pooled_at", Ts),
    sa.CheckConstraint("(forward_to IS NULL) = (ring_seconds IS NULL)", name="phone_numbers_forwarding_whole"),
    # One assign, re-point or release at a time while the provider number changes (core.leases).
    *lease_columns(),
    sa.Index("phone_numbers_business", "business_id"),
    sa.Index("phone_numbers_pool", "country", "area_code", postgresql_where=sa.text("business_id IS NULL")),
)

# Where the pool keeps a stock of numbers bought from the SMS provider: a country and area code ("": anywhere in the
# country) someone asked for and found none free (the purchase request, `requested`), or took a number of. The
# stock job (services.agents.stock) refills each while demand_at is recent, under the row's lease, and notes how it
# went: `stocked`, or `unavailable` with the provider's answer in message.
number_stock = sa.Table(
    "number_stock", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("country", sa.Text, nullable=False),
    sa.Column("area_code", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("requested_at", Ts, nullable=False),
    sa.Column("demand_at", Ts, nullable=False),
    sa.Column("checked_at", Ts),
    sa.Column("message", sa.Text),
    *lease_columns(),
    sa.UniqueConstraint("country", "area_code", name="number_stock_place"),
)

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
