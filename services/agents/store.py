"""Tables of the agents schema."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table

SCHEMA = "agents"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

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
    sa.Index("agents_business_created", "business_id", "created_at"),
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
    # One assign, re-point or release at a time while the provider number changes (core.leases).
    *lease_columns(),
    sa.Index("phone_numbers_business", "business_id"),
    sa.Index("phone_numbers_pool", "country", "area_code", postgresql_where=sa.text("business_id IS NULL")),
)

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
