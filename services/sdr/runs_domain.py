"""Communication runs, the rules: the run shape checked problem by problem, the states of runs, jobs and call
attempts and the moves between them, the retry policy, and the planned time of each touch. Plain functions, no I/O.

A run is the caller's schedule: touches (a call or a text to one person at an instant). Each touch becomes a job,
executed at its time by the scheduler (services.sdr.runs_scheduler) through the outbound compliance decision; a
call touch makes one attempt per call placed, and an attempt that ends no-answer, busy or failed is retried by the
run's policy.
"""
from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from contracts.runs import (
    ACTIONS,
    ANSWERED,
    CHANNELS,
    DEFERRED,
    FAILED,
    FIRST_MESSAGE_MAX,
    HORIZON,
    MAX_TOUCHES,
    PENDING,
    REF_MAX,
    RETRY_BOUNDS,
    RETRYABLE,
    RETRYING,
    RUN_MOVES,
    RUNNING,
    SCHEDULED,
    SMS_BODY_MAX,
    SUCCEEDED,
    RetryPolicy,
)
from core.compliance import decision as compliance
from core.compliance import zones
from core.compliance.rules import Hours
from core.contact import normalize_e164
from core.errors import ServiceError
from core.ids import is_uuid

T = TypeVar("T")

PAST_GRACE = timedelta(hours=24)  # how far back: a touch a little in the past goes out at once
CONTEXT_MAX_BYTES = 8_000
RUN_FIELDS = frozenset({"business_id", "external_ref", "agent_id", "touches", "retry"})
TOUCH_FIELDS = frozenset({"touch_id", "channel", "target", "scheduled_at", "context"})
TARGET_FIELDS = frozenset({"phone", "timezone"})

# -- states ---------------------------------------------------------------------------------------------------


