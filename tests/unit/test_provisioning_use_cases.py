"""The signup provisioning saga (services/accounts/provisioning) in the fast tier, on the in-memory database
(tests/memory) with the agents service behind its port in memory (tests/memory/agents_port.py): the steps, a
number another signup takes first, an empty pool or a failing agents service deferring the saga with its reason
until it resumes where it stopped, a workspace canceled before its saga ended giving its number back, a saga
waiting for its payment, a due saga run by one runner only, and an x402 signup's saga answered while it goes on."""
import asyncio
from datetime import timedelta

import pytest

from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.tenant import acting_as, acting_for
from core.uow import UnitOfWork
from services.accounts.provisioning import domain as saga
from services.accounts.provisioning.service import Provisioning
from services.accounts.schema import outbox, provisionings
from tests.memory import update
from tests.memory.accounts import MemoryAccountsUnit, MemoryHotPath
from tests.memory.agents_port import InMemoryAgents
from tests.waiting import wait_until

OWNER = "+14155550177"


@pytest.fixture
def uow(database):
    return UnitOfWork(database, MemoryAccountsUnit, events=outbox)


async def a_signup(provisioning: Provisioning, forward_to: str | None = OWNER) -> str:
    """A signup's workspace and its saga, waiting for the payment: the workspace's id."""
    now = utcnow()
    async with provisioning.uow.transaction() as work:
        business = await work.accounts.add_business(
            id=new_id(), account_id=new_id(), name="Acme Plumbing", lifecycle_state="active", metadata={},
            business_type="plumber", plan_id="starter", subscription_status="active", created_at=now, updated_at=now)
        await provisioning.start(work, business.id, forward_to)
    return business.id


async def paid_signup(provisioning: Provisioning, forward_to: str | None = OWNER) -> tuple[str, str]:
    """A signup whose payment arrived, its saga leased to the caller as an x402 signup's is: (business, token)."""
    business_id = await a_signup(provisioning, forward_to)
    async with provisioning.uow.transaction() as work:
        token = await provisioning.resume(work, business_id, lease=True)
    assert token is not None
    return business_id, token


async def saga_of(uow, business_id: str):
    async with uow.read() as work:
        return await work.provisioning.of_business(business_id)


async def come_due(database, business_id: str) -> None:
    """The retry delay of the business's saga has passed."""
    async with database.transaction() as conn:
        row = next(r for r in conn.rows(provisionings).values() if r["business_id"] == business_id)
        update(provisionings, row, {"next_attempt_at": utcnow()})


async def test_a_paid_signup_gets_its_agent_a_local_number_and_forwarding(database, uow):
    agents = InMemoryAgents(["+12125550100", "+14155550100", "+14155550101"], taken_first=("+14155550100",))
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning)
    row = await provisioning.run_now(business_id, token)
    assert (row.status, row.step, row.phone_number, row.last_error, row.lease_token) == (
        saga.DONE, saga.DONE, "+14155550101", None, None)
    assert agents.held["+14155550101"].agent_id == row.agent_id == agents.agents[(business_id,
                                                                                  saga.INTAKE_REQUEST_ID)]
    assert agents.forwarding == {"+14155550101": (OWNER, saga.RING_SECONDS)}
    assert agents.pool == ["+12125550100"]  # the one another signup took is not the pool's any more either
    with acting_as(acting_for(business_id, "test")):
        assert await agents.number_counts() == {business_id: 1}
    _, shown = await MemoryHotPath(database).workspace(business_id)  # what its owner reads of it
    assert (shown.status, shown.phone_number, shown.agent_id) == (saga.DONE, "+14155550101", row.agent_id)


async def test_a_signup_with_no_phone_to_forward_to_gets_a_number_and_no_forwarding(uow):
    agents = InMemoryAgents(["+13035550100"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning, forward_to=None)
    row = await provisioning.run_now(business_id, token)
    assert (row.status, row.phone_number, row.forward_to) == (saga.DONE, "+13035550100", None)
    assert agents.forwarding == {}


async def test_an_empty_pool_defers_the_saga_with_its_reason_and_it_resumes_where_it_stopped(database, uow):
    agents = InMemoryAgents([])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning, forward_to=None)
    before = utcnow()
    row = await provisioning.run_now(business_id, token)
    assert (row.status, row.step, row.attempts, row.lease_token) == (saga.RETRYING, saga.NUMBER, 1, None)
    assert "no phone number is free in the pool" in row.last_error
    assert row.next_attempt_at >= before + timedelta(seconds=60)
    assert await provisioning.run_due() == 0  # not before its retry delay
    agents.pool.append("+13035550100")
    await come_due(database, business_id)
    assert await provisioning.run_due() == 1  # the billing worker's run
    row = await saga_of(uow, business_id)
    assert (row.status, row.phone_number, row.last_error, row.attempts) == (saga.DONE, "+13035550100", None, 1)
    assert len([a for (b, _), a in agents.agents.items() if b == business_id]) == 1  # the agent made once


