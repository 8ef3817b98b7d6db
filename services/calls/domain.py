"""Call rules as plain functions: the statuses and their moves, the provider's end reasons, what a new call
may ask for, the enrichment variables and the provider's call body."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import phonenumbers
from phonenumbers import timezone as number_timezones

from core.errors import invalid

DIRECTIONS = ("inbound", "outbound")
COMPLIANCE_MODES = ("skip", "enforce")

# -- statuses ------------------------------------------------------------------------------------
# A call moves forward only: queued -> ringing -> in-progress (-> forwarding) -> ended -> one outcome.
# `ended` means the provider said the call is over and its outcome is not known yet (the end-of-call report
# brings it). The outcomes are final; a message that would move a call backwards changes nothing.
PROGRESS = ("queued", "ringing", "in-progress", "forwarding", "ended")
OUTCOMES = ("completed", "no-answer", "busy", "voicemail", "failed", "canceled")
STATUSES = (*PROGRESS, *OUTCOMES)
_RANK = {**{s: i for i, s in enumerate(PROGRESS)}, **{s: len(PROGRESS) for s in OUTCOMES}}


def is_final(status: str) -> bool:
    return status in OUTCOMES


def moves_forward(current: str, new: str) -> bool:
    """Whether a call in `current` may take `new` (never backwards, never from one outcome to another)."""
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

DEFAULT_MAX_DURATION = 600
MAX_DURATION_BOUNDS = (10, 43200)  # seconds; the provider's bounds of maxDurationSeconds
NAME_MAX, CONTEXT_MAX, FIRST_MESSAGE_MAX = 200, 5000, 1000
IDEMPOTENCY_KEY_MAX = 255


def check_max_duration(value: int | None) -> int:
    if value is None:
        return DEFAULT_MAX_DURATION
    low, high = MAX_DURATION_BOUNDS
    if not low <= value <= high:
        raise invalid(f"max_duration must be between {low} and {high} seconds")
    return value


def check_text(value: str | None, field: str, maximum: int) -> str | None:
    """Optional text: trimmed, None when empty, refused past `maximum` characters."""
    value = (value or "").strip() or None
    if value is not None and len(value) > maximum:
        raise invalid(f"{field} must be at most {maximum} characters")
    return value


def check_idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not key.strip() or len(key) > IDEMPOTENCY_KEY_MAX or not key.isprintable():
        raise invalid(f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} printable characters")
    return key


def request_hash(fields: dict) -> str:
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


def enrichment(*, to: str, now: datetime, name: str | None, lead: dict | None, business_name: str | None,
               business_phone: str | None) -> dict:
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


def provider_call(*, assistant_id: str, phone_number_id: str, to: str, name: str | None, prompt: str,
                  first_message: str, model: dict, context: str | None, max_duration: int, variables: dict,
                  call_id: str) -> dict:
    """The provider's `POST /call` body: the agent's assistant with this call's outbound overrides."""
    system = prompt if not context else f"{prompt}\n\nContext for this call: {context}"
    customer = {"number": to, **({"name": name} if name else {})}
    return {
        "assistantId": assistant_id, "phoneNumberId": phone_number_id, "customer": customer,
        "assistantOverrides": {
            "firstMessage": first_message, "maxDurationSeconds": max_duration,
            "model": {**model, "messages": [{"role": "system", "content": system}]},
            "variableValues": {**variables, **({"context": context} if context else {})},
            "metadata": {"switchboard_call_id": call_id},
        },
    }
