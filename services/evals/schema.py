"""The evals schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from core.columns import Ts, Uuid
from core.leases import lease_columns

SCHEMA = "evals"
metadata = sa.MetaData(schema=SCHEMA)

scenarios = sa.Table(
    "scenarios", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("provider_eval_id", sa.Text, nullable=False, unique=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("messages", JSONB, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # One writer at a time while the provider's mirror is changed (core.leases).
    *lease_columns(),
    sa.Index("scenarios_agent_created", "agent_id", "created_at"),
    sa.Index("scenarios_business_created", "business_id", "created_at"),
)

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("eval_id", Uuid, nullable=False),  # the scenario (kept when the scenario is deleted)
    sa.Column("eval_name", sa.Text, nullable=False),
    sa.Column("batch_id", Uuid),  # the fan-out it belongs to
    sa.Column("provider_run_id", sa.Text, unique=True),  # null until the provider takes the run
    sa.Column("status", sa.Text, nullable=False),  # domain.RUN_STATUSES
    sa.Column("passed", sa.Boolean),
    sa.Column("results", JSONB, nullable=False),
    sa.Column("ended_reason", sa.Text),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("ended_at", Ts),
    sa.Column("trigger", sa.Text, nullable=False, server_default="request"),  # domain.TRIGGERS
    sa.Column("channel", sa.Text),  # an eval gate's run: the agent channel whose new configuration it tested
    # The tool calls the assistant made in the ended run (domain.tool_calls_made): [{turn, name, arguments}].
    sa.Column("stubbed_tool_calls", JSONB, nullable=False, server_default="[]"),
    # The replica driving an unfinished run (run_service): its id and until when; another takes it over after.
    *lease_columns(),
    # When its holder began submitting it (null: never): a taker-over looks for the provider's run before submitting.
    sa.Column("submitting_at", Ts),
    sa.Index("runs_agent_created", "agent_id", "created_at"),
    sa.Index("runs_business_created", "business_id", "created_at", "id"),  # a business's export, newest first
    sa.Index("runs_unfinished", "lease_until", postgresql_where=sa.text("status <> 'ended'")),
)
