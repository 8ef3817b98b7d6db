"""The outbound compliance decision: may this business call or text this person now, and if not, when, or why never.

One pure function (no I/O: the services load the facts and pass them in) for every outbound channel: SMS sends,
calls placed with compliance enforced, communication runs and the sales pipeline. It answers

- allow, with the consent basis it rests on;
- defer until the exact instant the touch becomes legal, naming the rule that holds it back now; or
- refuse with the spec's code (number_on_dnc, number_opted_out, tcpa_violation) and what would make it legal.

The checks, in order: the platform's and the business's do-not-call lists and a lead marked do_not_contact
(number_on_dnc); an opt-out (number_opted_out); the national do-not-call registry where the operator loaded the
callee's area code (number_on_dnc unless an exemption holds; its data older than 31 days refuses every touch there:
dnc_registry_stale); no consent basis (number_opted_out); callee zones with no moment legal in all of them
(tcpa_violation); then the time: the frequency caps, and every calling window that applies, in every zone the
callee may be in (core.compliance.zones): the federal window (or the same window abroad), each state's row
(core.compliance.state_rules) by area code and by the lead's stated state, and the business's own hours. A window
is checked on the callee's local date, so daylight-saving changes move it correctly.

The caps count the touches of the ledger (every call and text placed to the callee, whatever path placed it): a
state row's cap counts the channels its law covers together (Florida's 3 per 24 hours counts calls and texts), the
platform's cap (Policy) counts the touch's own channel.
"""
from __future__ import annotations

from calendar import monthrange
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache, lru_cache
from typing import Any, NamedTuple

import holidays

from core.compliance import recording_rules
from core.compliance import zones as where
from core.compliance.rules import CALL, CHANNELS, FEDERAL, SMS, Hours, StateRule
from core.compliance.state_rules import STATE_RULES
from core.errors import ServiceError

ALLOW, DEFER, REFUSE = "allow", "defer", "refuse"
OUTCOMES = (ALLOW, DEFER, REFUSE)
# Who asks for a decision: a call placed with compliance enforce, an SMS send, a communication run, the pipeline,
# an agent's tool during a call (AGENT_TOOL: send_sms, send_link); and a call placed with compliance skip
# (UNCHECKED: counted and logged, never refused).
CALL_ACTORS = ("enforced_call", "run", "pipeline")
AGENT_TOOL = "agent_tool"
SMS_ACTORS = ("sms", "run", "pipeline", AGENT_TOOL)
UNCHECKED = "unchecked_call"
ACTORS = (*CALL_ACTORS, "sms", AGENT_TOOL, UNCHECKED)
DAY = timedelta(hours=24)
HORIZON = timedelta(days=8)  # a touch that cannot become legal within this is refused (the zones never align)
CONVERTED = "converted"  # the lead status that is an existing business relationship (a customer)
DO_NOT_CONTACT = "do_not_contact"

# Outside the US the platform applies the federal window in the callee's own zones.
ABROAD = StateRule(state="--", statute="platform policy: the 47 CFR 64.1200(c)(1) window in the callee's zones",
                   channels=FEDERAL.channels, weekdays=FEDERAL.weekdays, saturday=FEDERAL.saturday,
                   sunday=FEDERAL.sunday)
RULES_BY_STATE = {row.state: row for row in STATE_RULES}
PLATFORM_CAP_SOURCES = {CALL: "platform policy (COMPLIANCE_CALLS_PER_24H)",
                        SMS: "platform policy (COMPLIANCE_TEXTS_PER_24H)"}
