"""Typed records the agents repositories return (frozen dataclasses, not rows)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class CallerNumber:
    """An agent's first assigned number: the one its outbound calls and texts come from."""

    phone_number: str
    provider_phone_number_id: str | None


@dataclass(frozen=True)
class Agent:
    """An agent as stored (schema.agents): ids are strings, JSON columns dicts."""

    id: str
    business_id: str
    name: str
    status: str
    provider_assistant_id: str
    config: dict[str, Any]
    metadata: dict[str, Any]
    version: int
    inbound_prompt_source: str
    created_at: datetime
    updated_at: datetime
    lease_token: str | None
    lease_until: datetime | None
    request_id: str | None
    eval_gate: bool
    tool_secret_sealed: str | None
    tool_secret_tail: str | None
    tool_secret_previous_sealed: str | None
    tool_secret_previous_expires_at: datetime | None


@dataclass(frozen=True)
class AgentSummary:
    """An agent as lists and lookups show it (store.SUMMARY's columns)."""

    id: str
    name: str
    business_id: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class Version:
    """One version of an agent's configuration as stored (schema.agent_versions); the snapshot is redacted."""

    agent_id: str
    version: int
    business_id: str
    content_hash: str
    config_snapshot: dict[str, Any]
    parent_version: int | None
    rollback_of: int | None
    source: str
    changed_fields: list[str]
    api_key_id: str | None
    created_at: datetime
    eval_gate: dict[str, Any] | None


@dataclass(frozen=True)
class PhoneNumber:
    """A number of the pool as stored (schema.phone_numbers), held by a business or free."""

    id: str
    phone_number: str
    country: str
    area_code: str
    locality: str | None
    capabilities: dict[str, Any]
    blocked: bool
    block_reason: str | None
    a2p_status: str
    emergency_status: str
    emergency_address: str | None
    business_id: str | None
    agent_id: str | None
    provider_phone_number_id: str | None
    assigned_at: datetime | None
    created_at: datetime
    forward_to: str | None
    ring_seconds: int | None
    provider_ref: str | None
    pooled_at: datetime | None
    lease_token: str | None
    lease_until: datetime | None


@dataclass(frozen=True)
class StockPlace:
    """A country and area code ("": anywhere in the country) the pool keeps bought numbers in (schema.number_stock):
    `state` requested, stocked or unavailable (`message` says why)."""

    id: str
    country: str
    area_code: str
    state: str
    requested_at: datetime
    demand_at: datetime
    checked_at: datetime | None
    message: str | None
    lease_token: str | None
    lease_until: datetime | None


@dataclass(frozen=True)
class NumberRoute:
    """Who answers a held number: the business and its agent (all of the agent's None when the number has none);
    `recording_disclosure` is the agent's stored setting (None: the defaults)."""

    phone_number: str
    business_id: str
    agent_id: str | None
    agent_name: str | None
    provider_assistant_id: str | None
    recording_disclosure: dict[str, Any] | None


@dataclass(frozen=True)
class NumberCount:
    """How many numbers a business holds."""

    business_id: str
    held: int
