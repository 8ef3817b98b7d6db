"""The sales pipeline's rules: the SDR config (its safe defaults and checks), the segment of a lead, the cadence,
and the next action with the reason for it. Plain functions, no I/O: the service loads each lead's signals and
its compliance standing and passes them in.

Signals come from what the platform records of a lead (services.sdr): its status, source, score and creation
time; its interactions (inbound and outbound calls, texts, emails, with their times); and the pipeline's own
touches (touch_count, last_touch). A lead is a "demo caller" once it has called the business and talked to its
agent (an inbound call); a "trial" lead is one whose source is `trial` (a product trial that started when the lead
was created and lasts TRIAL_DAYS).

Segments, the first rule that matches wins:

| segment | rule |
|---|---|
| churned_recent | status lost, changed within the last CHURN_DAYS |
| cold | any other closed lead (CLOSED_STATUSES) |
| exhausted | touch_count >= max_touches: the next touch would exceed the cap |
| fresh_demo_caller | an inbound call within the last 24 hours |
| speed_to_lead | status new, created within the last 24 hours, never touched |
| trial_ending | a trial lead whose trial ends within TRIAL_ENDING_DAYS |
| new_trial_stuck | a trial lead in its first TRIAL_STUCK_DAYS with no inbound interaction since it started |
| trial_going_dark | a trial lead that answered before but not within the last GOING_DARK_DAYS |
| warm_demo_caller | an inbound call 1 to 7 days ago |
| cooling_demo | an inbound call 7 to 30 days ago |
| contacted_no_reply | touched at least once, with no inbound interaction since the last touch |
| cold | anything else |
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any

from core.compliance import decision as compliance
from core.compliance.rules import Hours, hours
from core.errors import invalid

NEXT_ACTIONS = ("call", "email", "sms", "skip", "escalate")
TOUCHES = ("call", "email", "sms")  # the actions that touch the lead and count towards the cadence
CLOSED_STATUSES = ("converted", "lost", "unqualified", "spam", "do_not_contact")  # never actionable

DAY = timedelta(days=1)
CHURN_DAYS = 30
TRIAL_SOURCE, TRIAL_DAYS, TRIAL_ENDING_DAYS, TRIAL_STUCK_DAYS, GOING_DARK_DAYS = "trial", 14, 3, 3, 5
HOT_SEGMENTS = ("speed_to_lead", "fresh_demo_caller", "new_trial_stuck")

# The channel each segment is worked through first, then the others in order when the lead lacks the contact
# (no phone for a call or text, no email) or the business turned that channel's automation off.
PREFERRED: dict[str, tuple[str, ...]] = {
    "speed_to_lead": ("call", "sms", "email"),
    "fresh_demo_caller": ("call", "sms", "email"),
    "warm_demo_caller": ("sms", "call", "email"),
    "cooling_demo": ("email", "sms"),
    "new_trial_stuck": ("email", "call"),
    "trial_going_dark": ("email", "sms"),
    "trial_ending": ("call", "email"),
    "contacted_no_reply": ("sms", "email"),
}


# -- config ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    """A business's SDR config; these defaults stand while it has saved none: off, and careful when turned on."""

    enabled: bool = False
    min_touch_gap_hours: int = 48
    max_touches: int = 6
    auto_call: bool = False
    auto_email: bool = False
    auto_sms: bool = False
    sdr_agent_id: str | None = None
    business_hours_start: int = 9  # in the lead's local time
    business_hours_end: int = 17
    email_from_account_id: str | None = None

    def auto(self, channel: str) -> bool:
        switch: bool = getattr(self, f"auto_{channel}")
        return switch

    @property
    def business_hours(self) -> Hours:
        return hours(self.business_hours_start, self.business_hours_end)

    @property
    def touch_gap(self) -> timedelta:
        return timedelta(hours=self.min_touch_gap_hours)


CONFIG_FIELDS = tuple(f.name for f in fields(Config))
CONFIG_BOUNDS = {"min_touch_gap_hours": (0, 24 * 90), "max_touches": (1, 100)}