SOURCES = {
    "platform_dnc": "the platform's do-not-call list (PLATFORM_DNC)",
    "business_dnc": "47 CFR 64.1200(d)(3) (the business's do-not-call list)",
    "lead_do_not_contact": "the lead's status do_not_contact",
    "opted_out": "47 CFR 64.1200(a)(10) (revocation of consent); CTIA keywords (STOP)",
    "no_consent_call": "47 U.S.C. 227(b)(1) (artificial voice; AI voices per FCC 24-17): prior express consent",
    "no_consent_sms": "47 U.S.C. 227(b)(1)(A) (automated texts): prior express consent",
    "zones": "47 CFR 64.1200(c)(1) (the called party's location)",
    "business_hours": "the business's own calling hours (SDR config)",
    "not_checked": "compliance skip (POST /api/v1/calls): the caller is responsible for consent and do-not-call "
                   "compliance",
    "national_dnc": "the national do-not-call registry: 16 CFR 310.4(b)(1)(iii)(B); 47 CFR 64.1200(c)(2)",
    "national_dnc_stale": "the national do-not-call registry's data at most 31 days old: 16 CFR 310.4(b)(3)(iv); "
                          "47 CFR 64.1200(c)(2)(i)(D)",
}
# What the registry's loaded data says of a number's area code (Standing.national): the operator does not subscribe
# to it (NATIONAL_DNC_AREA_CODES), subscribes but never imported its files, or its data was checked.
NOT_SUBSCRIBED, NOT_LOADED, CHECKED = "not_subscribed", "not_loaded", "checked"
REGISTRY_MAX_AGE = timedelta(days=31)  # the FTC's rule: a touch relies on registry data at most 31 days old
# The established business relationship the registry exempts (16 CFR 310.2(q), 47 CFR 64.1200(f)(5)): months after
# a purchase (the lead's converted_at) and after an inquiry (its last_inbound_at).
PURCHASE_MONTHS, INQUIRY_MONTHS = 18, 3


@dataclass(frozen=True)
class Callee:
    """What is known of the person: the number, a time zone a caller stated, and the lead the business holds."""

    phone: str  # E.164, checked
    timezone: str | None = None  # an IANA name (checked with zones.check_zone)
    lead_id: str | None = None
    lead_state: str | None = None  # as the lead has it: "FL" or "Florida"
    lead_status: str | None = None
    converted_at: datetime | None = None  # when the lead's status became converted (a purchase)
    last_inbound_at: datetime | None = None  # the lead's latest inbound call or text (an inquiry)


@dataclass(frozen=True)
class Standing:
    """What the business's records, and the platform's copy of the national registry, say of the person."""

    platform_dnc: bool = False
    business_dnc_since: datetime | None = None
    consent: str = "none"  # services.messaging.domain.CONSENT_STATES
    national: str = NOT_SUBSCRIBED  # NOT_SUBSCRIBED, NOT_LOADED or CHECKED: the registry's data of the area code
    national_listed: bool = False  # the number is on the registry (CHECKED only)
    national_refreshed_at: datetime | None = None  # when the area code's data was last refreshed (CHECKED only)


class Counted(NamedTuple):
    """A touch of the ledger, counted against the frequency caps."""

    channel: str  # CHANNELS
    at: datetime


@dataclass(frozen=True)
class Touch:
    channel: str  # CHANNELS
    at: datetime  # when it would go out (aware)
    sender: str | None = None  # the business's number, a fallback for where the callee is
    business_hours: Hours | None = None  # the business's own window in the callee's local time
    recent: tuple[Counted, ...] = ()  # calls and texts placed to this callee by the business since 24 h before `at`


@dataclass(frozen=True)
class Policy:
    """The platform's settings: its own cap per channel, for every callee (a state's cap may be stricter)."""

    calls_per_24h: int = 3
    texts_per_24h: int = 10

    def per_24h(self, channel: str) -> int:
        return self.calls_per_24h if channel == CALL else self.texts_per_24h


@dataclass(frozen=True)
class Decision:
    outcome: str  # OUTCOMES
    rule: str  # what decided: allowed, platform_dnc, ..., federal_hours, state_hours, business_hours, frequency
    source: str  # the statute or policy behind the rule
    message: str
    code: str | None = None  # the spec's error code when not allowed
    not_before: datetime | None = None  # when a deferred touch becomes legal
    inputs: dict[str, Any] = field(default_factory=dict)  # what it was decided on, for the log

    @property
    def allowed(self) -> bool:
        return self.outcome == ALLOW

    def refusal(self) -> ServiceError | None:
        """The error an immediate touch answers with (a deferral refuses it too), or None when allowed."""
        return None if self.allowed else ServiceError(self.code or "tcpa_violation", self.message)


