"""Messaging rules as plain functions: the message statuses and their order, the reply keywords, consent and the
content rules. No I/O here; services.messaging.service applies them. When a text may go out (do-not-call, consent,
quiet hours) is the outbound compliance decision's (core.compliance.decision), shared with calls."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple

from contracts.messaging import (
    CONVERSATIONAL_CONSENT_DAYS,
    EMAIL_ATTEMPTS,
    EMAIL_BODY_MAX,
    MAX_BODY,
    PROHIBITED,
    SUBJECT_MAX,
)
from core.compliance.rules import Hours, hours
from core.errors import ServiceError, invalid

PREVIEW_LENGTH = 160  # of a thread's latest message in the thread list

# -- statuses ------------------------------------------------------------------------------------
# An outbound message: pending (written, not yet handed to the provider) -> the provider's accepted, queued,
# sending, sent -> one outcome. The provider's callbacks may come late, twice or out of order; a status never
# moves backwards and an outcome is final. An inbound message is `received`.
PENDING = "pending"
# The provider was asked and no answer came (a time-out): the text may have gone out. Its callback or the
# reconciliation (services.messaging.reconciliation) says what became of it.
UNKNOWN = "unknown"
PROGRESS = (PENDING, UNKNOWN, "accepted", "queued", "sending", "sent")
# The provider has the text and its callbacks have not brought an outcome yet.
IN_FLIGHT = ("accepted", "queued", "sending", "sent")
OUTCOMES = ("delivered", "undelivered", "failed")
RECEIVED = "received"
STATUSES = (*PROGRESS, *OUTCOMES, RECEIVED)
_RANK = {**{s: i for i, s in enumerate(PROGRESS)}, **{s: len(PROGRESS) for s in OUTCOMES}}


def sent_match(listed: list[dict[str, Any]], body: str, sent_at: datetime,
               known_sids: set[str]) -> dict[str, Any] | None:
    """Among the provider's messages from our number to the callee (newest first), the one our text of unknown
    outcome became: the same body, created no earlier than a minute before we sent it, not already one of ours."""
    for message in listed:
        try:
            created = parsedate_to_datetime(message.get("date_created") or "")
        except (TypeError, ValueError):
            continue
        if message.get("body") == body and created >= sent_at - timedelta(minutes=1) \
                and message.get("sid") not in known_sids:
            return message
    return None


def moves_forward(current: str, new: str) -> bool:
    """Whether an outbound message in `current` may take the provider's status `new`."""
    return new in _RANK and current in _RANK and _RANK[new] > _RANK[current]


def event_of_status(status: str) -> str | None:
    """The event a message reaching `status` emits (sms.sent is emitted when the provider accepts it)."""
    return {"delivered": "sms.delivered", "undelivered": "sms.failed", "failed": "sms.failed"}.get(status)


# -- reply keywords ------------------------------------------------------------------------------
# The carriers' standard keywords, as the messaging provider's default opt-out handling takes them (Twilio's list,
# which blocks on the same words): the whole message, whatever its case and surrounding spaces.
OPT_OUT_KEYWORDS = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"})
OPT_IN_KEYWORDS = frozenset({"START", "YES", "UNSTOP"})
HELP_KEYWORDS = frozenset({"HELP", "INFO"})
# The provider's word for a keyword text where it says what kind it took it for (Twilio's OptOutType, sent with
# Advanced Opt-Out, whose keywords a business may extend: ARRET, BAJA, ...).
OPT_OUT_TYPES = {"STOP": "opt_out", "START": "opt_in", "HELP": "help"}
# Who answers the keywords: the provider (Twilio's default opt-out handling, or Advanced Opt-Out, replies itself
# and a TwiML reply of ours to STOP is never delivered, to START or HELP is a second one), or we (the provider's
# handling turned off: our TwiML is the only answer).
KEYWORD_ANSWERERS = ("twilio", "ours")


def keyword(body: str, opt_out_type: str | None = None) -> str | None:
    """opt_out, opt_in or help when the message is one of the standard keywords, or the provider says which kind
    of keyword it took it for (`opt_out_type`, which wins); else None."""
    said = OPT_OUT_TYPES.get((opt_out_type or "").strip().upper())
    if said is not None:
        return said
    word = body.strip().upper()
    if word in OPT_OUT_KEYWORDS:
        return "opt_out"
    if word in OPT_IN_KEYWORDS:
        return "opt_in"
    return "help" if word in HELP_KEYWORDS else None