async def test_a_failing_agents_service_defers_the_saga_longer_each_time_with_its_reason(database, uow):
    agents = InMemoryAgents(["+13035550100"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning)

    async def unavailable(*_):
        raise ServiceError("unavailable", "the agents service is restarting")
    agents.create_agent = unavailable
    row = await provisioning.run_now(business_id, token)
    assert (row.status, row.attempts) == (saga.RETRYING, 1) and row.next_attempt_at > utcnow() + timedelta(seconds=50)
    await come_due(database, business_id)
    before = utcnow()
    assert await provisioning.run_due() == 1
    row = await saga_of(uow, business_id)
    assert (row.status, row.step, row.attempts, row.last_error) == (
        saga.RETRYING, saga.AGENT, 2, "unavailable: the agents service is restarting")
    assert row.next_attempt_at >= before + timedelta(seconds=120)  # the delay doubled
    assert agents.pool == ["+13035550100"] and agents.held == {}


async def test_a_workspace_canceled_before_its_saga_ended_gives_its_number_back(database, uow):
    agents = InMemoryAgents(["+14155550102"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning)

    async def refuse_forwarding(*_):
        raise ServiceError("provider_error", "the voice provider is unavailable")
    agents.forward = refuse_forwarding  # the saga stops after taking its number
    row = await provisioning.run_now(business_id, token)
    assert (row.status, row.step, row.phone_number) == (saga.RETRYING, saga.FORWARDING, "+14155550102")
    assert row.last_error == "provider_error: the voice provider is unavailable"
    async with uow.transaction() as work:
        await work.accounts.change_business(business_id, {"lifecycle_state": "canceled"})
    await come_due(database, business_id)
    assert await provisioning.run_due() == 1
    row = await saga_of(uow, business_id)
    assert (row.status, row.phone_number, row.lease_token) == (saga.CANCELED, None, None)
    assert agents.pool == ["+14155550102"] and agents.held == {}
    assert await provisioning.run_due() == 0  # over


async def test_a_saga_waits_for_its_payment_and_a_workspace_canceled_meanwhile_ends_it(uow):
    agents = InMemoryAgents(["+14155550103"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    paid, canceled = await a_signup(provisioning), await a_signup(provisioning)
    assert await provisioning.run_due() == 0  # neither is paid
    async with uow.transaction() as work:
        await provisioning.resume(work, paid)  # a card checkout: the billing worker runs it
        await provisioning.cancel_waiting(work, canceled)
    async with uow.transaction() as work:
        await provisioning.resume(work, canceled)  # a payment after the cancellation moves nothing
        await provisioning.cancel_waiting(work, paid)  # nor does a cancellation once it runs
    assert ((await saga_of(uow, paid)).status, (await saga_of(uow, canceled)).status) == (saga.PENDING,
                                                                                          saga.CANCELED)
    assert await provisioning.run_due() == 1
    assert (await saga_of(uow, paid)).status == saga.DONE
    assert [b for b, _ in agents.agents] == [paid]


async def test_a_due_saga_is_claimed_by_one_runner_only(uow):
    agents = InMemoryAgents(["+14155550104", "+14155550105"])
    one, other = Provisioning(uow, agents, retry_seconds=60), Provisioning(uow, agents, retry_seconds=60)
    business_id = await a_signup(one)
    async with uow.transaction() as work:
        await one.resume(work, business_id)
    create_agent = agents.create_agent

    async def remote_agent(*args):  # an RPC takes a while: the other runner looks for due sagas meanwhile
        await asyncio.sleep(0.01)
        return await create_agent(*args)
    agents.create_agent = remote_agent
    assert sorted(await asyncio.gather(one.run_due(), other.run_due())) == [0, 1]
    row = await saga_of(uow, business_id)
    assert (row.status, row.phone_number) == (saga.DONE, "+14155550104")
    assert len(agents.agents) == 1 and list(agents.held) == ["+14155550104"]


async def test_a_saga_whose_lease_another_runner_took_over_is_answered_not_run(uow):
    agents = InMemoryAgents(["+14155550106"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, _ = await paid_signup(provisioning)
    row = await provisioning.run_now(business_id, new_id())
    assert (row.status, row.step) == (saga.PENDING, saga.AGENT) and agents.agents == {}


async def test_a_saga_still_running_when_its_signup_answers_goes_on_and_ends(uow):
    agents = InMemoryAgents(["+14155550107"])
    provisioning = Provisioning(uow, agents, retry_seconds=60)
    business_id, token = await paid_signup(provisioning)
    slow, create_agent = asyncio.Event(), agents.create_agent

    async def slow_agent(*args):
        await slow.wait()
        return await create_agent(*args)
    agents.create_agent = slow_agent
    row = await provisioning.run_now(business_id, token, within=0.05)
    assert (row.status, row.step, row.lease_token) == (saga.PENDING, saga.AGENT, token)  # deferred, still leased
    slow.set()
    row = await wait_until(lambda: saga_of(uow, business_id), "the saga to end", lambda r: r.status == saga.DONE,
                           timeout=5, interval=0.01)
    assert (row.phone_number, row.lease_token) == ("+14155550107", None)
