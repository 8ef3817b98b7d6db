"""The agent and phone-number use cases (services/agents/service.py, numbers_service.py) in the fast tier: on the in-memory database (tests/memory), the
voice simulator served in this process and the eval gate in memory (tests/service/fakes.py). Creating an agent
with its assistant (once per request id, undone when the row cannot be kept), reading it within the caller's
businesses, the configuration writes (provider sync, versions, audit and event, the lease, the eval gate,
rollback), and a number's assign, forwarding, re-point and release with the provider's number."""
import asyncio
from datetime import timedelta

import pytest

from contracts import agents as agents_contract
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.pagination import Page
from core.sealing import SecretBox
from core.settings import derive_sealing_key
from core.tenant import Tenant, acting_as
from providers.voice.port import ProviderError
from providers.voice.vapi import assistants as vapi_assistants
from services.agents import domain
from services.agents.numbers_service import Numbers
from services.agents.records import NumberCount
from services.agents.repository import agents_units
from services.agents.schema import phone_numbers, prompt_history
from services.agents.service import Agents
from tests.memory import MemoryDatabase, insert
from tests.memory.agents import MemoryAgents, MemoryNumbers, MemoryStock
from tests.service.fakes import EvalGateVerdicts

BOX = SecretBox(derive_sealing_key("fast-tier-server-secret"))


@pytest.fixture
def gate() -> EvalGateVerdicts:
    return EvalGateVerdicts()


@pytest.fixture
def caller(business_id) -> Tenant:
    """An API key of the business, in its trial."""
    return Tenant(account_id=new_id(), business_ids=(business_id,), api_key_id=new_id(),
                  standings=((business_id, "trialing"),))


@pytest.fixture
def agents(database, voice_port, gate, caller):
    with acting_as(caller):
        yield Agents(agents_units(database, MemoryAgents, MemoryNumbers, MemoryStock), voice_port, gate, 5.0, BOX,
                     allow_loopback=True)


async def make(agents: Agents, business_id: str, prompt: str = "Answer the phone.", **fields):
    return (await agents.create(business_id, "Front desk", prompt, None, {}, {}, {}, **fields)).row


async def assistants(voice) -> list:
    status, found = await voice.request("GET", "/assistant")
    assert status == 200
    return found


async def live_prompt(voice_client, row) -> str | None:
    return vapi_assistants.live(await voice_client.get_assistant(row.provider_assistant_id)).prompt


async def history(database: MemoryDatabase, agent_id: str) -> tuple[list[int], list[str], list[str]]:
    """The agent's versions, its inbound prompts in the audit history, and the event types recorded."""
    async with database.read() as conn:
        versions = (await MemoryAgents(conn).versions(agent_id, Page(limit=100))).rows
        prompts = sorted((r for r in conn.rows(prompt_history).values() if r["agent_id"] == agent_id),
                         key=lambda r: r["id"])
    return ([v.version for v in reversed(versions)], [r["current"] for r in prompts if r["field"] == "inbound_prompt"],
            [e["type"] for e in database.events])


async def test_an_agent_is_made_with_its_assistant_and_first_version(agents, database, voice, voice_client,
                                                                     business_id):
    row = await make(agents, business_id)
    [assistant] = await assistants(voice)
    assert row.provider_assistant_id == assistant["id"] and row.version == 1 and row.status == domain.AGENT_STATUS
    assert await live_prompt(voice_client, row) == "Answer the phone."
    assert await history(database, row.id) == ([1], ["Answer the phone."], [])
    view = await agents.get(row.id)
    assert (view.row, view.live_prompt, view.phone_number) == (row, "Answer the phone.", None)
    assert view.config.first_message == agents_contract.DEFAULT_FIRST_MESSAGE


async def test_a_repeated_request_id_answers_the_first_agent_and_makes_one_assistant(agents, voice, business_id):
    first = await make(agents, business_id, request_id="req-1")
    assert await make(agents, business_id, request_id="req-1") == first
    assert len(await assistants(voice)) == 1