def keyword_reply(kind: str, business_name: str, already: bool) -> str | None:
    """What a keyword is answered with. An opt-out is confirmed once: a STOP from someone already opted out
    gets no reply (silence, as carriers expect); so does a START from someone already opted in."""
    if kind == "opt_out":
        return None if already else (f"{business_name}: You are unsubscribed and will receive no more messages. "
                                     "Reply START to resubscribe.")
    if kind == "opt_in":
        return None if already else (f"{business_name}: You are resubscribed to messages. Reply HELP for help, "
                                     "STOP to unsubscribe.")
    return (f"{business_name}: Reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply. For "
            "help, call this number.")


# -- consent -------------------------------------------------------------------------------------
# Evidence, per business and phone, in an append-only history. An explicit opt-out (STOP, through the API, or the
# provider refusing a text because the recipient replied STOP to it: source `provider`) wins until an explicit
# opt-in (START or through the API). Without either, a recipient who called or texted
# the business within CONVERSATIONAL_CONSENT_DAYS may be texted back (conversational consent); anyone else
# has not consented.
CONSENT_KINDS = ("opt_in", "opt_out", "conversational")
CONSENT_STATES = ("opted_in", "opted_out", "conversational", "none")


@dataclass(frozen=True)
class ConsentEvidence:
    kind: str  # CONSENT_KINDS
    at: datetime


def consent_state(history: list[ConsentEvidence], now: datetime) -> str:
    """The recipient's consent from its evidence (any order)."""
    explicit = [e for e in history if e.kind in ("opt_in", "opt_out")]
    if explicit:
        latest = max(explicit, key=lambda e: e.at)
        if latest.kind == "opt_out":
            return "opted_out"
        return "opted_in"
    window = timedelta(days=CONVERSATIONAL_CONSENT_DAYS)
    if any(e.kind == "conversational" and now - e.at <= window for e in history):
        return "conversational"
    return "none"


def may_text(state: str) -> bool:
    return state in ("opted_in", "conversational")


LINK_SHORTENERS = ("bit.ly", "tinyurl.com", "goo.gl", "t.co", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly",
                   "shorturl.at", "tiny.cc", "rb.gy")
_PROHIBITED_PATTERNS = {category: re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
                        for category, words in PROHIBITED.items()}
_SHORTENER = re.compile(r"(?:https?://)?(?:www\.)?(" + "|".join(re.escape(d) for d in LINK_SHORTENERS) + r")/\S+",
                        re.IGNORECASE)


def content_refusal(body: str) -> ServiceError | None:
    """The first content rule a message breaks (content_blocked naming the rule), or None."""
    if not body.strip():
        return _blocked("empty", "the message is empty")
    if len(body) > MAX_BODY:
        return _blocked("too_long", f"the message is {len(body)} characters; the most is {MAX_BODY}")
    shortener = _SHORTENER.search(body)
    if shortener:
        return _blocked("link_shortener", f"public link shorteners such as {shortener.group(1)} are filtered by "
                        "carriers; send the full link or one on your own domain")
    for category, pattern in _PROHIBITED_PATTERNS.items():
        found = pattern.search(body)
        if found:
            return _blocked(f"prohibited_{category}", f"{found.group(1)!r} is carrier-prohibited content "
                            f"({category.replace('_', ' ')})")
    return None


def _blocked(rule: str, why: str) -> ServiceError:
    return ServiceError("content_blocked", f"rule {rule}: {why}")


# -- texts sent for a caller that keeps its own records (a communication run) ---------------------------
# An idempotency key names one outbound message per business; the reference (for the decision log), the run's
# reference and the touch id are the caller's own words.
IDEMPOTENCY_KEY_MAX = 255
REFERENCE_MAX = 200


# -- the compliance decision of a call (DecideCall, asked by the calls service) ------------------------------

@dataclass(frozen=True)
class CallToDecide:
    """A call the caller is about to place, as it asks for its decision (unchecked): the callee, what the caller
    knows of them (their zone, the lead as it read it), the number it calls from, who asks and for what."""

    business_id: str
    phone: str
    actor: str  # enforced_call, run or pipeline
    timezone: str | None = None
    lead_id: str | None = None
    lead_state: str | None = None
    lead_status: str | None = None
    lead_converted_at: datetime | None = None  # the lead's purchase and latest inquiry (the registry's exemptions)
    lead_last_inbound_at: datetime | None = None
    sender: str | None = None
    reference: str | None = None
    business_hours: tuple[int, int] | None = None  # (start hour, end hour): the business's own window


