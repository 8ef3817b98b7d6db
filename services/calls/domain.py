"""Call rules as plain functions: the statuses and their moves, the provider's end reasons, what a new call
may ask for, the enrichment variables and the provider's call body."""
from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
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
from switchboard.v1 import calls_pb2

if TYPE_CHECKING:
    from services.calls.ports import Lead

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


# The provider's endedReason values and the outcome each means; `outcome` decides the rest.
ENDED_REASONS = {
    "customer-did-not-answer": "no-answer",
    "customer-busy": "busy",
    "voicemail": "voicemail",
    "manually-canceled": "canceled",
    "customer-ended-call": "completed",
    "assistant-ended-call": "completed",
    "assistant-said-end-call-phrase": "completed",
    "assistant-forwarded-call": "completed",
    "call.ringing.hook-executed-transfer": "completed",  # ring-first: the transfer hook handed the call on
    "call.forwarding.no-answer": "no-answer",
    "call.forwarding.operator-busy": "busy",
    "exceeded-max-duration": "completed",
    "silence-timed-out": "completed",
}
FAILURE_MARKS = ("error", "failed", "fault", "unavailable", "not-found", "invalid")


def outcome(ended_reason: str | None, reached: str) -> str:
    """The outcome of a call that ended for `ended_reason`, having got as far as status `reached`.
    Error families are failed; an unknown reason is completed if the call was answered, else failed."""
    reason = (ended_reason or "").strip().lower()
    if reason in ENDED_REASONS:
        return ENDED_REASONS[reason]
    if any(mark in reason for mark in FAILURE_MARKS):
        return "failed"
    return "completed" if _RANK.get(reached, 0) >= _RANK["in-progress"] else "failed"


# -- a new outbound call ---------------------------------------------------------------------------

# The provider's customer.name (for its own reference only) takes at most 40 characters: ours may be longer and is
# cut to fit; the enrichment variables carry the name as given.
CUSTOMER_NAME_MAX = 40


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


# Voicemail detection on outbound calls, unless the agent's own settings choose: the provider's default is off, and
# then a voicemail box is talked to like a person and the call ends completed. This is its recommended detector.
VOICEMAIL_DETECTION = {"provider": "vapi"}


# -- the recording disclosure ---------------------------------------------------------------------

def recording_disclosure(states: list[str], setting: recording.Setting,
                         outbound: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(what the call record keeps of the call's recording disclosure, the provider's compliancePlan that speaks
    it, None when it is not spoken) for a call whose other party may be in `states`, under the agent's `setting`."""
    decided = recording.disclosure(states, setting.mode)
    kept = {**decided.record(), "consent_type": setting.consent if decided.spoken else None}
    return kept, compliance_plan(setting, outbound) if decided.spoken else None


def compliance_plan(setting: recording.Setting, outbound: bool) -> dict[str, Any]:
    """The provider's compliancePlan that speaks the disclosure: its consent plan says the message as a line of its
    own before the call's first message and starts recording once the other party consents (by staying on the
    line, or by saying yes with `verbal`, whose no ends the call: the decline tool). On an outbound call it waits
    for the callee to speak first, as the provider recommends: a line that reports "answered" while still ringing
    would swallow a message spoken at once."""
    plan: dict[str, Any] = {"type": setting.consent, "message": setting.message}
    if outbound:
        plan["firstMessageMode"] = "assistant-waits-for-user"
    if setting.consent == recording.VERBAL:
        plan["declineTool"] = {"type": "endCall"}
    return {"recordingConsentPlan": plan}


def recording_consent(report: dict[str, Any]) -> dict[str, Any] | None:
    """The other party's answer to the disclosure in an end-of-call report (`compliance.recordingConsent`): its type
    and when consent was granted (None: they declined or hung up first); None when the report says nothing."""
    consent = _object(_object(report.get("compliance")).get("recordingConsent"))
    if not consent:
        return None
    granted = _time(consent.get("grantedAt"))
    return {"type": _text(consent.get("type")), "granted_at": granted.isoformat() if granted else None}


def provider_call(*, assistant_id: str, phone_number_id: str, to: str, name: str | None, prompt: str,
                  first_message: str, model: dict[str, Any], context: str | None, max_duration: int,
                  variables: dict[str, Any], call_id: str, server: dict[str, Any],
                  detect_voicemail: bool = True, compliance_plan: dict[str, Any] | None = None) -> dict[str, Any]:
    """The provider's `POST /call` body: the agent's assistant with this call's outbound overrides; `server` is
    where the provider sends the call's messages (providers.voice.vapi.server_messages); `detect_voicemail` False
    leaves voicemail detection to the agent's assistant; `compliance_plan` speaks the recording disclosure
    (`recording_disclosure`)."""
    system = prompt if not context else f"{prompt}\n\nContext for this call: {context}"
    customer = {"number": to, **({"name": name[:CUSTOMER_NAME_MAX]} if name else {})}
    return {
        "assistantId": assistant_id, "phoneNumberId": phone_number_id, "customer": customer,
        "assistantOverrides": {
            "firstMessage": first_message, "maxDurationSeconds": max_duration,
            "model": {**model, "messages": [{"role": "system", "content": system}]},
            "variableValues": {**variables, **({"context": context} if context else {})},
            "metadata": {"switchboard_call_id": call_id}, "server": server,
            **({"voicemailDetection": VOICEMAIL_DETECTION} if detect_voicemail else {}),
            **({"compliancePlan": compliance_plan} if compliance_plan else {}),
        },
    }


# -- the provider's messages -----------------------------------------------------------------------

PROVIDER_STATUSES = ("queued", "ringing", "in-progress", "forwarding", "ended")
INBOUND_CALL_TYPE = "inboundPhoneCall"


def our_call_id(message: dict[str, Any]) -> str | None:
    """The call id we gave the provider in the call's metadata, if the message carries it."""
    overrides = (message.get("call") or {}).get("assistantOverrides") or {}
    value = (overrides.get("metadata") or {}).get("switchboard_call_id")
    return value if isinstance(value, str) else None


def message_time(message: dict[str, Any]) -> datetime | None:
    """When the provider says a message's event happened (its `timestamp`, milliseconds since the epoch)."""
    stamp = message.get("timestamp")
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool) or not 0 < stamp < 1e14:
        return None
    return datetime.fromtimestamp(stamp / 1000, UTC)


