"""The eval scenario use cases (services/evals/service.py) in the fast tier: on the in-memory database
(tests/memory), the voice simulator served in this process and the agents service behind an in-memory port.
Never a scenario without its mirror at the provider nor a mirror without its scenario; one writer at a time."""
import asyncio

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.ids import new_id
from core.pagination import Page
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from services.evals import service
from services.evals.agents_port import EvaluatedAgent
from services.evals.repository import EvalsUnit
from services.evals.schema import scenarios as scenarios_table
from services.evals.service import Scenarios
from tests.memory.evals import MemoryScenarios
from tests.service.fakes import EvalAgents

TURNS = [{"role": "user", "content": "Can someone come on Tuesday?"},
         {"role": "assistant", "judgePlan": {"type": "regex", "content": "Tuesday"}}]
THEIRS = "00000000-0000-4000-8000-00000000ee01"  # an agent of the caller's other business


@pytest.fixture
def agent_id() -> str:
    return new_id()


@pytest.fixture
def other_business() -> str:
    """Another business of the same caller."""
    return new_id()


@pytest.fixture
def scenarios(database, voice_port, business_id, other_business, agent_id):
    agents = EvalAgents({agent_id: EvaluatedAgent(business_id, "assistant-1"),
                         THEIRS: EvaluatedAgent(other_business, "assistant-2")})
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id, other_business))):
        yield Scenarios(in_memory(database, MemoryScenarios), voice_port, agents)


def in_memory(database, scenarios_on) -> UnitOfWork[EvalsUnit]:
    """The use cases' unit of work on the in-memory database, its scenarios kept by `scenarios_on`."""
    return UnitOfWork(database, lambda handle: EvalsUnit(handle, scenarios_on))


async def mirrors(voice) -> dict:
    """The provider's evals by id."""
    status, listed = await voice.request("GET", "/eval?limit=100")
    assert status == 200
    return {e["id"]: e for e in listed["results"]}


async def test_a_scenario_is_created_with_its_mirror(scenarios, voice, business_id, agent_id):
    row = await scenarios.create(business_id, agent_id, " Books a visit ", None, TURNS)
    assert (row.name, row.description, row.messages, row.agent_id) == ("Books a visit", "", TURNS, agent_id)
    mirror = (await mirrors(voice))[row.provider_eval_id]
    assert (mirror["type"], mirror["name"], mirror["messages"]) == ("chat.mockConversation", "Books a visit", TURNS)
    assert await scenarios.get(row.id) == row


async def test_a_refused_scenario_leaves_no_mirror(scenarios, voice, business_id, other_business, agent_id):
    refusals = [(business_id, agent_id, "", TURNS, "invalid_request"),
                (business_id, agent_id, "Books", TURNS[:1], "invalid_request"),
                (business_id, "agent-1", "Books", TURNS, "invalid_request"),
                (business_id, new_id(), "Books", TURNS, "not_found"),
                (business_id, THEIRS, "Books", TURNS, "not_found"),
                (new_id(), agent_id, "Books", TURNS, "forbidden")]
    for business, agent, name, turns, code in refusals:
        with pytest.raises(ServiceError) as refused:
            await scenarios.create(business, agent, name, None, turns)
        assert refused.value.code == code, (agent, name)
    assert await mirrors(voice) == {}
    async with scenarios.uow.read() as work:
        assert (await work.scenarios.page((business_id, other_business), None, Page(limit=10))).rows == []


class RefusingInsert(MemoryScenarios):
    """The database refuses the new scenario (as PostgreSQL would a constraint it breaks)."""

    async def add(self, **values):
        raise sa.exc.IntegrityError("INSERT", values, ValueError("refused"))


async def test_a_scenario_the_database_refuses_has_its_mirror_undone(database, voice_port, voice, business_id,
                                                                     agent_id):
    agents = EvalAgents({agent_id: EvaluatedAgent(business_id, "assistant-1")})
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))), pytest.raises(sa.exc.IntegrityError):
        await Scenarios(in_memory(database, RefusingInsert), voice_port, agents).create(business_id, agent_id,
                                                                                         "Books", None, TURNS)
    assert await mirrors(voice) == {}


