"""Messaging rules as plain functions: the message statuses and their order, the reply keywords, consent, the
content rules and the quiet hours. No I/O here; services.messaging.service applies them."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import phonenumbers
from phonenumbers import timezone as number_timezones

from core.errors import ServiceError

DIRECTIONS = ("inbound", "outbound")
PREVIEW_LENGTH = 160  # of a thread's latest message in the thread list

# -- statuses ------------------------------------------------------------------------------------
# An outbound message: pending (written, not yet handed to the provider) -> the provider's accepted, queued,
# sending, sent -> one outcome. The provider's callbacks may come late, twice or out of order; a status never
# moves backwards and an outcome is final. An inbound message is `received`.
PENDING = "pending"
PROGRESS = (PENDING, "accepted", "queued", "sending", "sent")
OUTCOMES = ("delivered", "undelivered", "failed")
RECEIVED = "received"
STATUSES = (*PROGRESS, *OUTCOMES, RECEIVED)
_RANK = {**{s: i for i, s in enumerate(PROGRESS)}, **{s: len(PROGRESS) for s in OUTCOMES}}


def moves_forward(current: str, new: str) -> bool:
    """Whether an outbound message in `current` may take the provider's status `new`."""
    return new in _RANK and current in _RANK and _RANK[new] > _RANK[current]


def event_of_status(status: str) -> str | None:
    """The event a message reaching `status` emits (sms.sent is emitted when the provider accepts it)."""
    return {"delivered": "sms.delivered", "undelivered": "sms.failed", "failed": "sms.failed"}.get(status)


# -- reply keywords ------------------------------------------------------------------------------
# The carriers' standard keywords (CTIA): the whole message, whatever its case and surrounding spaces.
OPT_OUT_KEYWORDS = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
OPT_IN_KEYWORDS = frozenset({"START", "YES", "UNSTOP"})
HELP_KEYWORDS = frozenset({"HELP", "INFO"})


def keyword(body: str) -> str | None:
    """opt_out, opt_in or help when the message is one of the standard keywords, else None."""
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
# Evidence, per business and phone, in an append-only history. An explicit opt-out (STOP or through the API)
# wins until an explicit opt-in (START or through the API). Without either, a recipient who called or texted
# the business within CONVERSATIONAL_CONSENT_DAYS may be texted back (conversational consent); anyone else
# has not consented.
CONSENT_KINDS = ("opt_in", "opt_out", "conversational")
CONSENT_STATES = ("opted_in", "opted_out", "conversational", "none")
CONVERSATIONAL_CONSENT_DAYS = 30
API_CONSENT = {"opted_in": "opt_in", "opted_out": "opt_out"}  # what a caller may record, as evidence kinds
NOTE_MAX = REASON_MAX = 500


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


def consent_refusal(state: str, phone: str) -> ServiceError | None:
    if state == "opted_out":
        return ServiceError("number_opted_out", f"{phone} opted out of messages from this business (STOP); texts "
                            "resume only after they reply START or opt in again")
    if state == "none":
        return ServiceError("number_opted_out", f"{phone} has not opted in to messages from this business: record "
                            "their opt-in (POST /api/v1/sms/consent) or wait until they call or text you first")
    return None


# -- content -------------------------------------------------------------------------------------
MAX_BODY = 1600  # the provider's limit (ten segments)
LINK_SHORTENERS = ("bit.ly", "tinyurl.com", "goo.gl", "t.co", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly",
                   "shorturl.at", "tiny.cc", "rb.gy")
# Carrier-prohibited content (the SHAFT categories and high-risk lending), matched as whole words.
PROHIBITED = {
    "cannabis": ("cannabis", "marijuana", "thc", "cbd", "dispensary"),
    "firearms": ("firearm", "firearms", "ammunition", "ammo"),
    "tobacco": ("tobacco", "vape", "vapes", "e-cigarette", "cigarettes"),
    "alcohol": ("liquor", "beer sale", "wine sale"),
    "high_risk_lending": ("payday loan", "payday loans", "debt forgiveness", "debt relief", "credit repair"),
    "gambling": ("casino", "sweepstakes", "sports betting"),
}
_PROHIBITED_PATTERNS = {category: re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
                        for category, words in PROHIBITED.items()}
_SHORTENER = re.compile(r"(?:https?://)?(?:www\.)?(" + "|".join(re.escape(d) for d in LINK_SHORTENERS) + r")/\S+",
                        re.IGNORECASE)
CONTENT_RULES = ("empty", "too_long", "link_shortener", *(f"prohibited_{c}" for c in PROHIBITED))


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