def decide(touch: Touch, callee: Callee, standing: Standing, policy: Policy = Policy()) -> Decision:
    if touch.channel not in CHANNELS:
        raise ValueError(f"channel must be one of {CHANNELS}")
    refused = _standing_refusal(touch.channel, callee, standing) or _national_refusal(touch, callee, standing)
    if refused is not None:
        return refused
    basis = consent_basis(touch.channel, standing.consent, callee.lead_status)
    if basis is None:
        return _no_consent(touch.channel, callee.phone)
    states = _states(callee)
    rows = _rows(touch, states, where.is_nanp(callee.phone))
    zones, why = callee_zones(callee, touch.sender, touch.at, rows)
    inputs: dict[str, Any] = {
        "consent_basis": basis,
        "zones": [{"zone": z, "why": w, "local_time": _local(touch.at, z)} for z, w in zip(zones, why, strict=True)],
        "states": states, "rules": [r.state for r in rows if r.state not in ("US", "--", "business")],
        "national_registry": national_input(touch.at, callee, standing)}
    if touch.channel == CALL:  # what the law asks of a recorded call (the call record says what the agent did)
        inputs["recording_disclosure"] = recording_rules.disclosure(states).record()
    recent = sorted((t for t in touch.recent if touch.at - DAY < t.at), key=lambda t: t.at)
    caps = _caps(touch.channel, recent, rows, policy)
    inputs["touches_24h"] = {c: sum(1 for t in recent if t.channel == c) for c in CHANNELS}
    inputs["caps"] = [{"limit": c.limit, "channels": sorted(c.channels), "counted": len(c.counted),
                       "source": c.source} for c in caps]
    # The cap that frees last holds the touch (the first of equals: a state's before the platform's).
    held = [(frees_at, c) for c in caps if (frees_at := c.frees_at()) is not None]
    start, reached = max(held, key=lambda h: h[0], default=(touch.at, None))
    blocking_now = _violation(touch.at, zones, rows)
    if start == touch.at and blocking_now is None:
        return Decision(ALLOW, "allowed", "", f"allowed: {basis.replace('_', ' ')}", inputs=inputs)
    when = _next_legal(start, zones, rows, blocking_now if start == touch.at else None)
    if when is None:
        return Decision(REFUSE, "zones", SOURCES["zones"], _disjoint_message(callee, zones, why),
                        "tcpa_violation", inputs=inputs)
    if reached is not None:
        message = (f"frequency: {_touches(reached.counted)} to {callee.phone} in the last 24 hours; {reached.who} "
                   f"allows at most {reached.limit} {_things(reached.channels)} per 24 hours, next at {_iso(when)}")
        return Decision(DEFER, "frequency", reached.source, message, "tcpa_violation", when, inputs)
    assert blocking_now is not None  # allowed above otherwise
    zone, row = blocking_now
    rule, message = _window_message(touch, zone, row, when)
    return Decision(DEFER, rule, row.statute, message, "tcpa_violation", when, inputs)


def counted_only(checked: Decision) -> Decision:
    """The logged decision of a call placed with compliance skip: allowed (skip skips the checks that refuse, as
    the spec says) and counted against the caps, with what the checks said (`checked`) for the business to see."""
    said = {"outcome": checked.outcome, "rule": checked.rule, "code": checked.code,
            "not_before": _iso(checked.not_before) if checked.not_before else None}
    return Decision(ALLOW, "not_checked", SOURCES["not_checked"], "placed with compliance skip: counted, not checked "
                    f"(the checks said {checked.outcome}: {checked.message})", inputs={**checked.inputs, "checks": said})


def open_to(channel: str, phone: str, at: datetime, business_hours: Hours | None = None) -> bool:
    """Whether a consenting callee whom only their number places may be touched at `at` (within `business_hours`
    when given): benches and tests pick recipients with it."""
    return decide(Touch(channel, at, business_hours=business_hours), Callee(phone),
                  Standing(consent="opted_in")).allowed


def consent_basis(channel: str, consent: str, lead_status: str | None) -> str | None:
    """What the touch rests on: opt_in, inbound_contact (they called or texted the business lately) or, for a
    call, existing_relationship (the lead is a customer); None when nothing does."""
    if consent == "opted_in":
        return "opt_in"
    if consent == "conversational":
        return "inbound_contact"
    if channel == CALL and consent != "opted_out" and lead_status == CONVERTED:
        return "existing_relationship"
    return None


# -- who may not be contacted at all ----------------------------------------------------------------

