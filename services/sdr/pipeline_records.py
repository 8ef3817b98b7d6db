"""Typed records the pipeline repository returns (frozen dataclasses, not rows). The leads it reads stay rows: the
pipeline turns them into signals by position, at up to 100,000 leads a read (pipeline_service.pipeline_lead)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class SavedConfig:
    """A business's SDR config as stored (schema.configs; pipeline_domain.Config holds the same settings)."""

    business_id: str
    enabled: bool
    min_touch_gap_hours: int
    max_touches: int
    auto_call: bool
    auto_email: bool
    auto_sms: bool
    sdr_agent_id: str | None
    business_hours_start: int
    business_hours_end: int
    email_from_account_id: str | None
    updated_at: datetime


@dataclass(frozen=True)
class Activity:
    """An entry of the activity log as stored (schema.activity): a touch (pending, done or failed) or a choice."""

    id: str
    business_id: str
    lead_id: str
    action: str
    status: str
    detail: str
    touch_number: int | None
    reference: str | None
    origin: str
    window_id: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ActivityCount:
    """How many activity entries of one action have one status."""

    action: str
    status: str
    count: int


@dataclass(frozen=True)
class Window:
    """A business's scheduled run of one window as stored (schema.windows)."""

    id: str
    business_id: str
    window_start: datetime
    status: str
    lease_token: str | None
    lease_until: datetime | None
    attempts: int
    started_at: datetime
    ended_at: datetime | None