def changed_config(current: Config, changes: dict[str, Any]) -> Config:
    """The config with a PUT's changes (None or absent: unchanged), checked as a whole; 400 naming the field."""
    unknown = sorted(set(changes) - set(CONFIG_FIELDS))
    if unknown:
        raise invalid(f"unknown field {unknown[0]}; the config has {', '.join(CONFIG_FIELDS)}")
    values = {k: v for k, v in changes.items() if v is not None}
    for name in ("enabled", "auto_call", "auto_email", "auto_sms"):
        if name in values and not isinstance(values[name], bool):
            raise invalid(f"{name} must be true or false")
    for name, (low, high) in CONFIG_BOUNDS.items():
        if name in values and (not _whole(values[name]) or not low <= values[name] <= high):
            raise invalid(f"{name} must be a whole number from {low} to {high}")
    for name in ("business_hours_start", "business_hours_end"):
        if name in values and (not _whole(values[name]) or not 0 <= values[name] <= 23):
            raise invalid(f"{name} must be a whole hour from 0 to 23 (the lead's local time)")
    for name in ("sdr_agent_id", "email_from_account_id"):
        if name in values and not isinstance(values[name], str):
            raise invalid(f"{name} must be a string id (an empty string clears it)")
        if values.get(name) == "":
            values[name] = None
    config = replace(current, **values)
    if config.business_hours_start >= config.business_hours_end:
        raise invalid(f"business_hours_start ({config.business_hours_start}) must be before business_hours_end "
                      f"({config.business_hours_end})")
    return config


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- segments -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Signals:
    """What the platform recorded of a lead, as the segment and next action read it."""

    status: str
    source: str
    created_at: datetime
    updated_at: datetime
    touch_count: int = 0
    last_touch: datetime | None = None
    paused: bool = False
    phone: str | None = None
    email: str | None = None
    last_inbound_call: datetime | None = None
    last_inbound: datetime | None = None  # any channel
    first_inbound: datetime | None = None

    @property
    def trial_ends(self) -> datetime | None:
        return self.created_at + TRIAL_DAYS * DAY if self.source == TRIAL_SOURCE else None


def segment(lead: Signals, config: Config, now: datetime) -> str:
    """The lead's segment by the table of the module docstring."""
    if lead.status == "lost" and now - lead.updated_at <= CHURN_DAYS * DAY:
        return "churned_recent"
    if lead.status in CLOSED_STATUSES:
        return "cold"
    if lead.touch_count >= config.max_touches:
        return "exhausted"
    called_ago = now - lead.last_inbound_call if lead.last_inbound_call else None
    if called_ago is not None and called_ago <= DAY:
        return "fresh_demo_caller"
    if lead.status == "new" and now - lead.created_at <= DAY and lead.touch_count == 0:
        return "speed_to_lead"
    if lead.trial_ends is not None and now < lead.trial_ends:
        if lead.trial_ends - now <= TRIAL_ENDING_DAYS * DAY:
            return "trial_ending"
        if lead.first_inbound is None and now - lead.created_at <= TRIAL_STUCK_DAYS * DAY:
            return "new_trial_stuck"
        if lead.last_inbound is not None and now - lead.last_inbound > GOING_DARK_DAYS * DAY:
            return "trial_going_dark"
    if called_ago is not None and called_ago <= 7 * DAY:
        return "warm_demo_caller"
    if called_ago is not None and called_ago <= 30 * DAY:
        return "cooling_demo"
    touched = lead.last_touch  # set whenever touch_count is
    if lead.touch_count and (lead.last_inbound is None or (touched is not None and lead.last_inbound < touched)):
        return "contacted_no_reply"
    return "cold"


def steady_until(lead: Signals, config: Config, now: datetime) -> datetime | None:
    """The first instant from `now` at which the clock alone may change the lead's segment or its next action
    without the compliance facts (None: only a change of its signals or of the config can). The pipeline stores
    both with this instant and computes them again once it has passed: each boundary of the segment table and the
    end of the cadence's gap. An instant equal to `now` is kept (a `<=` rule changes just after it)."""
    moments = [lead.created_at + DAY, lead.created_at + TRIAL_STUCK_DAYS * DAY]
    if lead.status == "lost":
        moments.append(lead.updated_at + CHURN_DAYS * DAY)
    if lead.last_inbound_call is not None:
        moments += [lead.last_inbound_call + DAY, lead.last_inbound_call + 7 * DAY, lead.last_inbound_call + 30 * DAY]
    if lead.trial_ends is not None:
        moments += [lead.trial_ends - TRIAL_ENDING_DAYS * DAY, lead.trial_ends]
    if lead.last_inbound is not None:
        moments.append(lead.last_inbound + GOING_DARK_DAYS * DAY)
    if lead.last_touch is not None:
        moments.append(lead.last_touch + config.touch_gap)
    return min((m for m in moments if m >= now), default=None)


def changes_next_actions(before: Config, after: Config) -> bool:
    """Whether a config change may change segments or next actions without the compliance facts (the cap, the
    gap, the auto toggles), so the stored ones must be computed again."""
    return any(getattr(before, name) != getattr(after, name)
               for name in ("max_touches", "min_touch_gap_hours", "auto_call", "auto_email", "auto_sms"))