async def test_a_concurrent_repeat_loses_the_race_and_undoes_its_assistant(agents, voice, business_id):
    await voice.delay_next("POST", "/assistant", 0.1)  # the first request reaches the provider last
    slow, fast = await asyncio.gather(make(agents, business_id, request_id="req-1"),
                                      make(agents, business_id, request_id="req-1"), return_exceptions=True)
    assert isinstance(slow, ServiceError) and slow.code == "conflict" and "request_id" in slow.message
    assert [a["id"] for a in await assistants(voice)] == [fast.provider_assistant_id]


async def test_bad_input_is_refused_before_the_provider_is_called(agents, voice, business_id):
    with pytest.raises(ServiceError) as empty:
        await make(agents, business_id, prompt="")
    assert empty.value.code == "invalid_request"
    with pytest.raises(ServiceError) as elsewhere:
        await make(agents, new_id())
    assert elsewhere.value.code in ("forbidden", "not_found")
    assert await assistants(voice) == []


async def test_an_agent_is_read_within_the_callers_businesses_only(agents, database, voice_client, gate,
                                                                   business_id):
    row = await make(agents, business_id)
    with pytest.raises(ServiceError) as malformed:
        await agents.get("not-an-id")
    assert malformed.value.code == "invalid_request"
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        for read in (agents.get(row.id), agents.versions(row.id, Page(limit=10)), agents.update(row.id, {
                "inbound_prompt": "Theirs"})):
            with pytest.raises(ServiceError) as hidden:
                await read
            assert hidden.value.code == "not_found"
        assert await agents.lookup([row.id]) == [] and (await agents.directory()) == ([], {})
    assert await live_prompt(voice_client, row) == "Answer the phone."


async def test_lists_show_the_agents_newest_first_with_their_first_numbers(agents, database, business_id):
    older, newer = await make(agents, business_id), await make(agents, business_id)
    now = utcnow()
    async with database.transaction() as conn:
        for number, at in (("+14155550100", now), ("+14155550101", now - timedelta(days=1))):
            insert(conn.rows(phone_numbers), phone_numbers, {
                "id": new_id(), "phone_number": number, "country": "US", "area_code": "415", "capabilities": {},
                "a2p_status": "none", "emergency_status": "none", "business_id": business_id, "agent_id": older.id,
                "provider_phone_number_id": f"pn-{number}", "assigned_at": at, "created_at": at})
    paged, numbers = await agents.list_agents(None, Page(limit=10))
    assert [r.id for r in paged.rows] == [r.id for r in sorted((older, newer), key=lambda r: (r.created_at, r.id),
                                                               reverse=True)]
    assert numbers == {older.id: "+14155550101"}
    rows, numbers = await agents.directory()
    assert {r.id for r in rows} == {older.id, newer.id} and numbers == {older.id: "+14155550101"}
    assert [r.id for r in await agents.lookup([newer.id, "junk", new_id()])] == [newer.id]
    assert (await agents.get(older.id)).phone_number == "+14155550101"
    row, outbound, number = await agents.calling_profile(older.id)
    assert row.id == older.id and outbound is not None
    assert (number.phone_number, number.provider_phone_number_id) == ("+14155550101", "pn-+14155550101")
    assert (await agents.calling_profile(newer.id))[2] is None


async def test_a_write_syncs_the_provider_and_records_version_history_and_event(agents, database, voice_client,
                                                                                business_id):
    row = await make(agents, business_id, prompt="Prompt A")
    written = await agents.update(row.id, {"inbound_prompt": "Prompt B"}, metadata={"team": "east"})
    assert written.row.version == 2 and written.updated_fields == ["inbound_prompt", "metadata"]
    assert written.row.lease_token is None and written.row.metadata == {"team": "east"}
    assert await live_prompt(voice_client, row) == "Prompt B"
    assert await history(database, row.id) == ([1, 2], ["Prompt A", "Prompt B"], ["agent.prompt_changed"])
    same = await agents.update(row.id, {"inbound_prompt": "Prompt B"}, metadata={"team": "east"})
    assert same.updated_fields == [] and same.row.version == 2
    with pytest.raises(ServiceError) as stale:
        await agents.update(row.id, {"inbound_prompt": "Prompt C"}, expected_version=1)
    assert stale.value.code == "conflict"
    assert (await history(database, row.id))[0] == [1, 2]


