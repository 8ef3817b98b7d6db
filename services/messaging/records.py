"""What the messaging repositories return (services.messaging.repositories, and their twins in tests/memory): frozen
records of the columns the use cases and the servicer read, never the database's rows."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from services.messaging.domain import ConsentEvidence


@dataclass(frozen=True)
class Message:
    """A text on its thread (schema.messages), inbound or outbound."""

    id: str
    conversation_id: str
    business_id: str
    direction: str  # inbound, outbound
    from_number: str
    to_number: str
    body: str
    status: str  # domain.STATUSES
    provider_sid: str | None
    error_code: str | None
    error_message: str | None
    agent_id: str | None
    lead_id: str | None
    created_at: datetime
    updated_at: datetime
    idempotency_key: str | None
    external_ref: str | None
    touch_id: str | None
    status_check_due: datetime | None
    status_checks: int


@dataclass(frozen=True)
class LoggedDecision:
    """A compliance decision as logged (schema.compliance_decisions): what was decided on which touch, and why."""

    id: str
    business_id: str
    channel: str  # call, sms
    phone: str
    lead_id: str | None
    outcome: str  # allow, defer, refuse
    rule: str
    source: str
    code: str | None
    message: str
    not_before: datetime | None
    actor: str
    reference: str | None
    inputs: dict[str, Any]
    decided_at: datetime


@dataclass(frozen=True)
class Conversation:
    """A thread of a business number and a contact (schema.conversations), with its latest message's preview."""

    id: str
    business_id: str
    business_number: str
    contact_number: str
    agent_id: str | None
    lead_id: str | None
    inbound_count: int
    outbound_count: int
    unread_count: int
    last_message_at: datetime
    last_message_id: str | None
    created_at: datetime
    last_body: str | None  # the latest message's
    last_direction: str | None
    last_status: str | None


@dataclass(frozen=True)
class ConsentEvent:
    """One piece of a phone's consent evidence with a business (schema.consent_events, append-only)."""

    id: int
    business_id: str
    phone: str
    kind: str  # domain.CONSENT_KINDS
    source: str  # api, keyword, inbound_text, inbound_call, call_request, provider
    actor: str | None
    reference: str | None
    note: str | None
    created_at: datetime


@dataclass(frozen=True)
class DncEntry:
    """A phone on a business's do-not-call list (schema.dnc_entries); taken off, it keeps why and when."""

    id: str
    business_id: str
    phone: str
    reason: str | None
    added_by: str | None
    created_at: datetime
    removed_at: datetime | None
    removed_reason: str | None
    removed_by: str | None


class National(NamedTuple):
    """What the registry's loaded data says of a number whose area code was imported."""

    refreshed_at: datetime  # its area code's
    listed: bool


@dataclass(frozen=True)
class CalleeFacts:
    """What the messaging service keeps of a phone, for one business: what its compliance standing is made of."""

    listed_since: datetime | None  # on the business's do-not-call list since (None: not listed)
    consent: list[ConsentEvidence]  # its consent history, oldest first
    national: National | None  # the national registry's loaded data (None: its area code was never imported)