def _standing_refusal(channel: str, callee: Callee, standing: Standing) -> Decision | None:
    verb = "called" if channel == CALL else "texted"
    phone = callee.phone
    if standing.platform_dnc:
        return _refuse("platform_dnc", "number_on_dnc", f"{phone} is on the platform's do-not-call list; it cannot "
                       f"be {verb}")
    if standing.business_dnc_since is not None:
        return _refuse("business_dnc", "number_on_dnc", f"{phone} is on this business's do-not-call list (since "
                       f"{standing.business_dnc_since:%Y-%m-%d}); take it off (DELETE /api/v1/dnc) only if they ask")
    if callee.lead_status == DO_NOT_CONTACT:
        return _refuse("lead_do_not_contact", "number_on_dnc", f"lead {callee.lead_id} is marked do_not_contact; "
                       f"{phone} cannot be {verb} while it is")
    if standing.consent == "opted_out":
        what = "messages" if channel == SMS else "calls and messages"
        return _refuse("opted_out", "number_opted_out", f"{phone} opted out of {what} from this business (STOP); "
                       f"{'texts' if channel == SMS else 'calls'} resume only after they reply START or opt in again")
    return None


# -- the national do-not-call registry ----------------------------------------------------------------

def _national_refusal(touch: Touch, callee: Callee, standing: Standing) -> Decision | None:
    """A touch refused by the registry: every touch to an area code whose data is too old, and a listed number's
    unless an exemption holds. An area code not subscribed or never loaded is not consulted (decide's inputs say
    so)."""
    if standing.national != CHECKED:
        return None
    phone, refreshed = callee.phone, standing.national_refreshed_at
    verb = "called" if touch.channel == CALL else "texted"
    if refreshed is None or touch.at - refreshed > REGISTRY_MAX_AGE:
        since = f"was last refreshed {refreshed:%Y-%m-%d}" if refreshed else "has no refresh recorded"
        return Decision(REFUSE, "national_dnc_stale", SOURCES["national_dnc_stale"],
                        f"the national do-not-call registry's data for area code {area_code(phone)} {since}, more "
                        f"than {REGISTRY_MAX_AGE.days} days ago: no number there can be {verb} until the platform's "
                        "operator imports its current files", "dnc_registry_stale",
                        inputs={"national_registry": national_input(touch.at, callee, standing)})
    if not standing.national_listed or national_exemption(touch.at, callee, standing.consent) is not None:
        return None
    return Decision(REFUSE, "national_dnc", SOURCES["national_dnc"],
                    f"{phone} is on the national do-not-call registry (area code {area_code(phone)}, refreshed "
                    f"{refreshed:%Y-%m-%d}); it can be {verb} only with their opt-in recorded (POST "
                    f"/api/v1/sms/consent) or an established business relationship: a purchase within "
                    f"{PURCHASE_MONTHS} months (their lead marked converted) or an inquiry within {INQUIRY_MONTHS} "
                    "months (they called or texted the business)", "number_on_dnc",
                    inputs={"national_registry": national_input(touch.at, callee, standing)})


def national_exemption(at: datetime, callee: Callee, consent: str) -> str | None:
    """What lets a touch reach a number on the registry: opt_in (their permission recorded), purchase (the lead
    converted within PURCHASE_MONTHS) or inquiry (they called or texted within INQUIRY_MONTHS: the lead's latest
    inbound contact, or the conversational consent an inbound contact of the last 30 days gives); None when
    nothing does."""
    if consent == "opted_in":
        return "opt_in"
    if callee.converted_at is not None and callee.converted_at > _months_before(at, PURCHASE_MONTHS):
        return "purchase"
    if consent == "conversational" or (callee.last_inbound_at is not None
                                       and callee.last_inbound_at > _months_before(at, INQUIRY_MONTHS)):
        return "inquiry"
    return None


def national_input(at: datetime, callee: Callee, standing: Standing) -> dict[str, Any]:
    """The registry's status for the number, for the decision log."""
    if standing.national != CHECKED:
        return {"status": standing.national}
    listed = standing.national_listed
    found: dict[str, Any] = {"status": CHECKED, "listed": listed, "refreshed_at": _iso(standing.national_refreshed_at)
                             if standing.national_refreshed_at else None}
    if listed:
        found["exemption"] = national_exemption(at, callee, standing.consent)
    return found


def area_code(phone: str) -> str | None:
    """The NANP area code of an E.164 number (+1NPA...), else None."""
    return phone[2:5] if phone.startswith("+1") and len(phone) == 12 else None


