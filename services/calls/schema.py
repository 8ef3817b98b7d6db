"""The calls schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from contracts.calls import PROGRESS
from core.columns import Ts, Uuid
from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table

SCHEMA = "calls"
metadata = sa.MetaData(schema=SCHEMA)

calls = sa.Table(
    "calls", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("agent_name", sa.Text),
    sa.Column("lead_id", Uuid),
    sa.Column("direction", sa.Text, nullable=False),  # inbound, outbound
    sa.Column("status", sa.Text, nullable=False),  # domain.STATUSES
    sa.Column("to_number", sa.Text, nullable=False),
    sa.Column("from_number", sa.Text),
    sa.Column("name", sa.Text),
    sa.Column("context", sa.Text),
    sa.Column("first_message", sa.Text),
    sa.Column("max_duration", sa.Integer, nullable=False),
    sa.Column("webhook_url", sa.Text),
    sa.Column("compliance", sa.Text, nullable=False),  # skip, enforce
    sa.Column("variables", JSONB, nullable=False),
    sa.Column("provider_call_id", sa.Text, unique=True),
    sa.Column("ended_reason", sa.Text),
    sa.Column("duration", sa.Integer, nullable=False, server_default="0"),
    sa.Column("summary", sa.Text),
    sa.Column("recording_url", sa.Text),
    sa.Column("quality_dimensions", JSONB),
    # From the provider's messages: whether anyone answered, what was said and extracted, what it cost.
    sa.Column("answered", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("transcript", sa.Text),
    sa.Column("structured_data", JSONB),
    sa.Column("cost_cents", sa.Integer, nullable=False, server_default="0"),
    sa.Column("started_at", Ts),
    sa.Column("ended_at", Ts),
    sa.Column("reported_at", Ts),  # when the end-of-call report was applied (once)
    # When the provider says the current status began (its message's timestamp); orders in-progress and forwarding.
    sa.Column("status_at", Ts),
    sa.Column("forwarded_to", sa.Text),  # the phone a ring-first (or transferred) call was offered to
    # The communication run touch the call is for: the caller's run reference and touch id (on its events).
    sa.Column("external_ref", sa.Text),
    sa.Column("touch_id", sa.Text),
    # Whether the call opened with the agent's recording disclosure and why (domain.recording_disclosure), and the
    # other party's answer from the end-of-call report ({type, granted_at}; domain.recording_consent).
    sa.Column("recording_disclosure", JSONB),
    sa.Column("recording_consent", JSONB),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # When a privacy erasure redacted the call's personal data (services.calls.erasure): the writers that bring
    # what the other party said or is (the end-of-call report, tool calls) leave such a call as it is.
    sa.Column("erased_at", Ts),
)

# A client's Idempotency-Key, per account, for 24 h: the request it came with (as a hash) and the call it made.
idempotency_keys = sa.Table(
    "idempotency_keys", metadata,
    sa.Column("account_id", Uuid, primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("request_hash", sa.Text, nullable=False),
    # The call recorded for the request: from when it is recorded queued, before the provider is asked.
    sa.Column("call_id", Uuid),
    # The lease of the request placing the call (core.leases; service.py: a retry takes over a lapsed one), released
    # (both null) once the call is placed.
    *lease_columns(),
    sa.Column("created_at", Ts, nullable=False),
)

# The model's calls of the agent's tools during a call, one per the provider's tool call id (a retried message finds
# it and answers with its result): claimed as running before the tool runs, its result written after.
tool_calls = sa.Table(
    "tool_calls", metadata,
    sa.Column("call_id", Uuid, sa.ForeignKey(f"{SCHEMA}.calls.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tool_call_id", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("arguments", JSONB, nullable=False),
    sa.Column("result", sa.Text),  # null while it runs
    sa.Column("outcome", sa.Text, nullable=False),  # contracts.calls.TOOL_OUTCOMES
    sa.Column("duration_ms", sa.Integer),
    sa.Column("created_at", Ts, nullable=False),
)

# The claimed rounds of periodic jobs every replica runs (the inbound calls' reconciliation): a replica takes a
# round by moving `due_at` on past it, in one statement, so of any number of replicas one runs each round.
rounds = sa.Table(
    "rounds", metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("due_at", Ts, nullable=False),
)

_newest = (calls.c.created_at.desc(), calls.c.id.desc())
# It carries what analytics counts, so a report reads a window index-only (core.aggregates).
sa.Index("calls_business_created", calls.c.business_id, *_newest, postgresql_include=["agent_id", "status", "duration"])
sa.Index("calls_business_agent", calls.c.business_id, calls.c.agent_id, *_newest)
sa.Index("calls_business_status", calls.c.business_id, calls.c.status, *_newest)
sa.Index("idempotency_keys_created", idempotency_keys.c.created_at)
# The calls still waiting for their outcome (the reaper's scan).
sa.Index("calls_open", calls.c.created_at,
         postgresql_where=sa.text(f"status IN ({', '.join(repr(s) for s in PROGRESS)})"))

# The calls still holding a recording, or a transcript (or its summary), by age: the privacy retention's scans
# (services.calls.data_retention), which thus never revisit what they cleared. (Not structured_data: a JSONB column
# written None holds JSON null, which IS NOT NULL; the report writes it with the summary.)
sa.Index("calls_recorded", calls.c.business_id, calls.c.created_at,
         postgresql_where=sa.text("recording_url IS NOT NULL"))
sa.Index("calls_transcribed", calls.c.business_id, calls.c.created_at,
         postgresql_where=sa.text("transcript IS NOT NULL OR summary IS NOT NULL"))

# The tool calls still running (the tool-call sweep's scan).
sa.Index("tool_calls_running", tool_calls.c.created_at, postgresql_where=sa.text("outcome = 'running'"))

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