async def test_scenarios_are_read_in_the_callers_businesses_newest_first_without_turns(scenarios, business_id,
                                                                                       agent_id):
    made = [await scenarios.create(business_id, agent_id, f"Scenario {i}", None, TURNS) for i in range(3)]
    first = await scenarios.list(None, Page(limit=2))
    rest = await scenarios.list(agent_id, Page(limit=2, cursor=first.next_cursor))
    assert [r.id for r in first.rows + rest.rows] == [m.id for m in reversed(made)] and not rest.has_more
    assert not hasattr(first.rows[0], "messages")
    assert (await scenarios.list(new_id(), Page(limit=10))).rows == []
    for refused, code in ((lambda: scenarios.list("agent-1", Page(limit=10)), "invalid_request"),
                          (lambda: scenarios.get("scenario-1"), "invalid_request"),
                          (lambda: scenarios.get(new_id()), "not_found")):
        with pytest.raises(ServiceError) as error:
            await refused()
        assert error.value.code == code
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        assert (await scenarios.list(None, Page(limit=10))).rows == []
        with pytest.raises(ServiceError) as hidden:
            await scenarios.get(made[0].id)
        assert hidden.value.code == "not_found"


async def test_an_update_changes_the_mirror_then_the_scenario_and_frees_its_lease(scenarios, voice, business_id,
                                                                                  agent_id):
    row = await scenarios.create(business_id, agent_id, "Books a visit", "First try", TURNS)
    updated = await scenarios.update(row.id, "Books a Tuesday visit", None, None)
    assert (updated.name, updated.description, updated.messages) == ("Books a Tuesday visit", "First try", TURNS)
    assert updated.lease_token is None and updated.updated_at > row.updated_at
    assert (await mirrors(voice))[row.provider_eval_id]["name"] == "Books a Tuesday visit"
    with pytest.raises(ServiceError) as refused:
        await scenarios.update(row.id, None, None, TURNS[:1])
    assert refused.value.code == "invalid_request"
    await voice.fail_next("PATCH", "/eval/", 400)
    with pytest.raises(ServiceError):
        await scenarios.update(row.id, "Never saved", None, None)
    kept = await scenarios.get(row.id)
    assert kept.name == "Books a Tuesday visit" and kept.lease_token is None  # the lease was given back


async def test_a_write_waits_for_the_lease_and_gives_up_with_a_conflict(scenarios, database, business_id, agent_id,
                                                                        monkeypatch):
    monkeypatch.setattr(service, "LEASE_WAIT_SECONDS", 0.05)
    row = await scenarios.create(business_id, agent_id, "Books a visit", None, TURNS)
    async with database.transaction() as conn:  # another writer holds it
        token = await MemoryScenarios(conn).take_lease(row.id, service.SCENARIO_LEASE)
    for write in (lambda: scenarios.update(row.id, "Mine", None, None), lambda: scenarios.delete(row.id)):
        with pytest.raises(ServiceError) as busy:
            await write()
        assert busy.value.code == "conflict" and "being changed by another request" in busy.value.message
    async with database.transaction() as conn:
        await MemoryScenarios(conn).release_lease(row.id, token)
    assert (await scenarios.update(row.id, "Mine", None, None)).name == "Mine"


async def test_an_update_that_lost_its_lease_puts_the_mirror_back(scenarios, database, voice, business_id, agent_id):
    row = await scenarios.create(business_id, agent_id, "Books a visit", None, TURNS)
    await voice.delay_next("PATCH", "/eval/", 0.1)
    update = asyncio.ensure_future(scenarios.update(row.id, "Lost", None, None))
    await asyncio.sleep(0.05)  # the update holds the lease and waits on the provider: another writer takes over
    async with database.transaction() as conn:
        conn.rows(scenarios_table)[(row.id,)]["lease_token"] = new_id()
    with pytest.raises(ServiceError) as lost:
        await update
    assert lost.value.code == "conflict" and "changed by another request" in lost.value.message
    assert (await mirrors(voice))[row.provider_eval_id]["name"] == "Books a visit"
    assert (await scenarios.get(row.id)).name == "Books a visit"


async def test_a_delete_removes_the_mirror_and_the_scenario_even_when_the_mirror_is_gone(scenarios, voice, voice_client,
                                                                                       business_id, agent_id):
    kept, gone = [await scenarios.create(business_id, agent_id, name, None, TURNS) for name in ("Kept", "Gone")]
    await voice.fail_next("DELETE", "/eval/", 500)
    with pytest.raises(ServiceError):
        await scenarios.delete(kept.id)
    assert (await scenarios.get(kept.id)).lease_token is None
    assert await scenarios.delete(kept.id) == kept.id
    await voice_client.delete_eval(gone.provider_eval_id)  # removed at the provider by hand
    assert await scenarios.delete(gone.id) == gone.id
    assert await mirrors(voice) == {}
    assert (await scenarios.list(None, Page(limit=10))).rows == []