async def test_a_provider_failure_changes_nothing_and_frees_the_agent(agents, database, voice, voice_client,
                                                                      business_id):
    row = await make(agents, business_id, prompt="Prompt A")
    await voice.fail_next("PATCH", "/assistant", 500)
    with pytest.raises(ProviderError):
        await agents.update(row.id, {"inbound_prompt": "Prompt D"})
    assert (await agents.get(row.id)).row.lease_token is None
    assert (await agents.update(row.id, {"inbound_prompt": "Prompt E"})).row.version == 2
    assert await live_prompt(voice_client, row) == "Prompt E"
    assert (await history(database, row.id))[:2] == ([1, 2], ["Prompt A", "Prompt E"])


async def test_concurrent_writes_take_turns_on_the_lease(agents, database, voice, voice_client, business_id):
    row = await make(agents, business_id, prompt="Prompt A")
    await voice.delay_next("PATCH", "/assistant", 0.1)
    first = asyncio.ensure_future(agents.update(row.id, {"inbound_prompt": "Prompt B"}))
    await asyncio.sleep(0.03)  # the first holds the lease and waits on the provider
    second = await agents.update(row.id, {"inbound_prompt": "Prompt C"})
    assert (await first).row.version == 2 and second.row.version == 3
    assert await live_prompt(voice_client, row) == "Prompt C"
    assert (await history(database, row.id))[:2] == ([1, 2, 3], ["Prompt A", "Prompt B", "Prompt C"])


async def test_the_eval_gate_refuses_a_failing_change_and_records_a_forced_one(agents, database, gate, voice_client,
                                                                               business_id):
    row = await make(agents, business_id, prompt="Prompt A", eval_gate=True)
    gate.status = "failed"
    refused = await agents.update(row.id, {"inbound_prompt": "Prompt B"})
    assert refused.refused and refused.updated_fields == [] and refused.row.version == 1
    [(agent_id, assistant_id, targets)] = gate.asked
    assert (agent_id, assistant_id) == (row.id, row.provider_assistant_id) and targets
    assert await live_prompt(voice_client, row) == "Prompt A"
    forced = await agents.update(row.id, {"inbound_prompt": "Prompt B"}, force=True)
    assert forced.eval_gate.status == "forced" and forced.row.version == 2 and len(gate.asked) == 1
    _, version = await agents.version(row.id, 2)
    assert version.eval_gate["status"] == "forced" and version.source == "update"
    gate.status = "passed"
    passed = await agents.update(row.id, {"inbound_prompt": "Prompt C"})
    assert passed.eval_gate.status == "passed" and passed.row.version == 3


async def test_a_rollback_restores_an_earlier_configuration_as_a_new_version(agents, database, voice_client,
                                                                             business_id):
    row = await make(agents, business_id, prompt="Prompt A")
    await agents.update(row.id, {"inbound_prompt": "Prompt B"})
    rolled = await agents.rollback(row.id, 1)
    assert rolled.row.version == 3 and rolled.updated_fields == ["inbound_prompt"]
    assert await live_prompt(voice_client, row) == "Prompt A"
    _, version = await agents.version(row.id, 3)
    assert (version.rollback_of, version.parent_version, version.source) == (1, 2, "rollback")
    for bad, code in ((0, "invalid_request"), (9, "not_found")):
        with pytest.raises(ServiceError) as refused:
            await agents.rollback(row.id, bad)
        assert refused.value.code == code


CUSTOM = {"type": "custom", "name": "lookup_order", "description": "Find an order",
          "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
          "url": "http://127.0.0.1:9/orders"}  # loopback: the fixture's stack is local