def calling_hours(asked: tuple[int, int] | None) -> Hours | None:
    """The business's own calling hours a call or text carries, checked: whole hours with 0 <= start < end <= 23;
    None when it carries none."""
    if asked is None:
        return None
    start, end = asked
    if not 0 <= start < end <= 23:
        raise invalid("business_hours must be whole hours of the day with 0 <= start < end <= 23")
    return hours(start, end)


EMAIL_KINDS = ("owner_notification", "api")
EMAIL_RETRY_BASE_SECONDS, EMAIL_RETRY_MAX_SECONDS = 30.0, 3600.0


# Who an API caller's email is for. The platform's sender must not be a relay for keys: a key may mail at once only
# the owner (once the address is confirmed) and addresses known to the business, i.e. approved by the owner in
# person (approving an email to an address approves the address), or given by the person on an inbound call
# (they reached the business first; services.sdr.domain). Any other address, a lead's that a key wrote among
# them, waits until the owner, signed in to the dashboard, approves the email: a key alone cannot mail strangers.
OWNER, KNOWN, OTHER = "owner", "known", "other"
EMAIL_WINDOW = timedelta(hours=24)  # the daily quota's sliding window


def recipient_of(to: str, owner_email: str | None, known: bool) -> str:
    """`owner_email`: the owner's address once confirmed (None before: it is anyone's); `known`: the address is
    known to the business."""
    return OWNER if to == owner_email else KNOWN if known else OTHER


def queued_status(recipient: str, approve: bool, by_owner_in_person: bool) -> str:
    """pending_approval or approved, for an email queued with `approve` by a key or (`by_owner_in_person`) by the
    owner signed in to the dashboard."""
    return "approved" if approve and (recipient != OTHER or by_owner_in_person) else "pending_approval"


def approves_address(recipient: str | None, by_owner_in_person: bool) -> bool:
    """Whether approving an email to `recipient` makes its address known to the business: the owner, in person,
    approving mail to an address that was not."""
    return by_owner_in_person and recipient == OTHER


def approval_refusal(recipient: str | None, by_owner_in_person: bool) -> str | None:
    """Why this caller may not approve an email to `recipient` (None: it may)."""
    if recipient == OTHER and not by_owner_in_person:
        return ("this email is to an address the business does not know (not the owner's, not approved by the "
                "owner, not given by the person on a call to the business): only the owner, signed in to the "
                "dashboard, may approve it (POST /api/v1/emails/approve with the session)")
    return None


def quota_retry_after(oldest_in_window: datetime, now: datetime) -> int:
    """Whole seconds until the oldest email of the quota's window leaves it."""
    return max(1, int((oldest_in_window + EMAIL_WINDOW - now).total_seconds()) + 1)


def email_retry_delay(attempts: int, scale: float = 1.0) -> timedelta:
    """How long after its `attempts`-th failed try an email is tried again."""
    return timedelta(seconds=min(EMAIL_RETRY_MAX_SECONDS, EMAIL_RETRY_BASE_SECONDS * 2 ** (attempts - 1)) * scale)


def after_failed_send(attempts: int, permanent: bool) -> str:
    """The status of an email whose try number `attempts` failed."""
    return "failed" if permanent or attempts >= EMAIL_ATTEMPTS else "approved"


def check_email_text(subject: str, body: str) -> tuple[str, str]:
    subject, body = subject.strip(), body.strip()
    if not subject or "\n" in subject or "\r" in subject:
        raise ServiceError("invalid_request", "subject must be one line of text")
    if len(subject) > SUBJECT_MAX:
        raise ServiceError("invalid_request", f"subject must be at most {SUBJECT_MAX} characters")
    if not body or len(body) > EMAIL_BODY_MAX:
        raise ServiceError("invalid_request", f"body must be 1 to {EMAIL_BODY_MAX} characters")
    return subject, body


def prompt_change_email(agent_name: str, fields: list[str], source: str, version: int,
                        reason: str | None) -> tuple[str, str]:
    """The owner's notification of a change to an agent's prompts."""
    changed = ", ".join(f.replace("_", " ") for f in fields) or "configuration"
    body = (f"The {changed} of your agent {agent_name} changed (version {version}, through {source}).\n"
            + (f"Reason given: {reason}\n" if reason else "")
            + "\nIf you did not expect this, review the agent's versions and roll back if needed "
              "(GET /api/v1/agents/versions, POST /api/v1/agents/versions/rollback).\n")
    return f"{agent_name}: {changed} changed", body


class Allowance(NamedTuple):
    """A touch's room in its business's spend of `day` (UTC): the day's limit of its channel, and for a call the
    day's call seconds (None: not limited by them)."""

    day: date
    limit: int
    seconds_limit: int | None = None
