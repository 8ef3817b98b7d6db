"""Typed records the evals repositories return (frozen dataclasses, not rows): ids are strings, JSON columns
lists."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ListedScenario:
    """A scenario as a list shows it (store.LIST_COLUMNS): without its turns and lease."""

    id: str
    business_id: str
    agent_id: str
    provider_eval_id: str
    name: str
    description: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Scenario(ListedScenario):
    """A scenario as stored (schema.scenarios)."""

    messages: list[dict[str, Any]]
    lease_token: str | None
    lease_until: datetime | None


@dataclass(frozen=True)
class Run:
    """An eval run as stored (schema.runs)."""

    id: str
    business_id: str
    agent_id: str
    eval_id: str
    eval_name: str
    batch_id: str | None
    provider_run_id: str | None
    status: str
    passed: bool | None
    results: list[dict[str, Any]]
    ended_reason: str | None
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    trigger: str
    channel: str | None
    stubbed_tool_calls: list[dict[str, Any]]


@dataclass(frozen=True)
class UnfinishedRun(Run):
    """A run not ended, with when its submission began (None: never) and its scenario's mirror at the provider
    (None when the scenario is gone)."""

    submitting_at: datetime | None
    provider_eval_id: str | None
