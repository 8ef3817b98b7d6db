"""Call rules as plain functions: the statuses and their moves, what a new call may ask for, the enrichment
variables, the recording disclosure, and what the provider's status updates and reports change on a call."""
from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import phonenumbers
from phonenumbers import timezone as number_timezones

from contracts.calls import (
    DEFAULT_MAX_DURATION,
    MAX_DURATION_BOUNDS,
    OUTCOMES,
    PROGRESS,
    TRANSCRIPT_DAYS,
)
from core import text
from core.compliance import recording_rules as recording
from core.errors import invalid
from core.urls import split_url
from providers.voice.port import CallReport, Outcome, RecordingConsent, StatusUpdate
from switchboard.v1 import calls_pb2

if TYPE_CHECKING:
    from services.calls.ports import Lead
    from services.calls.records import Call

REFERENCE_MAX = 200

_RANK = {**{s: i for i, s in enumerate(PROGRESS)}, **{s: len(PROGRESS) for s in OUTCOMES}}


def is_final(status: str) -> bool:
    return status in OUTCOMES


EITHER_WAY = frozenset({"in-progress", "forwarding"})


def moves_forward(current: str, new: str, at: datetime | None = None, current_at: datetime | None = None) -> bool:
    """Whether a call in `current` (since `current_at`) may take `new` as of `at` (never backwards, never from one
    outcome to another; between in-progress and forwarding, only a later message)."""
    if {current, new} == EITHER_WAY:
        return at is not None and (current_at is None or at > current_at)
    return _RANK[new] > _RANK[current]


def outcome(reported: Outcome | None, reached: str) -> str:
    """The outcome of a call that ended as the provider reports it (`reported`: None when it does not know),
    having got as far as status `reached`: an unknown end is completed if the call was answered, else failed."""
    if reported is not None:
        return reported
    return "completed" if _RANK.get(reached, 0) >= _RANK["in-progress"] else "failed"


# -- a new outbound call ---------------------------------------------------------------------------

def other_party(call: Call) -> str | None:
    """The number of the person the call is with: the caller of an inbound call (None when withheld), the callee of
    an outbound one."""
    return call.from_number if call.direction == "inbound" else call.to_number


def check_max_duration(value: int | None) -> int:
    if value is None:
        return DEFAULT_MAX_DURATION
    low, high = MAX_DURATION_BOUNDS
    if not low <= value <= high:
        raise invalid(f"max_duration must be between {low} and {high} seconds")
    return value


def check_webhook_url(url: str | None) -> str | None:
    """Only its form here: the webhooks dispatcher checks where it resolves at every delivery."""
    if url is None:
        return None
    parsed = split_url(url, "webhook_url")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise invalid("webhook_url must be an http(s) URL such as https://example.com/hooks/calls")
    return url


def check_idempotency_key(key: str | None) -> str | None:
    return None if key is None else text.check_idempotency_key(key)


