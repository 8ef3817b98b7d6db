"""GetStandings as a use case on the real database: each callee's facts grouped right, in the same few statements
for one phone or thousands; and DecideCall's use case, which takes the call as a domain value (no proto)."""
import contextlib
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.compliance import decision as compliance
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.tenant import acting_as
from services.messaging import domain, store
from services.messaging.compliance_service import Compliance
from services.messaging.repositories.unit import messaging_uow
from tests.service.conftest import new_tenant

PLATFORM = "+14155550166"


@contextlib.contextmanager
def statements(engine):
    """The SQL statements the engine runs inside the block."""
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)
    sa.event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        sa.event.remove(engine.sync_engine, "before_cursor_execute", count)


async def test_standings_group_each_phones_facts_in_two_statements_however_many(engine, database):
    who = new_tenant()
    business_id = who.business_ids[0]
    listed, opted_out, called, clean = "+14155550181", "+14155550182", "+14155550183", "+14155550184"
    now = utcnow()
    async with engine.begin() as conn:
        await store.add_dnc(conn, id=new_id(), business_id=business_id, phone=listed, created_at=now)
        await store.add_dnc(conn, id=new_id(), business_id=str(uuid.uuid4()), phone=clean, created_at=now)
        for kind, minutes in (("opt_in", 2), ("opt_out", 1)):
            await store.add_consent(conn, business_id=business_id, phone=opted_out, kind=kind, source="api",
                                    created_at=now - timedelta(minutes=minutes))
        await store.add_consent(conn, business_id=business_id, phone=called, kind="opt_in", source="api",
                                created_at=now)
        for hours, channel in ((1, "sms"), (2, "call"), (3, "call"), (25, "call")):  # one freed, one too old
            decision_id = new_id()
            at = now - timedelta(hours=hours)
            await store.count_touch(conn, decision_id=decision_id, business_id=business_id, phone=called,
                                    channel=channel, placed_at=at, within=store.Allowance(at.date(), 100))
            if hours == 3:
                await store.release_touch(conn, decision_id, (business_id,), now)
    rules = Compliance(messaging_uow(database), frozenset({PLATFORM}), compliance.Policy())
    many = [f"+1415555{n:04d}" for n in range(2000, 4000)]
    with acting_as(who):
        await rules.standings(business_id, [clean])  # the pool's first connection says hello outside the count
        with statements(engine) as one:
            [alone] = await rules.standings(business_id, [clean])
        with statements(engine) as thousands:
            found = await rules.standings(business_id, [listed, opted_out, called, clean, PLATFORM, *many, listed])
    assert len(one) == len(thousands) == 2  # the list and consent together, then the calls
    assert alone.standing == compliance.Standing()
    by_phone = {f.phone: f for f in found}
    assert len(found) == 5 + len(many)
    assert by_phone[listed].standing.business_dnc_since is not None
    assert by_phone[opted_out].standing.consent == "opted_out" and by_phone[called].standing.consent == "opted_in"
    assert by_phone[clean].standing == compliance.Standing()  # another business's list is not this one's
    assert by_phone[PLATFORM].standing.platform_dnc
    assert [(t.channel, round((now - t.at) / timedelta(hours=1))) for t in by_phone[called].recent] == [
        ("call", 2), ("sms", 1)]  # oldest first, both channels
    assert all(not f.recent for f in found if f.phone != called)


async def test_a_call_is_decided_from_its_domain_value_and_counted(database):
    who = new_tenant()
    business_id = who.business_ids[0]
    rules = Compliance(messaging_uow(database), frozenset({PLATFORM}), compliance.Policy())
    call = domain.CallToDecide(business_id=business_id, phone="+14155550185", actor="run", reference="touch-1",
                               timezone="America/Los_Angeles", business_hours=(0, 23))
    with acting_as(who):
        for wrong, said in (({"business_hours": (9, 9)}, "business_hours"), ({"actor": "sms-bot"}, "actor"),
                            ({"timezone": "Mars/Olympus"}, "timezone")):
            with pytest.raises(ServiceError) as refused:
                await rules.decide_call(replace(call, **wrong))
            assert refused.value.code == "invalid_request" and said in refused.value.message
        logged = await rules.decide_call(call)
        [standing] = await rules.standings(business_id, ["+14155550185"])
    assert (str(logged.business_id), logged.phone, logged.actor, logged.reference, logged.channel) == (
        business_id, "+14155550185", "run", "touch-1", "call")
    # An allowed call takes a slot under the frequency cap; a deferred one takes none.
    assert len(standing.recent) == (1 if logged.outcome == "allow" else 0), logged.outcome
