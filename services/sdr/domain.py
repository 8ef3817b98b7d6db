"""Lead rules as plain functions: statuses, defaults, field checks, what a write changes, the score's
inputs, and the audit's bounds (the scoring model itself is services.sdr.scoring)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from contracts.leads import (
    AUDIT_BOUNDS,
    DEFAULT_SOURCE,
    DEFAULT_STATUS,
    LIMITS,
    PATCH_STATUSES,
    STATUSES,
)
from core.contact import normalize_e164, normalize_email
from core.errors import invalid
from core.ids import require_uuid
from services.sdr import scoring

CHANNELS, DIRECTIONS = ("call", "sms", "email"), ("inbound", "outbound")

# Text fields of a lead, as the API names them, and the optional fields a lead reply carries.
LEAD_TEXT = ("name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "source_url",
             "source_page", "notes", "message", "event_date", "event_type", "agent_name")
LEAD_OUT = (*LEAD_TEXT, "agent_id")
LEADS_PAGE = (50, 100)  # default and maximum page size
AUDIT_SAMPLE = 50  # leads or voicemails listed per audit group
# Fields a contact upsert fills in on an existing lead when they are still empty.
CONTACT_FIELDS = ("name", "email", "agent_id", "agent_name")
CONTACT_SOURCE = "inbound_call"  # the source of a contact upsert that names none

# The fields PATCH may change (SPEC: Leads).
PATCHABLE = ("name", "first_name", "last_name", "email", "phone", "status", "source", "notes", "address", "city",
             "state", "zip")


def check_status(status: str, allowed: tuple[str, ...] = STATUSES) -> str:
    if status not in allowed:
        raise invalid(f"status must be one of {', '.join(allowed)}")
    return status


def clean_fields(given: dict[str, str], *, patch: bool) -> dict[str, Any]:
    """Checked and normalized values of the given fields (empty text clears an optional field)."""
    values: dict[str, Any] = {}
    for field, raw in given.items():
        if patch and field not in PATCHABLE:
            raise invalid(f"{field} cannot be changed with PATCH; changeable: {', '.join(PATCHABLE)}")
        text = raw.strip()
        if field == "status":
            values[field] = check_status(text, PATCH_STATUSES if patch else STATUSES)
            continue
        if field == "agent_id":
            values[field] = require_uuid(text, "agent_id") if text else None
            continue
        if len(text) > LIMITS[field]:
            raise invalid(f"{field} must be at most {LIMITS[field]} characters")
        if field == "source":
            if not text:
                raise invalid("source must not be empty")
        elif field == "email" and text:
            text = normalize_email(text)
        elif field == "phone" and text:
            text = normalize_e164(text, "phone")
        values[field] = text or None
    return values


def with_derived_name(values: dict[str, Any], current: dict[str, Any] | None = None) -> dict[str, Any]:
    """`name` follows first_name and last_name when the caller did not set it."""
    if "name" in values or not ({"first_name", "last_name"} & set(values)):
        return values
    merged = {**(current or {}), **values}
    full = " ".join(p for p in (merged.get("first_name"), merged.get("last_name")) if p)
    return {**values, "name": full or None}


def new_lead_values(given: dict[str, str]) -> dict[str, Any]:
    values = with_derived_name(clean_fields(given, patch=False))
    values.setdefault("status", DEFAULT_STATUS)
    values.setdefault("source", DEFAULT_SOURCE)
    return values


def changed_values(current: dict[str, Any], given: dict[str, str]) -> dict[str, Any]:
    """The patched fields whose value differs from the stored one."""
    values = with_derived_name(clean_fields(given, patch=True), current)
    return {k: v for k, v in values.items() if current.get(k) != v}


# -- what a caller said on a call (the agent's update_lead tool) ----------------------------------------------
CALLER_FIELDS = ("name", "email", "status", "notes")  # the lead fields a caller's words may write
INTENT_MAX = 500
CALL_UPDATE = "update_lead"  # the activity entry's action, naming the call (its reference)


def caller_values(given: dict[str, str], intent: str | None) -> dict[str, Any]:
    """The checked values of what the caller said: name, email, a status PATCH may set, a note and the intent."""
    unknown = sorted(set(given) - set(CALLER_FIELDS))
    if unknown:
        raise invalid(f"{unknown[0]} cannot be recorded from a call; recordable: {', '.join(CALLER_FIELDS)}")
    values = {k: v for k, v in clean_fields(given, patch=True).items() if v is not None}
    intent = (intent or "").strip()
    if len(intent) > INTENT_MAX:
        raise invalid(f"intent must be at most {INTENT_MAX} characters")
    return {**values, "intent": intent} if intent else values


def caller_changes(current: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """What the caller's values change on a lead: the fields that differ, the note added to the lead's notes."""
    changes = {k: v for k, v in values.items() if k != "notes" and current.get(k) != v}
    note = values.get("notes")
    if note:
        notes = f"{current['notes']}\n{note}" if current.get("notes") else note
        if len(notes) > LIMITS["notes"]:
            raise invalid(f"the lead's notes would pass {LIMITS['notes']} characters")
        changes["notes"] = notes
    return changes


def call_update_detail(changed: tuple[str, ...], created: bool, values: dict[str, Any]) -> str:
    """The activity entry's words: what the call recorded on the lead."""
    said = ", ".join(f"status {values['status']}" if name == "status" else name for name in changed)
    return f"{'created' if created else 'updated'} on a call: {said or 'nothing new'}"


