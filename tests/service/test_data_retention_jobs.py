"""The retention job (services/accounts/privacy/data_retention.py) on the real database: the orchestration alone.
The four services' ApplyRetention are the port here (a scripted `RetentionPort` recording what each is asked and
answering, failing or saying `more` as the test says), so the claim, the cutoffs, the repeats, the failures and the
next due time are checked against PostgreSQL; the services' own ApplyRetention are their tests, and the whole of it
tests/e2e/test_data_retention.py.

The stack's own accounts process runs the job too (its data-retention-runner, every second): the test's replicas run
on a clock ten years ahead (the job's `clock`), and the businesses here are due only then, so the stack never
reaches them. (The replicas may claim other tests' businesses too, due long before: they are answered by the script
and due again a day after the replicas' time.)"""
import asyncio
import logging
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.ids import utcnow
from services.accounts.privacy.data_retention import DataRetention
from services.accounts.privacy.personal_data import RetentionReport
from services.accounts.privacy_repository import SqlDataRetention
from services.accounts.repository import accounts_units
from services.accounts.schema import businesses
from tests.service.conftest import new_business

AHEAD = timedelta(days=3650)
RETRY = timedelta(minutes=10)
SERVICES = ["sdr", "calls", "messaging", "webhooks"]


def ahead():
    return utcnow() + AHEAD


class ScriptedServices:
    """The services' ApplyRetention as a script: for the business `scripted`, `answers[service]` is a list of
    RetentionReports (or exceptions) given in turn, the last one repeated; every other business (other tests' are
    due for the replicas too) gets nothing to do. Every request is recorded."""

    def __init__(self, scripted: str | None = None, **answers):
        self.scripted = scripted
        self.answers = answers
        self.asked: list[dict] = []

    async def apply(self, service, business_id, run_id, cutoffs, batch):
        self.asked.append({"service": service, "business_id": business_id, "run_id": run_id, "cutoffs": cutoffs,
                           "batch": batch})
        await asyncio.sleep(0)
        script = (business_id == self.scripted and self.answers.get(service)) or [RetentionReport(({"what": f"{service}.records", "action": "deleted",
                                                                 "count": 0},), False)]
        answer = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def of(self, business_id):
        return [a for a in self.asked if a["business_id"] == business_id]


def replica(database, services, **options) -> DataRetention:
    return DataRetention(accounts_units(database), services, **{
        "retry_seconds": RETRY.total_seconds(), "batch": 50, "clock": ahead, **options})


async def due_business(database, retention=None, lifecycle_state="active") -> str:
    """A business due for the replicas (ahead) and not for the stack."""
    async with database.transaction() as conn:
        business_id = await new_business(conn)
        await conn.execute(businesses.update().where(businesses.c.id == business_id).values(
            retention=retention or {}, lifecycle_state=lifecycle_state,
            retention_next_at=ahead() - timedelta(minutes=1)))
    return business_id


async def stored(database, business_id):
    async with database.read() as conn:
        return (await conn.execute(sa.select(businesses).where(businesses.c.id == business_id))).one()


async def only_these_due(database, business_ids) -> None:
    """Every other business out of the replicas' reach (a day past their clock), as a replica's round would leave
    it: the shared stack holds other tests' businesses, which a round claims oldest first."""
    b = businesses.c
    async with database.transaction() as conn:
        await conn.execute(businesses.update().where(b.retention_next_at <= ahead(), b.id.not_in(business_ids))
                           .values(retention_next_at=ahead() + timedelta(days=1)))


async def run_until_done(database, job: DataRetention, services: ScriptedServices, business_ids, rounds=50):
    """Rounds of the replica until each business was asked of every service."""
    await only_these_due(database, business_ids)
    for _ in range(rounds):
        if all(len({a["service"] for a in services.of(b)}) == len(SERVICES) for b in business_ids):
            return
        await job.run_due()
    raise AssertionError("the businesses were not all run")