# -- cadence --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CadenceStop:
    """Why a touch must wait (or may never come), and from when it is allowed (None: never, the cap is reached)."""

    reason: str
    next_allowed_at: datetime | None


def cadence_stop(lead: Signals, config: Config, now: datetime) -> CadenceStop | None:
    """None when the lead may be touched now by the cadence; else why not and from when."""
    if lead.touch_count >= config.max_touches:
        return CadenceStop(f"the lead had {lead.touch_count} touches; the cap is {config.max_touches} "
                           "(max_touches)", None)
    if lead.last_touch is not None and now < lead.last_touch + config.touch_gap:
        allowed = lead.last_touch + config.touch_gap
        return CadenceStop(f"the last touch was {_ago(now - lead.last_touch)} ago; touches are at least "
                           f"{config.min_touch_gap_hours} hours apart (min_touch_gap_hours)", allowed)
    return None


def _ago(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


# -- next action ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NextAction:
    action: str  # NEXT_ACTIONS
    reason: str
    not_before: datetime | None = None  # a skip that waits: when the touch becomes possible


_A = {"call": "a call", "sms": "a text", "email": "an email"}


@dataclass(frozen=True)
class Facts:
    """What the service found for the next action beyond the lead's signals."""

    standing: compliance.Standing = field(default_factory=compliance.Standing)
    callee: compliance.Callee | None = None  # the lead as the compliance decision knows it (None: no phone)
    recent: tuple[compliance.Counted, ...] = ()  # the touches of the ledger in the last 24 hours
    policy: compliance.Policy = field(default_factory=compliance.Policy)  # the platform's configured caps


def next_action(lead: Signals, segment_: str, config: Config, facts: Facts | None, now: datetime) -> NextAction:
    """The lead's next action and why: never for a closed or paused lead; escalate when the owner must act (the
    cap reached, or the only fitting channel's automation is off); a touch waits for the cadence and, for calls
    and texts, for the compliance decision in the lead's own time (the legal window, the business hours, the
    frequency cap), and is never proposed against do-not-call or a missing consent. With `facts` None the
    compliance decision is not asked (a count over many leads: each lead's own next action asks it)."""
    if lead.status in CLOSED_STATUSES:
        return NextAction("skip", f"the lead is {lead.status}: never worked by the pipeline")
    if lead.paused:
        return NextAction("skip", "the lead is paused; resume it to work it again")
    if segment_ == "exhausted":
        return NextAction("escalate", f"every touch is used ({lead.touch_count} of {config.max_touches}); the "
                          "owner decides what comes next")
    channels = PREFERRED.get(segment_)
    if channels is None:
        return NextAction("skip", f"segment {segment_}: nothing to do now")
    reachable = [c for c in channels if (lead.email if c == "email" else lead.phone)]
    if not reachable:
        return NextAction("escalate", f"segment {segment_} is worked by {', '.join(channels)}, and the lead has "
                          "neither the phone nor the email for it")
    automated = [c for c in reachable if config.auto(c)]
    if not automated:
        return NextAction("escalate", f"segment {segment_}: a {reachable[0]} is due and auto_{reachable[0]} is off; "
                          "the owner makes it")
    stop = cadence_stop(lead, config, now)
    if stop is not None:
        return NextAction("skip", stop.reason, stop.next_allowed_at)
    waits: list[tuple[str, compliance.Decision]] = []
    for channel in automated:
        instead = f" ({_waiting(*waits[0])})" if waits else ""
        if channel == "email" or facts is None:
            return NextAction(channel, f"segment {segment_}: {_A[channel]}{instead}")
        assert lead.phone is not None  # reachable: a call or a text has the lead's phone
        decided = compliance.decide(
            compliance.Touch(channel, now, business_hours=config.business_hours, recent=facts.recent),
            facts.callee or compliance.Callee(lead.phone), facts.standing, facts.policy)
        if decided.allowed:
            return NextAction(channel, f"segment {segment_}: {_A[channel]} now, inside the lead's legal window and "
                              f"business hours{instead}")
        waits.append((channel, decided))
    channel, decided = waits[0]
    return NextAction("skip", _waiting(channel, decided),
                      decided.not_before if decided.outcome == compliance.DEFER else None)


def _waiting(channel: str, decided: compliance.Decision) -> str:
    """Why a call or text cannot go now, as a next action's reason says it."""
    if decided.outcome == compliance.DEFER:
        return f"a {channel} waits: {decided.message}"
    return f"no {channel}: {decided.message}"
