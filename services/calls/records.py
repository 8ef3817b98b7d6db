"""Typed records the calls repository returns (frozen dataclasses, not rows)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Call:
    """A call as stored (schema.calls): ids are strings, JSON columns dicts."""

    id: str
    business_id: str
    agent_id: str
    agent_name: str | None
    lead_id: str | None
    direction: str
    status: str
    to_number: str
    from_number: str | None
    name: str | None
    context: str | None
    first_message: str | None
    max_duration: int
    webhook_url: str | None
    compliance: str
    variables: dict[str, Any]
    provider_call_id: str | None
    ended_reason: str | None
    duration: int
    summary: str | None
    recording_url: str | None
    quality_dimensions: dict[str, Any] | None
    answered: bool
    transcript: str | None
    structured_data: dict[str, Any] | None
    cost_cents: int
    started_at: datetime | None
    ended_at: datetime | None
    reported_at: datetime | None
    status_at: datetime | None
    forwarded_to: str | None
    external_ref: str | None
    touch_id: str | None
    recording_disclosure: dict[str, Any] | None
    recording_consent: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    erased_at: datetime | None = None  # a privacy erasure redacted it (services.calls.erasure)


@dataclass(frozen=True)
class KeyClaim:
    """An idempotency key's claim as stored (schema.idempotency_keys): the request that claimed it (its hash), the
    call recorded for it (None until that is recorded queued), and whether that request is still placing it (its
    lease is not released; it may have lapsed)."""

    request_hash: str
    call_id: str | None
    placing: bool = False


@dataclass(frozen=True)
class ToolCallRecord:
    """A tool call of the model during a call as stored (schema.tool_calls): result and duration_ms are None while
    it runs."""

    call_id: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None
    outcome: str
    duration_ms: int | None
    created_at: datetime