async def test_a_round_asks_each_service_with_the_cutoffs_repeats_while_more_logs_each_line_and_is_due_a_day_later(
        database, caplog):
    caplog.set_level(logging.INFO, logger="services.accounts.privacy.data_retention")
    business = await due_business(database, {"recordings_days": 1, "evidence_days": 2000})
    services = ScriptedServices(business, calls=[
        RetentionReport(({"what": "calls.recording", "action": "deleted", "count": 50},), True),
        RetentionReport(({"what": "calls.recording", "action": "deleted", "count": 7},), False)])
    before = ahead()
    await run_until_done(database, replica(database, services), services, [business])
    after = ahead()
    asked = services.of(business)
    assert [a["service"] for a in asked] == ["sdr", "calls", "calls", "messaging", "webhooks"]
    assert len({a["run_id"] for a in asked}) == 1 and {a["batch"] for a in asked} == {50}
    cutoffs = asked[0]["cutoffs"]
    assert before - timedelta(days=1) <= cutoffs.recordings_before <= after - timedelta(days=1)
    assert before - timedelta(days=365) <= cutoffs.transcripts_before <= after - timedelta(days=365)
    assert before - timedelta(days=30) <= cutoffs.webhook_events_before <= after - timedelta(days=30)
    assert before - timedelta(days=2000) <= cutoffs.evidence_before <= after - timedelta(days=2000)
    row = await stored(database, business)
    assert before + timedelta(days=1) <= row.retention_next_at <= ahead() + timedelta(days=1)
    assert (row.retention_lease_token, row.retention_lease_until) == (None, None)
    run_id = asked[0]["run_id"]
    lines = [r.getMessage() for r in caplog.records if run_id in r.getMessage()]
    assert f"retention {run_id} of business {business}: calls calls.recording deleted 50" in lines
    assert f"retention {run_id} of business {business}: calls calls.recording deleted 7" in lines
    assert f"retention {run_id} of business {business}: webhooks webhooks.records deleted 0" in lines


async def test_a_failing_service_is_logged_the_others_still_run_and_the_business_is_due_after_the_retry(
        database, caplog):
    caplog.set_level(logging.INFO, logger="services.accounts.privacy.data_retention")
    business = await due_business(database)
    services = ScriptedServices(business, messaging=[ServiceError("unavailable", "a backing service is unavailable")])
    before = ahead()
    await run_until_done(database, replica(database, services), services, [business])
    assert [a["service"] for a in services.of(business)] == SERVICES
    row = await stored(database, business)
    assert before + RETRY <= row.retention_next_at <= ahead() + RETRY and row.retention_lease_token is None
    assert any("messaging failed (ServiceError" in r.getMessage() and business in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)


async def test_a_service_with_more_than_a_round_takes_leaves_the_business_due_at_once(database):
    business = await due_business(database)
    more = RetentionReport(({"what": "sdr.notes", "action": "redacted", "count": 50},), True)
    services = ScriptedServices(business, sdr=[more])
    await run_until_done(database, replica(database, services, calls_per_round=3), services, [business])
    assert [a["service"] for a in services.of(business)][:4] == ["sdr", "sdr", "sdr", "calls"]
    row = await stored(database, business)
    assert row.retention_next_at <= ahead()  # due again at the next round


async def test_two_runners_racing_claim_each_business_once_paused_and_torn_down_ones_included(database):
    states = ["active", "paused", "canceled", "inactive"] * 2
    mine = [await due_business(database, lifecycle_state=state) for state in states]
    services = ScriptedServices()
    first, second = replica(database, services), replica(database, services)

    async def runner(job):
        for _ in range(40):
            if all(services.of(b) for b in mine) and all(
                    [(await stored(database, b)).retention_lease_token is None for b in mine]):
                return
            await job.run_due(limit=3)

    await only_these_due(database, mine)
    await asyncio.gather(runner(first), runner(second))
    for business in mine:
        asked = services.of(business)
        assert [a["service"] for a in asked] == SERVICES, (business, asked)  # one round, by one runner
        assert len({a["run_id"] for a in asked}) == 1
        assert (await stored(database, business)).retention_next_at > ahead()


async def test_the_claim_takes_due_businesses_whose_lease_is_free_only(database):
    now = ahead()

    class Rollback(Exception):
        pass

    with pytest.raises(Rollback):  # claimed in a transaction no other runner sees, then undone
        async with database.transaction() as conn:
            rows = {"due": {}, "crashed": {"retention_lease_token": str(uuid.uuid4()),
                                           "retention_lease_until": now - timedelta(seconds=1)},
                    "held": {"retention_lease_token": str(uuid.uuid4()),
                             "retention_lease_until": now + timedelta(minutes=1)},
                    "later": {"retention_next_at": now + timedelta(minutes=1)}}
            ids = {}
            for name, values in rows.items():
                ids[name] = await new_business(conn)
                await conn.execute(businesses.update().where(businesses.c.id == ids[name]).values(**{
                    "retention_next_at": now - timedelta(seconds=1), **values}))
            claimed = await SqlDataRetention(conn).claim_due(now, 1000, timedelta(minutes=5))
            by_id = {c.business_id: c for c in claimed}
            assert {name for name, i in ids.items() if i in by_id} == {"due", "crashed"}
            token = by_id[ids["due"]].token
            assert not await SqlDataRetention(conn).renew(ids["due"], str(uuid.uuid4()), now)  # not its lease
            assert await SqlDataRetention(conn).finish(ids["due"], token, now + timedelta(days=1))
            raise Rollback
