"""Eval runs under leases (services/evals/run_service.py) on the real database: two replicas of the run service over
the same database and one provider (tests.service.fakes.EvalProvider, which counts what it is given to run). A
queued run is submitted once; a replica that dies mid-run, before or after the provider's run id is recorded, has
its run taken over once its lease runs out and finished without a second submission; a replica's start takes
nothing another replica holds, so a live eval gate is not failed by it.

The stack's own evals process claims free runs too (every ten seconds): the runs here are always held by one of
the test's replicas but for the moment their lease runs out, when the other replica is already asking for them."""
import asyncio
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from contracts import evals
from core.ids import utcnow
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from providers.voice.port import Conversation
from services.evals import domain
from services.evals.agents_port import EvaluatedAgent
from services.evals.repository import EvalsUnit
from services.evals.run_service import RunClaims, Runs
from services.evals.schema import runs
from tests.service.fakes import EvalAgents, EvalProvider
from tests.waiting import wait_until

LEASE = timedelta(seconds=1.5)


@pytest.fixture
def provider() -> EvalProvider:
    return EvalProvider()


@pytest.fixture
def caller():
    business_id, agent_id = str(uuid.uuid4()), str(uuid.uuid4())
    with acting_as(Tenant(account_id=str(uuid.uuid4()), business_ids=(business_id,),
                          standings=((business_id, "active"),))):
        yield business_id, agent_id


@pytest.fixture
async def replicas(database, provider, caller):
    """Two replicas of the run service, each with its claims loop (renewing and taking over every third of the
    lease); a replica "dies" with `die`, its loop and drivers cancelled, releasing nothing."""
    business_id, agent_id = caller
    agents = EvalAgents({agent_id: EvaluatedAgent(business_id, f"assistant-{uuid.uuid4()}")})
    made = []
    for _ in range(2):
        runs = Runs(UnitOfWork(database, EvalsUnit), provider, agents, concurrency=50, poll_seconds=0.05,
                    lease=LEASE)
        claims = RunClaims(runs, LEASE.total_seconds() / 3)
        claims.start()
        made.append((runs, claims))
    yield made
    for runs, claims in made:
        await claims.stop()
        await runs.stop()


async def die(replica) -> None:
    runs, claims = replica
    await claims.stop()
    for driver in list(runs._drivers):
        driver.cancel()
    await asyncio.gather(*runs._drivers, return_exceptions=True)


async def a_scenario(database, business_id: str, agent_id: str) -> str:
    now = utcnow()
    async with UnitOfWork(database, EvalsUnit).transaction() as work:
        made = await work.scenarios.add(
            id=str(uuid.uuid4()), business_id=business_id, agent_id=agent_id,
            provider_eval_id=f"eval-{uuid.uuid4()}", name="hours.saturday", description="",
            messages=[{"role": "user", "content": "Are you open on Saturday?"}], created_at=now, updated_at=now)
    return made.id


async def stored(database, run_id: str):
    async with UnitOfWork(database, EvalsUnit).read() as work:
        [run] = await work.runs.by_ids([run_id])
    return run


async def held_by(database, run_id: str | None = None, provider_run_id: str | None = None) -> str | None:
    """The replica holding the run (its lease token)."""
    which = runs.c.id == run_id if run_id else runs.c.provider_run_id == provider_run_id
    async with database.read() as conn:
        return await conn.scalar(sa.select(runs.c.lease_token).where(which))


async def test_a_queued_run_is_submitted_once_by_one_of_two_replicas(database, provider, replicas, caller):
    (first, _), (second, _) = replicas
    scenario_id = await a_scenario(database, *caller)
    run = await first.run_scenario(scenario_id, wait=False, max_wait_ms=None)
    await wait_until(lambda: len(provider.submitted), "the provider to take the run")
    for _ in range(3):  # the second replica's claims, its start's among them, over a few leases' time
        await second.take_over()
        assert str(run.id) not in second.driving
        await asyncio.sleep(LEASE.total_seconds() / 2)
    provider.end(provider.submitted[0])
    ended = await wait_until(lambda: stored(database, str(run.id)), "the run to end",
                             lambda r: r.status == evals.ENDED)
    assert (ended.passed, ended.provider_run_id) == (True, provider.submitted[0])
    assert len(provider.submitted) == 1 and await held_by(database, str(run.id)) == first.holder


async def test_a_replica_dying_mid_run_has_it_taken_over_and_finished_without_a_second_submission(
        database, provider, replicas, caller):
    (first, _), (second, _) = replicas
    scenario_id = await a_scenario(database, *caller)
    run = await first.run_scenario(scenario_id, wait=False, max_wait_ms=None)
    submitted = await wait_until(lambda: stored(database, str(run.id)), "the provider's run to be recorded",
                                 lambda r: r.provider_run_id is not None)
    await die(replicas[0])
    assert str(run.id) not in second.driving and await held_by(database, str(run.id)) == first.holder
    await wait_until(lambda: str(run.id) in second.driving, "the second replica to take the run over", timeout=5)
    provider.end(submitted.provider_run_id, passed=False)
    ended = await wait_until(lambda: stored(database, str(run.id)), "the run to end",
                             lambda r: r.status == evals.ENDED)
    assert (ended.passed, ended.provider_run_id) == (False, submitted.provider_run_id)
    assert provider.submitted == [submitted.provider_run_id]


async def test_a_submission_cut_off_before_its_id_was_recorded_is_found_at_the_provider_not_made_again(
        database, provider, replicas, caller):
    (first, _), (second, _) = replicas
    scenario_id = await a_scenario(database, *caller)
    provider.cut_off()  # the provider takes the run; the first replica dies before it hears so
    run = await first.run_scenario(scenario_id, wait=False, max_wait_ms=None)
    await wait_until(lambda: len(provider.submitted), "the provider to take the run")
    assert (await stored(database, str(run.id))).provider_run_id is None
    await die(replicas[0])
    taken = await wait_until(lambda: stored(database, str(run.id)), "the second replica to find the provider's run",
                             lambda r: r.provider_run_id is not None, timeout=5)
    assert taken.provider_run_id == provider.submitted[0] and await held_by(database, str(run.id)) == second.holder
    provider.end(taken.provider_run_id)
    ended = await wait_until(lambda: stored(database, str(run.id)), "the run to end",
                             lambda r: r.status == evals.ENDED)
    assert ended.passed is True and len(provider.submitted) == 1


async def test_a_replicas_start_leaves_a_live_eval_gate_alone(database, provider, replicas, caller):
    (first, _), (second, _) = replicas
    business_id, agent_id = caller
    await a_scenario(database, business_id, agent_id)
    target = [("inbound", Conversation("You answer for Bright Dental.", "Hello.", {"provider": "openai"}))]
    gate = asyncio.create_task(first.gate(agent_id, "assistant-live", target, 10_000))
    await wait_until(lambda: len(provider.submitted), "the gate's run to be submitted")
    third = Runs(first.uow, provider, second.agents, concurrency=50, poll_seconds=0.05, lease=LEASE)
    try:
        for _ in range(3):  # a replica starting (its first claims round), then later rounds, over two leases
            await third.take_over()
            await asyncio.sleep(LEASE.total_seconds() * 2 / 3)
        assert not gate.done() and await held_by(database, provider_run_id=provider.submitted[0]) == first.holder
    finally:
        await third.stop()
    provider.end(provider.submitted[0])
    batch_id, verdict = await gate
    assert (verdict.status, verdict.total, verdict.passed) == (domain.GATE_PASSED, 1, 1) and batch_id
    assert len(provider.submitted) == 1