def forward_destination(message: dict[str, Any]) -> str | None:
    """The phone a `forwarding` status update offers the call to (a number destination), if it names one."""
    destination = message.get("destination")
    number = destination.get("number") if isinstance(destination, dict) else None
    return number if isinstance(number, str) and number.strip() else None


def after_status(status: str, answered: bool, reported: bool, status_at: datetime | None,
                 message: dict[str, Any]) -> dict[str, Any]:
    """The changes a status update makes to a call (none when it would move it backwards)."""
    new, at = message.get("status"), message_time(message)
    if new not in PROVIDER_STATUSES or reported or not moves_forward(status, new, at, status_at):
        return {}
    changes = {"status": new, "answered": answered or new == "in-progress", "status_at": at}
    if new == "forwarding" and forward_destination(message):
        changes["forwarded_to"] = forward_destination(message)
    return changes


def after_report(status: str, answered: bool, reported: bool, report: dict[str, Any]) -> dict[str, Any]:
    """The changes an end-of-call report makes: the outcome (unless one is already final), what was said and
    extracted, the timing and the cost. A report is applied once."""
    if reported:
        return {}
    artifact, analysis = report.get("artifact"), report.get("analysis")
    artifact = artifact if isinstance(artifact, dict) else {}
    analysis = analysis if isinstance(analysis, dict) else {}
    reached = "in-progress" if answered else status
    changes: dict[str, Any] = {
        "ended_reason": _text(report.get("endedReason")), "transcript": _text(artifact.get("transcript")),
        "recording_url": recording_url(artifact), "summary": _text(analysis.get("summary")),
        "structured_data": analysis.get("structuredData") if isinstance(analysis.get("structuredData"), dict) else None,
        "started_at": _time(report.get("startedAt")), "ended_at": _time(report.get("endedAt")),
        "cost_cents": _cents(report.get("cost")), "recording_consent": recording_consent(report)}
    changes["quality_dimensions"] = quality(changes["structured_data"])
    if not is_final(status):
        changes["status"] = outcome(changes["ended_reason"], reached)
    # A conversation or a voicemail means someone (or a box) answered, even if that status update never came.
    talked = answered or changes.get("status") in ("completed", "voicemail")
    if talked and not answered:
        changes["answered"] = True
    if talked and changes["started_at"] and changes["ended_at"]:
        changes["duration"] = max(0, int((changes["ended_at"] - changes["started_at"]).total_seconds()))
    return changes


def recording_url(artifact: dict[str, Any]) -> str | None:
    """The call's recording in a report's artifact: `recording.mono.combinedUrl`, else `recording.stereoUrl`, else
    the deprecated `recordingUrl` (older reports carry only that)."""
    recording = _object(artifact.get("recording"))
    mono = _object(recording.get("mono"))
    return _text(mono.get("combinedUrl")) or _text(recording.get("stereoUrl")) or _text(artifact.get("recordingUrl"))


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


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _time(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        return None


def _cents(cost: object) -> int:
    return max(0, round(cost * 100)) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0


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