async def test_the_first_custom_tool_makes_the_sealed_tool_secret_shown_once(agents, database, voice_client,
                                                                              business_id):
    created = await agents.create(business_id, "Desk", "Answer.", None, {}, {}, {}, tools=[{"type": "end_call"}])
    assert created.tool_secret is None and created.row.tool_secret_sealed is None
    written = await agents.update(created.row.id, {}, tools=[{"type": "end_call"}, CUSTOM])
    secret = written.tool_secret
    assert secret.startswith("tsec_") and written.updated_fields == ["tools"] and written.row.version == 2
    row = written.row
    assert BOX.open(row.tool_secret_sealed) == secret and row.tool_secret_tail == secret[-4:]
    assert secret not in str(row.config) and row.tool_secret_previous_sealed is None
    _, version = await agents.version(row.id, 2)
    assert version.config_snapshot["tools"][1]["url"] == CUSTOM["url"] and secret not in str(version.config_snapshot)
    live = await voice_client.get_assistant(row.provider_assistant_id)
    assert [t["type"] for t in live["model"]["tools"]] == ["endCall", "function"]
    # Later writes keep it and do not show it again; removing the tools keeps it too.
    again = await agents.update(row.id, {}, tools=[CUSTOM])
    assert again.tool_secret is None and again.row.tool_secret_sealed == row.tool_secret_sealed
    assert (await agents.update(row.id, {}, tools=[])).tool_secret is None
    assert (await voice_client.get_assistant(row.provider_assistant_id))["model"].get("tools") is None
    # An agent made with a custom tool gets its secret in the creation's answer.
    made = await agents.create(business_id, "Desk", "Answer.", None, {}, {}, {}, tools=[CUSTOM])
    assert made.tool_secret and BOX.open(made.row.tool_secret_sealed) == made.tool_secret


async def test_a_rotation_keeps_the_previous_secret_signing_for_a_day(agents, business_id, caller):
    made = await agents.create(business_id, "Desk", "Answer.", None, {}, {}, {}, tools=[CUSTOM])
    before = utcnow()
    rotated = await agents.rotate_tool_secret(made.row.id)
    assert rotated.secret != made.tool_secret and BOX.open(rotated.row.tool_secret_sealed) == rotated.secret
    assert BOX.open(rotated.row.tool_secret_previous_sealed) == made.tool_secret
    assert rotated.previous_expires_at >= before + timedelta(hours=24)
    assert rotated.row.version == made.row.version  # not a configuration change
    plain = await agents.create(business_id, "Plain", "Answer.", None, {}, {}, {})
    first = await agents.rotate_tool_secret(plain.row.id)
    assert first.previous_expires_at is None and first.row.tool_secret_previous_sealed is None
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),), api_key_id=new_id())):
        with pytest.raises(ServiceError) as refused:
            await agents.rotate_tool_secret(made.row.id)
    assert refused.value.code == "not_found"


async def test_bad_tools_are_refused_before_the_provider_is_called(agents, voice, business_id):
    for tools in ([{"type": "fax"}], [{**CUSTOM, "url": "https://10.0.0.7/x"}]):
        with pytest.raises(ServiceError) as refused:
            await agents.create(business_id, "Desk", "Answer.", None, {}, {}, {}, tools=tools)
        assert refused.value.code == "invalid_request" and refused.value.message.startswith("tools[0].")
    assert await assistants(voice) == []


POOL = ("+14155550100", "+14155550101", "+12125550100")


@pytest.fixture
async def numbers(database, voice_port, caller):
    """The phone-number use cases on a pool of POOL (the business is in its trial: one pool number allowed)."""
    async with database.transaction() as conn:
        for number in POOL:
            insert(conn.rows(phone_numbers), phone_numbers, {
                "id": new_id(), "phone_number": number, "country": "US", "area_code": number[2:5],
                "capabilities": {"voice_inbound": True, "sms_outbound": True}, "a2p_status": "not_started",
                "emergency_status": "not_set", "created_at": utcnow()})
    with acting_as(caller):
        yield Numbers(agents_units(database, MemoryAgents, MemoryNumbers, MemoryStock), voice_port, trial_numbers=1)


async def provider_numbers(voice) -> list:
    status, found = await voice.request("GET", "/phone-number")
    assert status == 200
    return found