def request_hash(fields: dict[str, Any]) -> str:
    """What makes two requests under one idempotency key the same request."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


# -- enrichment --------------------------------------------------------------------------------

def time_of_day(e164: str, now: datetime) -> str:
    """morning (5-12), afternoon (12-17) or evening, in the callee's local time: the first time zone
    libphonenumber gives the number, UTC when it knows none."""
    zones = number_timezones.time_zones_for_number(phonenumbers.parse(e164, None))
    try:
        local = now.astimezone(ZoneInfo(zones[0])) if zones and zones[0] != "Etc/Unknown" else now
    except ZoneInfoNotFoundError:
        local = now
    if 5 <= local.hour < 12:
        return "morning"
    return "afternoon" if 12 <= local.hour < 17 else "evening"


def first_name(name: str | None) -> str | None:
    return name.split()[0] if name and name.split() else None


def enrichment(*, to: str, now: datetime, name: str | None, lead: dict[str, Any] | None, business_name: str | None,
               business_phone: str | None) -> dict[str, Any]:
    """The SPEC's enrichment variables. `lead` (when one is linked) has name, first_name, score, status,
    interaction_count, source and created_at; the request's name wins over the lead's."""
    variables = {"name": first_name(name) or (lead and (lead.get("first_name") or first_name(lead.get("name")))),
                 "business_name": business_name, "business_phone": business_phone,
                 "time_of_day": time_of_day(to, now)}
    if lead:
        variables.update(lead_score=lead["score"], lead_status=lead["status"],
                         interaction_count=lead.get("interaction_count", 0), lead_source=lead["source"],
                         days_since_first_contact=max(0, (now - lead["created_at"]).days))
    return {k: v for k, v in variables.items() if v is not None}


# -- the recording disclosure ---------------------------------------------------------------------

def recording_disclosure(states: list[str], setting: recording.Setting,
                         outbound: bool) -> tuple[dict[str, Any], recording.Setting | None]:
    """(what the call record keeps of the call's recording disclosure, the disclosure the provider speaks first:
    None when it is not spoken) for a call whose other party may be in `states`, under the agent's `setting`."""
    decided = recording.disclosure(states, setting.mode)
    kept = {**decided.record(), "consent_type": setting.consent if decided.spoken else None}
    return kept, setting if decided.spoken else None


def recording_consent(consent: RecordingConsent | None) -> dict[str, Any] | None:
    """What the call record keeps of the other party's answer to the disclosure: its type and when consent was
    granted (None: they declined or hung up first); None when the report says nothing."""
    if consent is None:
        return None
    return {"type": consent.type, "granted_at": consent.granted_at.isoformat() if consent.granted_at else None}


# -- the provider's messages -----------------------------------------------------------------------

def after_status(status: str, answered: bool, reported: bool, status_at: datetime | None,
                 update: StatusUpdate) -> dict[str, Any]:
    """The changes a status update makes to a call (none when it would move it backwards)."""
    new, at = update.status, update.at
    if new not in PROGRESS or reported or not moves_forward(status, new, at, status_at):
        return {}
    changes = {"status": new, "answered": answered or new == "in-progress", "status_at": at}
    if new == "forwarding" and update.forwarded_to:
        changes["forwarded_to"] = update.forwarded_to
    return changes


def after_report(status: str, answered: bool, reported: bool, report: CallReport) -> dict[str, Any]:
    """The changes an end-of-call report makes: the outcome (unless one is already final), what was said and
    extracted, the timing and the cost. A report is applied once."""
    if reported:
        return {}
    reached = "in-progress" if answered else status
    structured = dict(report.structured_data) if report.structured_data is not None else None
    changes: dict[str, Any] = {
        "ended_reason": report.ended_reason, "transcript": report.transcript, "recording_url": report.recording_url,
        "summary": report.summary, "structured_data": structured, "started_at": report.started_at,
        "ended_at": report.ended_at, "cost_cents": report.cost_cents,
        "recording_consent": recording_consent(report.recording_consent), "quality_dimensions": quality(structured)}
    if not is_final(status):
        changes["status"] = outcome(report.outcome, reached)
    # A conversation or a voicemail means someone (or a box) answered, even if that status update never came.
    talked = answered or changes.get("status") in ("completed", "voicemail")
    if talked and not answered:
        changes["answered"] = True
    if talked and report.started_at and report.ended_at:
        changes["duration"] = max(0, int((report.ended_at - report.started_at).total_seconds()))
    return changes


def events_of_move(before: str, after: str, was_answered: bool, answered: bool) -> list[str]:
    """The event types a change of a call emits: call.started when it is answered, and call.completed (a
    conversation or a voicemail box) or call.failed (failed, no-answer, busy, canceled) when it reaches its outcome."""
    events = ["call.started"] if answered and not was_answered else []
    if is_final(after) and not is_final(before):
        events.append("call.completed" if after in ("completed", "voicemail") else "call.failed")
    return events