def _months_before(at: datetime, months: int) -> datetime:
    """The same instant `months` calendar months earlier (on the month's last day when it is shorter)."""
    year, month = divmod(at.year * 12 + at.month - 1 - months, 12)
    return at.replace(year=year, month=month + 1, day=min(at.day, monthrange(year, month + 1)[1]))


def _no_consent(channel: str, phone: str) -> Decision:
    if channel == SMS:
        return _refuse("no_consent_sms", "number_opted_out", f"{phone} has not opted in to messages from this "
                       "business: record their opt-in (POST /api/v1/sms/consent) or wait until they call or text "
                       "you first")
    return _refuse("no_consent_call", "number_opted_out", f"{phone} has not agreed to be called by this business's "
                   "AI agent: record their opt-in (POST /api/v1/sms/consent, which covers calls too), wait until "
                   "they call or text you, or mark their lead converted if they are a customer")


def _refuse(rule: str, code: str, message: str) -> Decision:
    return Decision(REFUSE, rule, SOURCES[rule], message, code)


# -- where the callee may be -------------------------------------------------------------------------

def _states(callee: Callee) -> list[str]:
    """The US states whose law applies: the area code's and the lead's stated one (both, without repeats)."""
    return where.possible_states(callee.phone, callee.lead_state)


def callee_zones(callee: Callee, sender: str | None, at: datetime,
                 rows: tuple[StateRule, ...] = (FEDERAL,)) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(zones, why each) the touch is judged in (see core.compliance.zones). The zones the facts place the callee
    in are all kept, even when no moment is legal in all of them (the caller then refuses); a fallback is used
    only when some moment within the horizon is legal in it."""
    placed: dict[str, str] = {}
    for facts, why in (((callee.timezone,) if callee.timezone else (), "stated"),
                       (where.state_zones(callee.lead_state), "lead_state"),
                       (where.narrowed_zones(callee.phone), "area_code")):
        for z in facts:
            placed.setdefault(z, why)
    if placed:
        return tuple(placed), tuple(placed.values())
    for zones, why in ((where.narrowed_zones(sender) if sender else (), "sender"),
                       (where.number_zones(callee.phone), "country")):
        if zones and _next_legal(at, zones, rows) is not None:
            return zones, (why,) * len(zones)
    return ("UTC",), ("unknown",)


def _disjoint_message(callee: Callee, zones: tuple[str, ...], why: tuple[str, ...]) -> str:
    placed = ", ".join(f"{z} ({w.replace('_', ' ')})" for z, w in zip(zones, why, strict=True))
    return (f"no moment in the next {HORIZON.days} days is legal in every zone {callee.phone} may be in "
            f"({placed}); correct target.timezone or the lead's state if one is wrong")


# -- the windows -------------------------------------------------------------------------------------

def _rows(touch: Touch, states: list[str], nanp: bool) -> tuple[StateRule, ...]:
    """Every window that applies to the touch: the federal one (or the same abroad), the states', the business's."""
    rows = _law(touch.channel, tuple(states), nanp)
    if touch.business_hours is None:
        return rows
    h = touch.business_hours
    return (*rows, StateRule(state="business", statute=SOURCES["business_hours"], channels=FEDERAL.channels,
                             weekdays=h, saturday=h, sunday=h))


@lru_cache(maxsize=4096)
def _law(channel: str, states: tuple[str, ...], nanp: bool) -> tuple[StateRule, ...]:
    """The federal (or abroad) row and the rows of the states that cover the channel."""
    return (FEDERAL if nanp else ABROAD,
            *(RULES_BY_STATE[s] for s in states if s in RULES_BY_STATE and channel in RULES_BY_STATE[s].channels))


@cache
def _holidays(state: str) -> holidays.HolidayBase:
    """The state's legal holidays (federal ones included), years filled in as they are asked for."""
    return holidays.country_holidays("US", subdiv=state)


def _window(row: StateRule, day: date) -> Hours | None:
    if row.holidays_closed and day in _holidays(row.state):
        return None
    return row.window(day.weekday())


def _violation(at: datetime, zones: tuple[str, ...], rows: tuple[StateRule, ...]) -> tuple[str, StateRule] | None:
    """The first (zone, row) whose window is closed at `at`, or None when every window is open in every zone."""
    for name in zones:
        local = at.astimezone(where.zone(name))
        day, now = local.date(), local.time()
        for row in rows:
            window = _window(row, day)
            if window is None or not window.start <= now < window.end:
                return name, row
    return None