# -- whose word an email address is --------------------------------------------------------------
# The messaging service mails a key's email to a lead at once only when the address is known to the business: the
# person gave it on an inbound call (they reached the business first). An address written through the lead API is a
# stranger's, whatever the lead's source says: a key can write any of it.

def email_known_at(values: dict[str, Any]) -> dict[str, Any]:
    """What a lead write through the API (create or patch) of `values` sets of email_known_at: nothing unless it
    writes the address, which is then not known (a key's word)."""
    return {"email_known_at": None} if "email" in values else {}


def email_given_on_call(lead: dict[str, Any], direction: str, collected: dict[str, str]) -> bool:
    """Whether an inbound call's caller gave the lead's current address (the agent collected it) while it is not
    known yet."""
    given = (collected.get("email") or "").strip().lower()
    return direction == "inbound" and bool(given) and lead.get("email_known_at") is None and lead.get("email") == given


def check_interaction(channel: str, direction: str, reference: str) -> None:
    if channel not in CHANNELS:
        raise invalid(f"channel must be one of {', '.join(CHANNELS)}")
    if direction not in DIRECTIONS:
        raise invalid(f"direction must be one of {', '.join(DIRECTIONS)}")
    if not reference.strip() or len(reference) > 200:
        raise invalid("reference must be 1 to 200 characters (the call id or message sid)")


def check_audit(window_hours: int, stalled_days: int, hot_score: int) -> None:
    for name, value in (("window_hours", window_hours), ("stalled_days", stalled_days), ("hot_score", hot_score)):
        low, high = AUDIT_BOUNDS[name]
        if not low <= value <= high:
            raise invalid(f"{name} must be between {low} and {high}")


def check_score_bound(field: str, score: int) -> int:
    if not 0 <= score <= 100:
        raise invalid(f"{field} must be between 0 and 100")
    return score


def score(values: dict[str, Any], now: datetime) -> scoring.Score:
    """The score of a lead with these stored values."""
    return scoring.score_lead(scoring.LeadFacts(
        source=values["source"], status=values["status"], has_email=bool(values.get("email")),
        has_phone=bool(values.get("phone")), interactions=values.get("interaction_count") or 0,
        last_activity=values["last_activity_at"], intent=values.get("intent")), now)


def score_columns(result: scoring.Score) -> dict[str, Any]:
    return {"score": result.score, "score_confidence": result.confidence, "score_explanation": result.explanation,
            "score_factors": result.factors}


def missing_contact_values(current: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """What a repeated contact upsert adds to an existing lead: the contact fields it does not have yet
    (the first source, name and agent stay)."""
    return {k: v for k, v in values.items() if k in CONTACT_FIELDS and current.get(k) is None}