QUALITY_DIMENSIONS = tuple(calls_pb2.QualityDimensions.DESCRIPTOR.fields_by_name)
QUALITY_RANGE = (1, 10)


def quality(structured_data: dict[str, Any] | None) -> dict[str, Any] | None:
    """The call's quality scores from the agent's analysis: all four dimensions as integers 1-10, else None."""
    scores = (structured_data or {}).get("quality_dimensions")
    if not isinstance(scores, dict):
        return None
    low, high = QUALITY_RANGE
    if not all(isinstance(scores.get(d), int) and not isinstance(scores.get(d), bool) and low <= scores[d] <= high
               for d in QUALITY_DIMENSIONS):
        return None
    return {d: scores[d] for d in QUALITY_DIMENSIONS}


# -- transcripts ---------------------------------------------------------------------------------

SPEAKERS = {"AI": "Agent", "Assistant": "Agent", "Bot": "Agent", "User": "Caller", "Customer": "Caller"}


def check_days(days: int | None) -> int:
    default, maximum = TRANSCRIPT_DAYS
    if days is None:
        return default
    if not 1 <= days <= maximum:
        raise invalid(f"days must be between 1 and {maximum}")
    return days


def agent_caller_lines(transcript: str) -> str:
    """The provider's transcript ("AI: ..." / "User: ..." lines) with our speaker names."""
    lines = []
    for line in transcript.splitlines():
        speaker, sep, said = line.partition(":")
        lines.append(f"{SPEAKERS[speaker.strip()]}:{said}" if sep and speaker.strip() in SPEAKERS else line)
    return "\n".join(lines)


def collected(structured_data: dict[str, Any] | None) -> dict[str, Any]:
    """The contact details and intent the agent's lead-collection plan extracted (text values only)."""
    data = structured_data or {}
    return {k: data[k].strip() for k in ("name", "email", "intent") if isinstance(data.get(k), str) and data[k].strip()}


# -- recordings ----------------------------------------------------------------------------------


def recording_signature(secret: str, call_id: str, expires: int) -> str:
    return hmac.new(secret.encode(), f"{call_id}.{expires}".encode(), hashlib.sha256).hexdigest()


def recording_refusal(secret: str, call_id: str, expires: int, signature: str, now: float) -> str | None:
    """Why a recording URL is not honoured (tampered or expired), or None."""
    if not hmac.compare_digest(recording_signature(secret, call_id, expires), signature):
        return "this recording link is not one we signed; ask for a new recording link"
    if expires < now:
        return "this recording link has expired; ask for a new recording link"
    return None


def media_status(reported: bool, present: bool) -> str:
    """available, pending (the end-of-call report, which brings it, is still to come) or none."""
    if present:
        return "available"
    return "none" if reported else "pending"


def transcript_refusal(status: str, reported: bool, present: bool) -> str | None:
    """Why a call's transcript cannot be read yet (None when it can)."""
    if present:
        return None
    if reported:
        return f"this call ({status}) ended without a transcript"
    return (f"this call is {status}; its transcript comes with the provider's end-of-call report, once the call "
            "has ended")


def lead_facts(lead: Lead) -> dict[str, Any]:
    """What enrichment reads of a lead (services.calls.ports.Lead)."""
    return {"name": lead.name, "first_name": lead.first_name, "score": lead.score, "status": lead.status,
            "interaction_count": lead.interaction_count, "source": lead.source, "created_at": lead.created_at}


@dataclass(frozen=True)
class CallFilter:
    """Which calls a list shows (each one unset: any): of one agent, in one status, of one direction, created at or
    after `created_from` and before `created_before`."""

    agent_id: str | None = None
    status: str | None = None
    direction: str | None = None
    created_from: datetime | None = None
    created_before: datetime | None = None
EVERY_CALL = CallFilter()
