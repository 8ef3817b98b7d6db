"""Typed records the sdr repositories return for leads, communication runs and their touches, and bookings (frozen
dataclasses, not rows): ids are strings, JSON columns dicts. The pipeline's repository (pipeline_repository.py) and
the analytics' aggregates still return rows."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# -- leads ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedLead:
    """A lead as the list shows it (store.PAGE_COLUMNS): what a lead reply carries."""

    id: str
    business_id: str
    status: str
    source: str
    score: int
    score_confidence: str
    score_explanation: str
    score_factors: list[str]
    interaction_count: int
    created_at: datetime
    updated_at: datetime
    converted_at: datetime | None
    last_inbound_at: datetime | None
    email_known_at: datetime | None
    # domain.LEAD_OUT
    name: str | None
    first_name: str | None
    last_name: str | None
    email: str | None
    phone: str | None
    zip: str | None
    address: str | None
    city: str | None
    state: str | None
    source_url: str | None
    source_page: str | None
    notes: str | None
    message: str | None
    event_date: str | None
    event_type: str | None
    agent_name: str | None
    agent_id: str | None


@dataclass(frozen=True)
class Lead(ListedLead):
    """A lead as stored (schema.leads)."""

    intent: str | None
    last_activity_at: datetime
    touch_count: int
    last_touch_at: datetime | None
    paused: bool
    last_inbound_call_at: datetime | None
    first_inbound_at: datetime | None
    pipeline_segment: int | None
    pipeline_next: str | None
    pipeline_until: datetime
    pipeline_stamp: int


@dataclass(frozen=True)
class Voicemail:
    """A voicemail left for a business (schema.voicemails)."""

    id: str
    business_id: str
    lead_id: str | None
    call_id: str | None
    from_number: str | None
    transcript: str | None
    recording_url: str | None
    received_at: datetime


# -- communication runs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """A communication run as stored (schema.runs): `retry` is its RetryPolicy.to_json()."""

    id: str
    business_id: str
    account_id: str
    external_ref: str
    idempotency_key: str
    request_hash: str
    status: str
    agent_id: str
    retry: dict[str, Any]
    touches: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class Job:
    """A run's job, one touch (schema.jobs)."""

    id: str
    run_id: str
    business_id: str
    touch_index: int
    touch_id: str
    channel: str
    phone: str
    timezone: str | None
    agent_id: str
    context: dict[str, Any]
    scheduled_at: datetime
    due_at: datetime
    status: str
    attempts: int
    rule: str | None
    code: str | None
    reason: str | None
    call_id: str | None
    message_id: str | None
    lease_token: str | None
    lease_until: datetime | None
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class ListedJob(Job):
    """A job with its run's external_ref (the job list; what a touch's events carry)."""

    external_ref: str


@dataclass(frozen=True)
class JobInRun(ListedJob):
    """A job with its run's retry policy and status (a touch's call ended: runs_outcomes)."""

    retry: dict[str, Any]
    run_status: str


@dataclass(frozen=True)
class ClaimedJob(JobInRun):
    """A job the scheduler claimed: with its run's account and the business's own calling hours (None when it
    saved no SDR config)."""

    account_id: str
    business_hours_start: int | None
    business_hours_end: int | None


@dataclass(frozen=True)
class Attempt:
    """A call placed for a job (schema.attempts)."""

    id: str
    job_id: str
    run_id: str
    business_id: str
    attempt: int
    call_id: str | None
    phone: str
    status: str
    retry_eligible: bool
    reason: str | None
    next_attempt_at: datetime | None
    created_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class ListedAttempt(Attempt):
    """An attempt with its job's touch_id and its run's external_ref (the attempt list)."""

    touch_id: str
    external_ref: str


# -- bookings -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SavedAvailability:
    """A business's availability as it saved it (schema.availability)."""

    business_id: str
    weekly_hours: dict[str, Any]
    slot_minutes: int
    buffer_minutes: int
    blackout_dates: list[str]
    horizon_days: int
    updated_at: datetime


@dataclass(frozen=True)
class Booking:
    """An appointment (schema.bookings)."""

    id: str
    business_id: str
    starts_at: datetime
    ends_at: datetime
    status: str
    name: str
    phone_number: str
    email: str | None
    notes: str | None
    lead_id: str | None
    call_id: str | None
    created_at: datetime
    updated_at: datetime
