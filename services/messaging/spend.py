"""Per-workspace daily spend limits, by plan (core.plans.DAILY_LIMITS): calls placed, call minutes and texts sent in a
UTC day, counted in the database (daily_spend) across every key, session, replica, run and the pipeline.

A call or a text is counted in the transaction that decides its touch, in the statement that puts it in the touch
ledger (count_touch): at the limit nothing is written and the request is refused with 429 `rate_limited`
naming the limit, its plan and the UTC midnight it frees at (Retry-After). A touch the provider then refused gives
its count back with its ledger slot. A call's minutes count once it has ended (call.completed, `record_ended`):
calls in progress are not yet counted, so the minutes limit can be passed by the calls in flight when it is reached.
The day is UTC's, the same for every business whatever its zone, so it is one boundary for the whole platform.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from core import plans, tenant
from core.bus import business_event, subject_for
from core.compliance.rules import CALL, SMS
from core.errors import ServiceError
from core.ids import utcnow
from core.standings import Standings
from core.uow import UnitOfWork
from services.messaging import domain
from services.messaging.repositories.unit import MessagingUnit
from switchboard.v1 import events_pb2

ENDED_SUBJECT = subject_for("call.completed")
ENDED_CONSUMER = "messaging-call-minutes"
CALL_SECONDS = "call_seconds"  # daily_spend's kind for the seconds of ended calls


def day_of(now: datetime) -> date:
    return now.astimezone(UTC).date()


def seconds_to_next_day(now: datetime) -> int:
    """Seconds until the next UTC midnight (at least 1): when the day's limits free."""
    midnight = datetime.combine(day_of(now) + timedelta(days=1), time(), tzinfo=UTC)
    return max(1, int((midnight - now).total_seconds() + 0.999))


def allowance(channel: str, limits: plans.DailyLimits, now: datetime) -> domain.Allowance:
    """A touch's room today: calls by the calls and call minutes limits, texts by the texts limit."""
    if channel == CALL:
        return domain.Allowance(day_of(now), limits.calls, limits.call_minutes * 60)
    return domain.Allowance(day_of(now), limits.texts)


def refusal(channel: str, plan_id: str, limits: plans.DailyLimits, spent: dict[str, int],
            now: datetime) -> ServiceError:
    """The 429 for a touch past its business's limit of the day (`spent`: the day's daily_spend of it)."""
    if channel == CALL and spent.get(CALL_SECONDS, 0) >= limits.call_minutes * 60:
        name, what = plans.LIMIT_NAMES["call_minutes"], f"{limits.call_minutes} call minutes"
    elif channel == CALL:
        name, what = plans.LIMIT_NAMES["calls"], f"{limits.calls} calls placed"
    else:
        name, what = plans.LIMIT_NAMES["texts"], f"{limits.texts} texts sent"
    wait = seconds_to_next_day(now)
    return ServiceError("rate_limited", f"daily spend limit reached: {name} is {what} a day on the "
                        f"{plan_id or plans.DEFAULT_PLAN} plan, all used today (UTC); it frees at 00:00 UTC, in "
                        f"{wait} seconds (GET /api/v1/balance shows the limits and today's use)", retry_after=str(wait),
                        limit=name)


def email_quota(plan_id: str, platform_quota: int) -> int:
    """The emails a business may queue in any 24 hours: its plan's, capped by the platform's EMAIL_DAILY_QUOTA."""
    return min(plans.daily_limits(plan_id).emails, platform_quota)


@dataclass(frozen=True)
class DaySpend:
    """A business's limits and what it spent today (emails: in the last 24 hours), as the balance route shows them."""

    business_id: str
    plan_id: str
    day: date
    limits: plans.DailyLimits
    calls: int
    call_minutes: int  # every started minute counts
    texts: int
    emails: int

    @property
    def resets_at(self) -> datetime:
        return datetime.combine(self.day + timedelta(days=1), time(), tzinfo=UTC)


class Spending:
    """What the caller's businesses may spend a day and spent today."""

    def __init__(self, uow: UnitOfWork[MessagingUnit], standings: Standings, platform_email_quota: int):
        self.uow, self.standings, self.platform_email_quota = uow, standings, platform_email_quota

    async def today(self) -> list[DaySpend]:
        business_ids = list(tenant.require_account().business_ids)
        plan_of = {b: (await self.standings.facts(b)).plan_id for b in business_ids}
        now = utcnow()
        day = day_of(now)
        async with self.uow.read() as work:
            spent = await work.spend.spent_on(business_ids, day)
            emails = {b: await work.spend.api_emails_since(b, now - domain.EMAIL_WINDOW) for b in business_ids}
        found = []
        for b in business_ids:
            limits = plans.daily_limits(plan_of[b])
            limits = replace(limits, emails=email_quota(plan_of[b], self.platform_email_quota))
            used = spent.get(b, {})
            found.append(DaySpend(b, plan_of[b] or plans.DEFAULT_PLAN, day, limits, used.get(CALL, 0),
                                  -(-used.get(CALL_SECONDS, 0) // 60), used.get(SMS, 0), emails[b]))
        return found


class EndedCalls:
    """Each ended call's seconds in its business's spend of the day it ended (call.completed, each call once)."""

    def __init__(self, uow: UnitOfWork[MessagingUnit]):
        self.uow = uow

    async def record_ended(self, messages: list[dict[str, Any]]) -> None:
        ended = []
        for message in messages:
            event, call = business_event(message)
            assert isinstance(call, events_pb2.CallCompleted) and event.business_id is not None  # the subject's
            if call.duration > 0:
                ended.append((call.call_id, event.business_id, day_of(event.occurred_at), call.duration))
        async with self.uow.transaction() as work:
            await work.spend.add_call_seconds(ended)
