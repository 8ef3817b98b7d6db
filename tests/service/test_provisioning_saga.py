"""The signup provisioning saga as a use case on the real database, with the agents service behind its port
(services.accounts.agents_port) played in memory: the steps, a number another signup takes first, an empty pool
that defers the saga with its reason, and a workspace canceled before its saga ended giving its number back."""

from core import leases
from core.errors import ServiceError
from services.accounts import store
from services.accounts.provisioning import domain as saga
from services.accounts.provisioning.service import SAGA_LEASE, Provisioning
from services.accounts.repository import accounts_units
from services.accounts.schema import provisionings
from tests.service.conftest import new_business
from tests.service.fakes import InMemoryAgents

OWNER = "+14155550177"


async def paid_signup(database, provisioning: Provisioning, forward_to: str | None = OWNER) -> str:
    """A business whose payment arrived: its saga is due now, leased to the test (so the stack's own billing worker,
    which runs due sagas on the same database through the real agents service, leaves it alone)."""
    async with database.transaction() as conn:
        business_id = await new_business(conn)
    async with provisioning.uow.transaction() as work:
        await provisioning.start(work, business_id, forward_to)
        leased[business_id] = await provisioning.resume(work, business_id, lease=True)
    return business_id


leased: dict[str, str] = {}  # business -> the token of its saga's lease, taken by paid_signup


async def run(database, provisioning: Provisioning, business_id: str):
    """Run the business's saga under a lease of the test's own and answer its row after. A failed step releases the
    lease and defers the saga by `retry_seconds` (a minute: the stack's billing worker does not come to it)."""
    token = leased.pop(business_id, None)
    if token is None:
        async with database.transaction() as conn:
            row = await store.provisioning_of(conn, business_id)
            token = await leases.take(conn, provisionings, row.id, SAGA_LEASE)
    return await provisioning.run_now(business_id, token)


async def test_a_paid_signup_gets_its_agent_a_local_number_and_forwarding(database):
    agents = InMemoryAgents(["+12125550100", "+14155550100", "+14155550101"], taken_first=("+14155550100",))
    provisioning = Provisioning(accounts_units(database), agents, retry_seconds=60)
    business_id = await paid_signup(database, provisioning)
    row = await run(database, provisioning, business_id)
    assert (row.status, row.step, row.phone_number, row.last_error) == (saga.DONE, saga.DONE, "+14155550101", None)
    assert agents.held["+14155550101"].agent_id == str(row.agent_id) == agents.agents[(business_id,
                                                                                        saga.INTAKE_REQUEST_ID)]
    assert agents.forwarding == {"+14155550101": (OWNER, saga.RING_SECONDS)}
    assert await agents.number_counts() == {business_id: 1}


async def test_an_empty_pool_defers_the_saga_with_its_reason_and_it_resumes_where_it_stopped(database):
    agents = InMemoryAgents([])
    provisioning = Provisioning(accounts_units(database), agents, retry_seconds=60)
    business_id = await paid_signup(database, provisioning, forward_to=None)
    provisioning_row = await run(database, provisioning, business_id)
    assert provisioning_row.status == saga.RETRYING and provisioning_row.step == saga.NUMBER
    assert "no phone number is free in the pool" in provisioning_row.last_error and provisioning_row.attempts == 1
    agents.pool.append("+13035550100")
    row = await run(database, provisioning, business_id)
    assert (row.status, row.phone_number, row.last_error) == (saga.DONE, "+13035550100", None)
    assert len([a for (b, _), a in agents.agents.items() if b == business_id]) == 1  # the agent made once


async def test_a_workspace_canceled_before_its_saga_ended_gives_its_number_back(database):
    agents = InMemoryAgents(["+14155550102"])
    provisioning = Provisioning(accounts_units(database), agents, retry_seconds=60)
    business_id = await paid_signup(database, provisioning)
    agents.forward = _refuse_forwarding  # the saga stops after taking its number
    row = await run(database, provisioning, business_id)
    assert row.status == saga.RETRYING and row.phone_number == "+14155550102"
    async with database.transaction() as conn:
        await store.update_business(conn, business_id, {"lifecycle_state": "canceled"})
    row = await run(database, provisioning, business_id)
    assert (row.status, row.phone_number) == (saga.CANCELED, None)
    assert agents.pool == ["+14155550102"] and agents.held == {}


async def _refuse_forwarding(*_):
    raise ServiceError("provider_error", "the voice provider is unavailable")
