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
    lease_token: str | None
    lease_until: datetime | None