async def test_a_number_is_assigned_once_with_its_provider_number_within_the_trials_allowance(
        numbers, agents, database, voice, business_id):
    agent = await make(agents, business_id)
    assert [r.phone_number for r in (await numbers.available("US", "415", None, None, 10))[0].rows] == list(POOL[:2])
    row = await numbers.assign(None, POOL[0], agent.id)
    [imported] = await provider_numbers(voice)
    assert (row.business_id, row.agent_id, row.provider_phone_number_id, row.lease_token) == (
        business_id, agent.id, imported["id"], None)
    assert imported["number"] == POOL[0] and "assistantId" not in imported
    assert [e["type"] for e in database.events] == ["phone_number.assigned"]
    route = await numbers.route(POOL[0])
    assert (route.agent_id, route.agent_name) == (agent.id, "Front desk")
    assert await numbers.counts() == [NumberCount(business_id, 1)]
    assert [r.phone_number for r in (await numbers.list_numbers(None, False, None, Page(limit=10)))[1].rows] == [POOL[0]]
    assert (await agents.get(agent.id)).phone_number == POOL[0]
    for number, code in ((POOL[0], "conflict"), (POOL[1], "forbidden"), ("+14155550199", "not_found")):
        with pytest.raises(ServiceError) as refused:
            await numbers.assign(None, number, None)
        assert refused.value.code == code
    assert len(await provider_numbers(voice)) == 1


async def test_an_assign_the_provider_refuses_leaves_the_number_free(numbers, voice):
    await voice.fail_next("POST", "/phone-number", 500)
    with pytest.raises(ProviderError):
        await numbers.assign(None, POOL[0], None)
    assert POOL[0] in [r.phone_number for r in (await numbers.available("US", "415", None, None, 10))[0].rows]
    assert (await numbers.assign(None, POOL[0], None)).provider_phone_number_id


async def test_another_business_agent_is_refused_before_the_provider_is_asked(numbers, agents, voice, business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id, other := new_id()))):
        theirs = await make(agents, other)
    with pytest.raises(ServiceError) as refused:
        await numbers.assign(None, POOL[0], theirs.id)
    assert refused.value.code == "not_found" and await provider_numbers(voice) == []


async def test_forwarding_changes_the_provider_number_and_re_pointing_is_ours_alone(numbers, agents, database,
                                                                                    voice, voice_client,
                                                                                    business_id):
    first, second = await make(agents, business_id), await make(agents, business_id)
    row = await numbers.assign(None, POOL[0], first.id)
    forwarded = await numbers.update(None, POOL[0], forward_to="+14155550177", ring_seconds=15)
    assert (forwarded.forward_to, forwarded.ring_seconds, forwarded.lease_token) == ("+14155550177", 15, None)
    [at_provider] = await provider_numbers(voice)
    assert at_provider["hooks"] and "+14155550177" in str(at_provider["hooks"])
    moved = await numbers.update(None, POOL[0], agent_id=second.id)
    assert moved.agent_id == second.id and moved.forward_to == "+14155550177"
    off = await numbers.update(None, POOL[0], forward_to=None)
    assert (off.forward_to, off.ring_seconds) == (None, None)
    assert not (await provider_numbers(voice))[0].get("hooks")
    assert [e["type"] for e in database.events] == ["phone_number.assigned"] * 2
    assert row.id == moved.id == off.id
    with pytest.raises(ServiceError) as nothing:
        await numbers.update(None, POOL[0])
    assert nothing.value.code == "invalid_request"


async def test_a_released_number_goes_back_to_the_pool_and_leaves_the_provider(numbers, database, voice,
                                                                              business_id):
    await numbers.assign(None, POOL[0], None)
    assert await numbers.release(None, POOL[0]) == (POOL[0], business_id)
    assert await provider_numbers(voice) == []
    assert [e["type"] for e in database.events] == ["phone_number.assigned", "phone_number.released"]
    assert POOL[0] in [r.phone_number for r in (await numbers.available("US", "415", None, None, 10))[0].rows]
    with pytest.raises(ServiceError) as gone:
        await numbers.release(None, POOL[0])
    assert gone.value.code == "not_found"
    await numbers.assign(None, POOL[1], None)  # the trial's allowance is free again
    assert await numbers.release_all(business_id) == 1 and await numbers.counts() == []