# The compliance decision's refusal codes, and a provider's refusal of a call or text.
REFUSAL_CODES = ("number_on_dnc", "dnc_registry_stale", "number_opted_out", "tcpa_violation", "content_blocked")
PROVIDER_CODES = ("call_failed", "sms_send_failed")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a run: where (the touch's index and id, the field) and what to fix."""

    field: str
    message: str
    index: int | None = None
    touch_id: str | None = None

    def line(self) -> str:
        where = f"touches[{self.index}] ({self.touch_id!r}) " if self.index is not None else ""
        return f"{where}{self.field}: {self.message}"


@dataclass(frozen=True)
class Touch:
    index: int
    touch_id: str
    channel: str
    phone: str
    timezone: str | None
    scheduled_at: datetime
    context: dict[str, Any]
    agent_id: str | None  # the touch's own (context.agent_id), else the run's (None when the run names none)

    @property
    def lead_id(self) -> str | None:
        return self.context.get("lead_id")


@dataclass(frozen=True)
class Run:
    """A checked run (business_id as given: the service checks it against the caller)."""

    business_id: str | None
    external_ref: str
    agent_id: str | None
    touches: tuple[Touch, ...]
    retry: RetryPolicy = field(default_factory=RetryPolicy)


class Problems(list[Problem]):
    def add(self, field_: str, message: str, touch: dict[str, Any] | None = None, index: int | None = None) -> None:
        touch_id = touch.get("touch_id") if isinstance(touch, dict) else None
        self.append(Problem(field_, message, index, touch_id if isinstance(touch_id, str) else None))


def check_run(body: object, now: datetime) -> tuple[Run | None, list[Problem]]:
    """The run of a request body, or every problem with it (each touch checked in full)."""
    problems = Problems()
    if not isinstance(body, dict):
        problems.add("body", "the run must be a JSON object with external_ref and touches")
        return None, problems
    for name in sorted(set(body) - RUN_FIELDS):
        problems.add(name, f"unknown field; a run has {', '.join(sorted(RUN_FIELDS))}")
    business_id = _optional_uuid(body, "business_id", problems)
    agent_id = _optional_uuid(body, "agent_id", problems)
    external_ref = _text(body.get("external_ref"), "external_ref", REF_MAX, problems)
    retry = _retry(body.get("retry"), problems)
    raw = body.get("touches")
    touches: list[Touch] = []
    if not isinstance(raw, list) or not raw:
        problems.add("touches", "required: a non-empty array of touches")
    elif len(raw) > MAX_TOUCHES:
        problems.add("touches", f"{len(raw)} touches; a run has at most {MAX_TOUCHES} (split it into several runs)")
    else:
        seen: dict[str, int] = {}
        for index, item in enumerate(raw):
            touch = _touch(item, index, now, agent_id, problems)
            touch_id = item.get("touch_id") if isinstance(item, dict) else None
            if isinstance(touch_id, str) and touch_id in seen:
                problems.add("touch_id", f"duplicate of touches[{seen[touch_id]}]: each touch_id is used once "
                             "in a run", item, index)
            elif isinstance(touch_id, str):
                seen[touch_id] = index
            if touch is not None:
                touches.append(touch)
    if problems:
        return None, list(problems)
    assert external_ref is not None  # a problem otherwise
    return Run(business_id, external_ref, agent_id, tuple(touches), retry), []


def _touch(item: object, index: int, now: datetime, run_agent: str | None, problems: Problems) -> Touch | None:
    if not isinstance(item, dict):
        problems.add("touch", "each touch must be an object {touch_id, channel, target, scheduled_at, context}",
                     index=index)
        return None
    before = len(problems)

    def add(name: str, message: str) -> None:
        problems.add(name, message, item, index)

    for name in sorted(set(item) - TOUCH_FIELDS):
        add(name, f"unknown field; a touch has {', '.join(sorted(TOUCH_FIELDS))}")
    touch_id = _text(item.get("touch_id"), "touch_id", REF_MAX, problems, item, index)
    channel = item.get("channel")
    if channel not in CHANNELS:
        add("channel", f"must be one of {', '.join(CHANNELS)}")
    phone = timezone = None
    target = item.get("target")
    if not isinstance(target, dict):
        add("target", "required: an object {phone, timezone}")
    else:
        for name in sorted(set(target) - TARGET_FIELDS):
            add(f"target.{name}", "unknown field; a target has phone and timezone")
        phone = _checked(lambda: _e164(_string(target.get("phone"))), "target.phone", add)
        if target.get("timezone") is not None:
            timezone = _checked(lambda: zones.check_zone(_string(target["timezone"]), "timezone"), "target.timezone",
                                add)
    scheduled_at = _instant(item.get("scheduled_at"), now, add)
    context = item.get("context", {})
    agent_id = run_agent
    if not isinstance(context, dict):
        add("context", "must be an object")
        context = {}
    else:
        if len(json.dumps(context, separators=(",", ":"))) > CONTEXT_MAX_BYTES:
            add("context", f"is over {CONTEXT_MAX_BYTES} bytes as JSON")
        for name in ("agent_id", "lead_id"):
            if name in context and not is_uuid(context[name]):
                add(f"context.{name}", "must be a UUID")
        agent_id = context.get("agent_id", run_agent)
        text = context.get("body")
        if channel == "sms" and (not isinstance(text, str) or not text.strip()):
            add("context.body", "required for an sms touch: the text to send")
        elif channel == "sms" and isinstance(text, str) and len(text) > SMS_BODY_MAX:  # a string, said above
            add("context.body", f"is over {SMS_BODY_MAX} characters")
        first = context.get("first_message")
        if first is not None and (not isinstance(first, str) or len(first) > FIRST_MESSAGE_MAX):
            add("context.first_message", f"must be text of at most {FIRST_MESSAGE_MAX} characters")
    if len(problems) > before:
        return None
    # each was checked: a problem otherwise
    assert touch_id is not None and isinstance(channel, str) and phone is not None and scheduled_at is not None
    return Touch(index, touch_id, channel, phone, timezone, scheduled_at, context, agent_id)


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise ServiceError("invalid_request", "required: a string")
    return value


def _e164(value: str) -> str:
    number, problem = _e164_verdict(value)
    if problem is not None:
        raise ServiceError("invalid_request", problem)
    assert number is not None
    return number


@functools.lru_cache(maxsize=20_000)
def _e164_verdict(value: str) -> tuple[str | None, str | None]:
    """libphonenumber's verdict on a touch's phone, (number, None) or (None, what is wrong), remembered: a run reaches
    one person in several touches, and an invalid +1 number costs it about half a millisecond (a run of 10,000 such
    touches was seconds)."""
    try:
        return normalize_e164(value, "phone"), None
    except ServiceError as err:
        return None, err.message


def _checked(check: Callable[[], T], name: str, add: Callable[[str, str], None]) -> T | None:
    try:
        return check()
    except ServiceError as err:
        add(name, err.message.removeprefix("phone ").removeprefix("timezone: "))
        return None


def _text(value: object, name: str, high: int, problems: Problems, touch: dict[str, Any] | None = None,
          index: int | None = None) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.add(name, "required: a non-empty string", touch, index)
    elif len(value) > high:
        problems.add(name, f"is over {high} characters", touch, index)
    else:
        return value
    return None


def _optional_uuid(body: dict[str, Any], name: str, problems: Problems) -> str | None:
    value = body.get(name)
    if value is not None and not is_uuid(value):
        problems.add(name, "must be a UUID")
        return None
    return value


def _instant(value: object, now: datetime, add: Callable[[str, str], None]) -> datetime | None:
    """An RFC 3339 instant with its offset (Z for UTC): a time without one is refused rather than guessed."""
    if not isinstance(value, str):
        add("scheduled_at", "required: an RFC 3339 timestamp such as 2026-01-31T14:30:00Z")
        return None
    try:
        at = datetime.fromisoformat(value.strip().upper())
    except ValueError:
        add("scheduled_at", f"{value[:40]!r} is not an RFC 3339 timestamp such as 2026-01-31T14:30:00Z")
        return None
    if "T" not in value.upper() or at.tzinfo is None:
        add("scheduled_at", "needs a date, a time and an offset (Z for UTC), e.g. 2026-01-31T14:30:00Z")
        return None
    if at > now + HORIZON:
        add("scheduled_at", f"is more than {HORIZON.days} days ahead")
    elif at < now - PAST_GRACE:
        add("scheduled_at", f"is more than {int(PAST_GRACE.total_seconds() // 3600)} hours in the past")
    else:
        return at
    return None


def _retry(value: object, problems: Problems) -> RetryPolicy:
    if value is None:
        return RetryPolicy()
    if not isinstance(value, dict):
        problems.add("retry", "must be an object {max_retries, backoff_seconds, retry_on}")
        return RetryPolicy()
    policy = RetryPolicy()
    for name in sorted(set(value) - {"max_retries", "backoff_seconds", "retry_on"}):
        problems.add(f"retry.{name}", "unknown field; retry has max_retries, backoff_seconds and retry_on")
    low, high = RETRY_BOUNDS["max_retries"]
    retries = value.get("max_retries", policy.max_retries)
    if not _whole(retries) or not low <= retries <= high:
        problems.add("retry.max_retries", f"must be a whole number from {low} to {high}")
    low, high = RETRY_BOUNDS["backoff_seconds"]
    backoff = value.get("backoff_seconds", list(policy.backoff_seconds))
    if not isinstance(backoff, list) or not 1 <= len(backoff) <= 10 or \
            not all(_whole(s) and low <= s <= high for s in backoff):
        problems.add("retry.backoff_seconds", f"must be 1 to 10 whole numbers of seconds from {low} to {high}")
    retry_on = value.get("retry_on", list(policy.retry_on))
    if not isinstance(retry_on, list) or not all(isinstance(o, str) for o in retry_on) or \
            not set(retry_on) <= set(RETRYABLE) or len(set(retry_on)) != len(retry_on):
        problems.add("retry.retry_on", f"must list call outcomes among {', '.join(RETRYABLE)}, each once")
    if any(p.field.startswith("retry") for p in problems):
        return policy
    return RetryPolicy(int(retries), tuple(int(s) for s in backoff), tuple(retry_on))


def _whole(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer()


def problems_error(problems: list[Problem]) -> ServiceError:
    """The 400 of a run that cannot be previewed or created: the first problems, and where to see them all."""
    shown = "; ".join(p.line() for p in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return ServiceError("invalid_request", f"the run has {len(problems)} problem(s): {shown}{more}; POST "
                        "/api/v1/communication-runs/validate lists them all")


def request_hash(body: object) -> str:
    """The body's fingerprint for the Idempotency-Key: the same JSON in any key order is the same request."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# -- agents ---------------------------------------------------------------------------------------------------

def agent_problems(run: Run, numbers: dict[str, str | None]) -> tuple[str | None, list[Problem]]:
    """The run's agent, stored with it and placing the touches that name none, and the problems of the agents named:
    `numbers` maps each of the business's agents to its phone number (None without one). Unnamed, it is the agent
    every touch names (context.agent_id), else the business's one agent with a number."""
    problems = Problems()
    named = {t.agent_id for t in run.touches}  # each touch's own, else the run's
    default = run.agent_id
    if default is None and len(named) == 1 and None not in named:
        default = named.pop()  # checked below as the touches' agent
    elif default is None:
        with_numbers = sorted(a for a, n in numbers.items() if n)
        if len(with_numbers) == 1:
            default = with_numbers[0]
        elif None in named:
            problems.add("agent_id", "the business has no agent with a phone number: assign one a number" if not
                         with_numbers else f"required: the business has {len(with_numbers)} agents with numbers; "
                         "name the one that places the touches (or context.agent_id per touch)")
        elif with_numbers:  # without, each touch's agent is a problem of its own
            problems.add("agent_id", f"required: the touches name {len(named)} agents in context.agent_id; give "
                         "agent_id, the run's own agent (a touch's context.agent_id still places that touch)")
    else:
        _agent_problem(default, numbers, lambda m: problems.add("agent_id", m))
    for touch in run.touches:
        if touch.agent_id is not None and touch.agent_id != run.agent_id:
            def add(message: str, t: Touch = touch) -> None:
                problems.add("context.agent_id", message, {"touch_id": t.touch_id}, t.index)

            _agent_problem(touch.agent_id, numbers, add)
    return default, list(problems)


def _agent_problem(agent_id: str, numbers: dict[str, str | None], add: Callable[[str], None]) -> None:
    if agent_id not in numbers:
        add(f"no agent {agent_id} in the business")
    elif not numbers[agent_id]:
        add(f"agent {agent_id} has no phone number: assign it one before it calls or texts")


# -- moves ----------------------------------------------------------------------------------------------------

def run_after(status: str, action: str, started: bool) -> str:
    """The run's state after an action (`started`: a touch was executed), or 409 conflict saying why not."""
    if action not in RUN_MOVES:
        raise ServiceError("invalid_request", f"action must be one of {', '.join(ACTIONS)}")
    sources, target = RUN_MOVES[action]
    if status not in sources:
        raise ServiceError("conflict", f"the run is {status}; {action} applies to a run that is "
                           f"{' or '.join(sources)}")
    if target is None:
        return RUNNING if started else SCHEDULED
    return target


@dataclass(frozen=True)
class AttemptEnd:
    """What a call attempt's outcome does to its job."""

    job_status: str  # SUCCEEDED, RETRYING, FAILED
    retry_eligible: bool
    reason: str
    retry_at: datetime | None = None


def attempt_end(outcome: str, attempt: int, policy: RetryPolicy, canceled: bool, ended_at: datetime) -> AttemptEnd:
    """The job after its `attempt`-th call ended with `outcome` (a call status); `canceled`: its run was, meanwhile
    (a retry of a paused run waits in the job's paused state: services.sdr.runs_outcomes)."""
    if outcome in ANSWERED:
        return AttemptEnd(SUCCEEDED, False, f"the call ended {outcome}")
    if outcome not in policy.retry_on:
        return AttemptEnd(FAILED, False, f"the call ended {outcome}; the run's policy does not retry it")
    if attempt > policy.max_retries:
        return AttemptEnd(FAILED, False, f"the call ended {outcome}; no retry left ({policy.max_retries} made)")
    if canceled:
        return AttemptEnd(FAILED, False, f"the call ended {outcome}; not retried: the run was canceled")
    at = ended_at + policy.delay(attempt)
    return AttemptEnd(RETRYING, True, f"the call ended {outcome}; retry {attempt} of {policy.max_retries} after "
                      f"{policy.delay(attempt)}", at)


# -- the plan -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Planned:
    touch: Touch
    decision: compliance.Decision
    at: datetime  # when it would go out (the requested time, or now if that is past)

    @property
    def planned_at(self) -> datetime | None:
        if self.decision.outcome == compliance.DEFER:
            return self.decision.not_before
        return self.at if self.decision.allowed else None


def plan(run: Run, now: datetime, standings: dict[str, compliance.Standing],
         recent: dict[str, list[compliance.Counted]], leads: dict[str, dict[str, Any]], senders: dict[str, str],
         policy: compliance.Policy, business_hours: Hours | None = None) -> list[Planned]:
    """Each touch with the decision it would get at its time (nothing is stored or sent). The calls and texts the
    run itself places count towards the frequency caps of the touches after them, after those of the ledger
    (`recent`). `leads` holds the business's lead of each phone ({id, state, status, converted_at,
    last_inbound_at}); `senders` the number of each agent; `business_hours` the business's own calling hours (its
    saved SDR config's)."""
    touched: dict[str, list[compliance.Counted]] = {p: list(counted) for p, counted in recent.items()}
    planned = []
    for touch in sorted(run.touches, key=lambda t: (t.scheduled_at, t.index)):
        at = max(touch.scheduled_at, now)
        lead = leads.get(touch.phone, {})
        callee = compliance.Callee(phone=touch.phone, timezone=touch.timezone, lead_id=lead.get("id"),
                                   lead_state=lead.get("state"), lead_status=lead.get("status"),
                                   converted_at=lead.get("converted_at"), last_inbound_at=lead.get("last_inbound_at"))
        earlier = tuple(t for t in touched.get(touch.phone, ()) if at - compliance.DAY < t.at <= at)
        decided = compliance.decide(compliance.Touch(touch.channel, at, sender=senders.get(touch.agent_id or ""),
                                                     business_hours=business_hours, recent=earlier),
                                    callee, standings.get(touch.phone, compliance.Standing()), policy)
        one = Planned(touch, decided, at)
        if one.planned_at is not None:
            touched.setdefault(touch.phone, []).append(compliance.Counted(touch.channel, one.planned_at))
        planned.append(one)
    return sorted(planned, key=lambda p: p.touch.index)


def as_created(planned: Planned) -> dict[str, Any]:
    """A job's first values, from the decision its touch gets at the run's creation (as the preview shows it): a
    deferral makes it deferred, due at the instant the decision names, with the rule, code and why; a refusal leaves
    it pending at its time with the rule, code and why (a consent or a do-not-call removal may come before then).
    The scheduler decides again, as of then, whenever a job is due. Every job gets the same keys (one insert of
    them all)."""
    d = planned.decision
    if d.allowed:
        return {"status": PENDING, "due_at": planned.at, "rule": None, "code": None, "reason": None}
    if d.outcome == compliance.DEFER:
        return {"status": DEFERRED, "due_at": d.not_before, "rule": d.rule, "code": d.code, "reason": d.message}
    return {"status": PENDING, "due_at": planned.at, "rule": d.rule, "code": d.code,
            "reason": f"as things stood at the run's creation it would be refused: {d.message}; decided again at its "
                      "time"}


def plan_summary(planned: list[Planned]) -> dict[str, Any]:
    """The plan's counts by channel and by outcome, and its first and last planned times (None when none is)."""
    by_channel = {c: 0 for c in CHANNELS}
    by_outcome = {o: 0 for o in compliance.OUTCOMES}
    times = []
    for p in planned:
        by_channel[p.touch.channel] += 1
        by_outcome[p.decision.outcome] += 1
        if p.planned_at is not None:
            times.append(p.planned_at)
    return {"touches": len(planned), "by_channel": by_channel, "by_outcome": by_outcome,
            "first_planned_at": min(times, default=None), "last_planned_at": max(times, default=None)}