# -- quiet hours ---------------------------------------------------------------------------------
# Texts go out between 08:00 and 21:00 in the recipient's local time. The zone is the recipient's stated one
# (a lead's US state) or else the number's (libphonenumber); when a number maps to several zones the window
# legal in all of them applies. Where the library cannot narrow a number below every zone of its country code
# (toll-free and non-geographic numbers, many mobiles: +1 spans Guam to Samoa, a one-hour window) or knows no
# zone, the sending number's zones stand in when the library narrows those (the business is usually local to
# its customers), then the window legal in every zone of the recipient's country code, then UTC.
QUIET_WINDOW = (time(8, 0), time(21, 0))
US_STATE_ZONES = {
    "AL": ("America/Chicago",), "AK": ("America/Anchorage", "America/Adak"), "AZ": ("America/Phoenix",),
    "AR": ("America/Chicago",), "CA": ("America/Los_Angeles",), "CO": ("America/Denver",),
    "CT": ("America/New_York",), "DE": ("America/New_York",), "DC": ("America/New_York",),
    "FL": ("America/New_York", "America/Chicago"), "GA": ("America/New_York",), "HI": ("Pacific/Honolulu",),
    "ID": ("America/Boise", "America/Los_Angeles"), "IL": ("America/Chicago",),
    "IN": ("America/Indiana/Indianapolis", "America/Chicago"), "IA": ("America/Chicago",),
    "KS": ("America/Chicago", "America/Denver"), "KY": ("America/New_York", "America/Chicago"),
    "LA": ("America/Chicago",), "ME": ("America/New_York",), "MD": ("America/New_York",),
    "MA": ("America/New_York",), "MI": ("America/Detroit", "America/Menominee"), "MN": ("America/Chicago",),
    "MS": ("America/Chicago",), "MO": ("America/Chicago",), "MT": ("America/Denver",),
    "NE": ("America/Chicago", "America/Denver"), "NV": ("America/Los_Angeles",), "NH": ("America/New_York",),
    "NJ": ("America/New_York",), "NM": ("America/Denver",), "NY": ("America/New_York",),
    "NC": ("America/New_York",), "ND": ("America/Chicago", "America/Denver"), "OH": ("America/New_York",),
    "OK": ("America/Chicago",), "OR": ("America/Los_Angeles", "America/Boise"), "PA": ("America/New_York",),
    "RI": ("America/New_York",), "SC": ("America/New_York",), "SD": ("America/Chicago", "America/Denver"),
    "TN": ("America/Chicago", "America/New_York"), "TX": ("America/Chicago", "America/Denver"),
    "UT": ("America/Denver",), "VT": ("America/New_York",), "VA": ("America/New_York",),
    "WA": ("America/Los_Angeles",), "WV": ("America/New_York",), "WI": ("America/Chicago",),
    "WY": ("America/Denver",), "PR": ("America/Puerto_Rico",),
}
_LOOKAHEAD = timedelta(hours=48)


def number_zones(e164: str) -> tuple[str, ...]:
    """The zones libphonenumber gives a number (none when it knows none)."""
    zones = number_timezones.time_zones_for_number(phonenumbers.parse(e164, None))
    return tuple(z for z in zones if z != "Etc/Unknown")


def narrowed_zones(e164: str) -> tuple[str, ...]:
    """The number's zones when libphonenumber narrows it below every zone of its country code, else none."""
    zones = number_zones(e164)
    whole = number_timezones.TIMEZONE_DATA.get(str(phonenumbers.parse(e164, None).country_code), ())
    return () if len(zones) > 1 and set(zones) == set(whole) else zones


def _allowed(at: datetime, zones: tuple[str, ...]) -> bool:
    start, end = QUIET_WINDOW
    return all(start <= at.astimezone(ZoneInfo(z)).time() < end for z in zones)


def next_allowed(now: datetime, zones: tuple[str, ...]) -> datetime | None:
    """`now` when texting is allowed in every zone, else the first moment it is (None when it never opens within
    two days: the zones are too far apart). Candidates are each zone's next window starts (DST-correct)."""
    if _allowed(now, zones):
        return now
    start = QUIET_WINDOW[0]
    candidates = set()
    for name in zones:
        local = now.astimezone(ZoneInfo(name))
        for days in range(3):
            day = (local + timedelta(days=days)).date()
            candidates.add(datetime.combine(day, start, ZoneInfo(name)).astimezone(timezone.utc))
    return next((c for c in sorted(candidates) if now < c <= now + _LOOKAHEAD and _allowed(c, zones)), None)


def recipient_zones(to: str, stated: tuple[str, ...], sender: str, now: datetime) -> tuple[str, ...]:
    """The zones the quiet hours are judged in (see the rule above)."""
    for zones in (stated, narrowed_zones(to), narrowed_zones(sender), number_zones(to)):
        if zones and next_allowed(now, zones) is not None:
            return zones
    return ("UTC",)


def quiet_hours_refusal(now: datetime, zones: tuple[str, ...]) -> ServiceError | None:
    """tcpa_violation saying when texting becomes allowed, or None when it is allowed now."""
    when = next_allowed(now, zones)
    if when == now:
        return None
    local = ", ".join(f"{now.astimezone(ZoneInfo(z)):%H:%M} in {z}" for z in zones[:3])
    start, end = QUIET_WINDOW
    return ServiceError("tcpa_violation", f"quiet hours: it is {local} for the recipient; texts are allowed "
                        f"{start:%H:%M}-{end:%H:%M} in the recipient's time zone, next at "
                        f"{when.isoformat(timespec='minutes').replace('+00:00', 'Z') if when else 'an unknown time'}")


def state_zones(state: str | None) -> tuple[str, ...]:
    """The zones of a lead's stated US state (two letters), if it names one."""
    return US_STATE_ZONES.get((state or "").strip().upper(), ())


# -- the email queue -------------------------------------------------------------------------------
# An email waits for approval (pending_approval) unless it is approved when queued (the owner's notifications,
# or an API caller asking for it), then goes out: approved -> sent, or failed after EMAIL_ATTEMPTS tries (or at
# once when the mail server refuses it for good). Retries back off exponentially.
EMAIL_STATUSES = ("pending_approval", "approved", "sent", "failed")
EMAIL_KINDS = ("owner_notification", "api")
EMAIL_ATTEMPTS = 5
EMAIL_RETRY_BASE_SECONDS, EMAIL_RETRY_MAX_SECONDS = 30.0, 3600.0
SUBJECT_MAX, EMAIL_BODY_MAX = 200, 50_000


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
