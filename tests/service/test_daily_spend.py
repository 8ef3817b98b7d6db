"""The daily spend limits as use cases on the real database (services.messaging.spend): an ended call's seconds are
counted once however often its event comes, and the day's minutes stop the next call's decision with a 429 naming
the limit; the counts are of the UTC day the call ended. Fixed instants: nothing depends on the hour the test runs."""
from datetime import UTC, datetime, timedelta

import pytest

from core import plans
from core.compliance import decision as compliance
from core.errors import ServiceError
from core.events import Envelope
from core.ids import new_id
from core.tenant import acting_as
from services.messaging import domain, spend, store
from services.messaging.compliance_service import Compliance
from services.messaging.repositories.unit import messaging_uow
from tests.service.conftest import new_tenant
from tests.service.fakes import accounts_saying

ENDED_AT = datetime(2026, 3, 2, 23, 59, 30, tzinfo=UTC)


def ended(business_id: str, call_id: str, seconds: int, at: datetime = ENDED_AT) -> dict:
    return Envelope(new_id(), "call.completed", at, business_id, {
        "call_id": call_id, "conversation_id": "pc", "agent_id": new_id(), "direction": "outbound",
        "status": "completed", "to": "+14155550190", "duration": seconds}).to_json()


async def test_an_ended_calls_seconds_count_once_on_the_utc_day_it_ended(database):
    business_id, call_id = new_id(), new_id()
    recorder = spend.EndedCalls(messaging_uow(database))
    await recorder.record_ended([ended(business_id, call_id, 61), ended(business_id, new_id(), 0)])
    await recorder.record_ended([ended(business_id, call_id, 61)])  # delivered again
    await recorder.record_ended([ended(business_id, new_id(), 30, ENDED_AT + timedelta(minutes=1))])  # next day
    async with database.read() as conn:
        spent = await store.spent_on(conn, [business_id], ENDED_AT.date())
        tomorrow = await store.spent_on(conn, [business_id], ENDED_AT.date() + timedelta(days=1))
    assert spent == {business_id: {"call_seconds": 61}} and tomorrow == {business_id: {"call_seconds": 30}}


async def test_the_days_call_minutes_stop_the_next_calls_decision(database):
    who = new_tenant()
    business_id = who.business_ids[0]
    rules = Compliance(messaging_uow(database), frozenset(), compliance.Policy(),
                       standings=accounts_saying({business_id: "active"}))
    limits = plans.DAILY_LIMITS["starter"]
    now = datetime.now(UTC)
    await spend.EndedCalls(messaging_uow(database)).record_ended([  # today's and tomorrow's (UTC): whatever the hour
        ended(business_id, new_id(), limits.call_minutes * 60, at) for at in (now, now + timedelta(days=1))])
    call = domain.CallToDecide(business_id=business_id, phone="+14155550186", actor="unchecked_call",
                               reference="call-1", timezone="America/Los_Angeles", business_hours=None)
    with acting_as(who), pytest.raises(ServiceError) as refused:
        await rules.decide_call(call)
    assert refused.value.code == "rate_limited" and refused.value.details["limit"] == "call_minutes_per_day"
    assert 0 < int(refused.value.details["retry_after"]) <= 86_400
    async with database.read() as conn:  # nothing logged or counted: the decision's transaction rolled back
        assert (await store.spent_on(conn, [business_id], spend.day_of(now)))[business_id].get("call") is None