def _opening(row: StateRule, name: str, after: datetime) -> datetime | None:
    """The first moment after `after` the row's window opens in the zone (DST-correct: the window's start on that
    local date), or None within the horizon."""
    tz = where.zone(name)
    first = after.astimezone(tz).date()
    for days in range(HORIZON.days + 1):
        day = first + timedelta(days=days)
        window = _window(row, day)
        if window is None:
            continue
        opens = datetime.combine(day, window.start, tz).astimezone(UTC)
        if opens > after:
            return opens
    return None


def _next_legal(start: datetime, zones: tuple[str, ...], rows: tuple[StateRule, ...],
                closed: tuple[str, StateRule] | None = None) -> datetime | None:
    """The first moment at or after `start` legal in every zone under every row: move to the next opening of
    whichever window is closed until none is (each move skips only moments that window forbids). `closed` is the
    window already found closed at `start`, if the caller looked."""
    at, limit = start, start + HORIZON
    if closed is None:
        closed = _violation(at, zones, rows)
    while at <= limit:
        if closed is None:
            return at
        opening = _opening(closed[1], closed[0], at)
        if opening is None:
            return None
        at = opening
        closed = _violation(at, zones, rows)
    return None


def _window_message(touch: Touch, name: str, row: StateRule, when: datetime) -> tuple[str, str]:
    local = touch.at.astimezone(where.zone(name))
    it_is = f"it is {local:%A %H:%M} in {name} for the recipient"
    things = "calls" if touch.channel == CALL else "texts"
    window = _window(row, local.date())
    if row.state == "business":
        rule, why = "business_hours", f"this business calls only {window} in the callee's time zone"
    elif row.state in ("US", "--"):
        rule, why = "federal_hours", f"{things} are allowed {window} in the recipient's time zone ({row.statute})"
    else:
        rule = "state_hours"
        if window is None:
            day = "legal holidays" if row.holidays_closed and local.date() in _holidays(row.state) else \
                f"{local:%A}s"
            why = f"{row.state} ({row.statute}) allows no {things} on {day}"
        else:
            why = f"{row.state} ({row.statute}) allows {things} {window} on {local:%A}s"
    return rule, f"quiet hours: {it_is}; {why}, next at {_iso(when)}"


# -- how often ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Cap:
    """One cap on the touch: at most `limit` touches of `channels` per rolling 24 hours."""

    limit: int
    channels: frozenset[str]
    source: str  # the citation
    who: str  # who sets it, for the message
    counted: tuple[Counted, ...]  # the touches of its channels in the 24 hours before the touch, oldest first

    def frees_at(self) -> datetime | None:
        """When the count falls below the limit, if it is reached now."""
        if len(self.counted) < self.limit:
            return None
        return self.counted[len(self.counted) - self.limit].at + DAY


def _caps(channel: str, recent: list[Counted], rows: tuple[StateRule, ...], policy: Policy) -> list[_Cap]:
    """The caps on a touch of `channel` given the touches of the 24 hours before it (`recent`, oldest first; one
    stamped a moment after the touch, by another replica's clock, counts too: the caps err strict): each state
    row's that covers the channel (counting every channel the row covers), then the platform's for the channel."""
    caps = [_Cap(r.max_calls_per_24h, r.channels, r.statute, f"{r.state} ({r.statute})",
                 tuple(t for t in recent if t.channel in r.channels))
            for r in rows if r.max_calls_per_24h is not None]
    caps.append(_Cap(policy.per_24h(channel), frozenset((channel,)), PLATFORM_CAP_SOURCES[channel], "the platform",
                     tuple(t for t in recent if t.channel == channel)))
    return caps


def _touches(counted: tuple[Counted, ...]) -> str:
    """'2 calls and 1 text'."""
    calls = sum(1 for t in counted if t.channel == CALL)
    texts = len(counted) - calls
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((calls, "call"), (texts, "text")) if n]
    return " and ".join(parts)


def _things(channels: frozenset[str]) -> str:
    return "calls and texts" if channels == frozenset(CHANNELS) else "calls" if CALL in channels else "texts"


def _local(at: datetime, name: str) -> str:
    return at.astimezone(where.zone(name)).isoformat(timespec="minutes")


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="minutes").replace("+00:00", "Z")
