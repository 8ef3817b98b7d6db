"""The model's calls of an agent's tools during a call, in the fast tier: the Vapi adapter reading a tool-calls
message and wording its answer, the calls service's use case (services/calls/tools_service.py) on the in-memory
database with the agents service behind an in-memory port, and the agents service running a custom tool
(services/agents/tool_runs.py) against a receiver on this machine."""
import asyncio
import json

import pytest
from aiohttp import web
from stripe import WebhookSignature

from core import signing, tenant
from core.errors import ServiceError, not_found
from core.ids import new_id
from core.tenant import Tenant, acting_as
from providers.voice.port import ToolCallsRequest, ToolResult
from providers.voice.vapi import calls as vapi_calls
from services.agents.repository import agents_units
from services.agents.service import Agents
from services.agents.tool_runs import RESULT_MAX_BYTES, CustomTools
from services.calls.booking_tools import BookingTools
from services.calls.lead_tools import LeadTools
from services.calls.lifecycle_service import Lifecycle
from services.calls.ports import AgentTool, CustomToolRun
from services.calls.repository import calls_units
from services.calls.tools_service import END_CALL_RESULT, NOT_THIS_CALL, UNAVAILABLE, ToolCalls
from tests.integration.servers import serving
from tests.memory.agents import MemoryAgents, MemoryNumbers, MemoryStock
from tests.memory.calls import MemoryCalls
from tests.service.fakes import CallerLeads, CallsNeighbours, EvalGateVerdicts, idle_builtins
from tests.storage_contracts import call_values
from tests.unit.test_agents_use_cases import BOX

# -- the adapter ----------------------------------------------------------------------------------


def tool_calls(provider_call_id: str, our_id: str | None, *calls: tuple[str, str, dict]) -> ToolCallsRequest:
    """A tool-calls server message as Vapi sends it (each call's arguments as a JSON string), read by the adapter."""
    metadata = {"metadata": {vapi_calls.CALL_ID_KEY: our_id}} if our_id else {}
    read = vapi_calls.read_message({"message": {
        "type": "tool-calls", "call": {"id": provider_call_id, "assistantOverrides": metadata},
        "toolCallList": [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                         for i, n, a in calls]}})
    assert isinstance(read, ToolCallsRequest)
    return read


def test_a_tool_calls_message_reads_each_call_and_is_answered_in_the_results_shape():
    read = tool_calls("pc-1", None, ("tc-1", "lookup_order", {"order": 7}), ("tc-2", "end_call", {}))
    assert read.call.provider_call_id == "pc-1"
    assert [(c.id, c.name, c.arguments) for c in read.calls] == [("tc-1", "lookup_order", {"order": 7}),
                                                                 ("tc-2", "end_call", {})]
    # The guides' flat shape, arguments as an object; unreadable arguments are none.
    flat = vapi_calls.read_message({"message": {"type": "tool-calls", "call": {"id": "pc-1"}, "toolCallList": [
        {"id": "tc-3", "name": "send_sms", "arguments": {"text": "hi"}},
        {"id": "tc-4", "function": {"name": "x", "arguments": "not json"}}, {"name": "no id"}]}})
    assert [(c.id, c.name, c.arguments) for c in flat.calls] == [("tc-3", "send_sms", {"text": "hi"}),
                                                                 ("tc-4", "x", {})]
    assert vapi_calls.tool_results([ToolResult("tc-1", "ships Monday")]) == {
        "results": [{"toolCallId": "tc-1", "result": "ships Monday"}]}


# -- the calls service's use case -------------------------------------------------------------------


class ToolAgents:
    """The calls service's port on agents for tools: the agent's tools (not found outside its business) and the
    custom tool's runs, each taking `delay` seconds."""

    def __init__(self, business_id: str, agent_id: str, tools: tuple[AgentTool, ...], delay: float = 0.0):
        self.business_id, self.agent_id, self.tools_now, self.delay = business_id, agent_id, tools, delay
        self.runs: list[tuple] = []

    async def tools(self, agent_id):
        if agent_id != self.agent_id or not tenant.current().can_access(self.business_id):
            raise not_found("agent")
        return self.tools_now

    async def run_custom_tool(self, agent_id, name, tool_call_id, arguments, call):
        self.runs.append((agent_id, name, tool_call_id, arguments, call))
        await asyncio.sleep(self.delay)
        return CustomToolRun("ok", f"order {arguments['order']} ships Monday")


LOOKUP = AgentTool("lookup_order", "custom")
TOOLS = (LOOKUP, AgentTool("end_call", "end_call"), AgentTool("check_availability", "check_availability"))


@pytest.fixture
async def call(database, business_id):
    async with calls_units(database, MemoryCalls).transaction() as work:
        return await work.calls.add(**call_values(business_id, provider_call_id=f"pc-{new_id()}",
                                                  direction="inbound", from_number="+14155550199"))


@pytest.fixture
def agents(business_id, call):
    return ToolAgents(business_id, call.agent_id, TOOLS, delay=0.05)


@pytest.fixture
def tools(database, agents):
    return ToolCalls(calls_units(database, MemoryCalls), agents, texts=CallsNeighbours(), **idle_builtins(), wait_seconds=2,
                     poll_seconds=0.01)


async def recorded(database, call) -> list:
    async with calls_units(database, MemoryCalls).read() as work:
        return (await work.calls.with_tool_calls([call.business_id], call.id))[1]


async def test_a_tool_call_runs_once_per_id_and_a_repeat_or_concurrent_delivery_gets_its_result(
        tools, agents, database, call):
    message = tool_calls(call.provider_call_id, call.id, ("tc-1", "lookup_order", {"order": 7}))
    first, concurrent = await asyncio.gather(tools.answer(message), tools.answer(message))
    again = await tools.answer(message)
    assert first == concurrent == again == [ToolResult("tc-1", "order 7 ships Monday")]
    [(agent_id, name, tool_call_id, arguments, context)] = agents.runs
    assert (agent_id, name, tool_call_id, arguments) == (call.agent_id, "lookup_order", "tc-1", {"order": 7})
    assert context == {"id": call.id, "business_id": call.business_id, "agent_id": call.agent_id,
                       "direction": "inbound", "from": "+14155550199", "to": call.to_number}
    [row] = await recorded(database, call)
    assert (row.tool_call_id, row.name, row.arguments, row.result, row.outcome) == (
        "tc-1", "lookup_order", {"order": 7}, "order 7 ships Monday", "ok")
    assert row.duration_ms >= 40


async def test_the_lifecycle_answers_a_forwarded_tool_calls_message_in_the_providers_shape(tools, database, voice_port,
                                                                                            call):
    body = json.dumps({"message": {"type": "tool-calls", "call": {"id": call.provider_call_id}, "toolCallList": [
        {"id": "tc-1", "type": "function", "function": {"name": "end_call", "arguments": {}}}]}}).encode()
    handled = await Lifecycle(calls_units(database, MemoryCalls), voice_port, tools=tools).handle(body)
    assert handled == {"results": [{"toolCallId": "tc-1", "result": END_CALL_RESULT}]}


async def test_end_call_is_ok_and_a_tool_the_agent_lacks_or_the_provider_runs_is_refused(tools, agents, database,
                                                                                          call):
    agents.tools_now = (AgentTool("end_call", "end_call"),
                        AgentTool("transfer_call", "transfer_call"))  # lookup removed
    answered = await tools.answer(tool_calls(call.provider_call_id, None, ("tc-1", "end_call", {}),
                                             ("tc-2", "lookup_order", {"order": 7}),
                                             ("tc-3", "transfer_call", {}),
                                             ("tc-4", "delete_everything", {})))
    assert answered[0] == ToolResult("tc-1", END_CALL_RESULT)
    assert "lookup_order is not available to this agent" in answered[1].result
    # The transfer is the provider's own tool (transfer-destination-request): a function call of it runs nothing.
    assert "transfer_call is not available to this agent" in answered[2].result
    assert "delete_everything is not available to this agent" in answered[3].result
    assert agents.runs == []
    outcomes = {r.tool_call_id: r.outcome for r in await recorded(database, call)}
    assert outcomes == {"tc-1": "ok", "tc-2": "refused", "tc-3": "refused", "tc-4": "refused"}


class BrokenSlots:
    """A bookings port that fails as no rule foresaw."""

    async def free_slots(self, business_id, first, last):
        raise RuntimeError("the slots could not be read")


async def test_a_tool_that_fails_unexpectedly_is_settled_failed_not_left_running(agents, database, call):
    agents.tools_now = (AgentTool("check_availability", "check_availability"),)
    leads = CallerLeads()
    tools = ToolCalls(calls_units(database, MemoryCalls), agents, texts=CallsNeighbours(),
                      bookings=BookingTools(BrokenSlots(), leads), leads=LeadTools(leads), wait_seconds=1)
    message = tool_calls(call.provider_call_id, None, ("tc-1", "check_availability", {"date": "2026-03-07"}))
    [answered] = await tools.answer(message)
    assert answered.result == UNAVAILABLE
    [row] = await recorded(database, call)
    assert (row.outcome, row.result) == ("failed", UNAVAILABLE)
    assert await tools.answer(message) == [answered]  # a retry answers the record, runs nothing


async def test_a_message_about_no_call_of_ours_or_another_call_runs_and_records_nothing(tools, agents, database,
                                                                                       call, business_id):
    async with calls_units(database, MemoryCalls).transaction() as work:
        other = await work.calls.add(**call_values(new_id(), provider_call_id=f"pc-{new_id()}"))
    for message in (tool_calls(f"pc-{new_id()}", None, ("tc-1", "lookup_order", {"order": 7})),
                    # our id of one business's call, with the provider's call of another's
                    tool_calls(other.provider_call_id, call.id, ("tc-1", "lookup_order", {"order": 7}))):
        assert await tools.answer(message) == [ToolResult("tc-1", NOT_THIS_CALL)]
    # The provider's call of another business, with the agent of this one: the agents service finds no such agent.
    assert [r.result for r in await tools.answer(tool_calls(other.provider_call_id, None,
                                                            ("tc-2", "lookup_order", {"order": 7})))] == [
        "The tool lookup_order is not available to this agent. Please tell the caller that this can't be done on "
        "this call."]
    assert agents.runs == [] and await recorded(database, call) == []


# -- the agents service running a custom tool ---------------------------------------------------------


class ToolReceiver:
    """A business's tool endpoint on this machine: /ok answers the order, /slow sleeps, /broken is a 503, /huge
    answers 10 MB."""

    def __init__(self):
        self.requests: list[tuple[bytes, dict]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append((body, dict(request.headers)))
        kind = request.match_info["kind"]
        if kind == "slow":
            await asyncio.sleep(3)
        if kind == "broken":
            return web.Response(status=503, text="down")
        if kind == "huge":
            return web.Response(body=b"x" * (10 * 1024 * 1024))
        return web.json_response({"status": "ships Monday", "order": json.loads(body)["arguments"]["order"]})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{kind}", self.handle)
        return app


@pytest.fixture
async def receiver():
    found = ToolReceiver()
    async with serving(found.app()) as server:
        found.url = str(server.make_url("")).rstrip("/")
        yield found


def custom(name: str, url: str, timeout_ms: int = 2000) -> dict:
    return {"type": "custom", "name": name, "description": "Find an order", "timeout_ms": timeout_ms,
            "parameters": {"type": "object", "properties": {"order": {"type": "integer"}}}, "url": url}


async def test_a_custom_tool_gets_one_signed_post_and_its_failures_are_results_the_model_can_say(
        database, voice_port, business_id, receiver):
    units = agents_units(database, MemoryAgents, MemoryNumbers, MemoryStock)
    caller = Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "trialing"),))
    runner = CustomTools(units, BOX, allow_loopback=True)
    with acting_as(caller):
        made = await Agents(units, voice_port, EvalGateVerdicts(), 5.0, BOX, allow_loopback=True).create(
            business_id, "Desk", "Answer.", None, {}, {}, {}, tools=[
                custom(kind, f"{receiver.url}/{kind}", 500 if kind == "slow" else 2000)
                for kind in ("ok", "slow", "broken", "huge")])
        agent_id, call = made.row.id, {"id": new_id(), "business_id": business_id}
        ok = await runner.run(agent_id, "ok", "tc-1", {"order": 7}, call)
        slow = await runner.run(agent_id, "slow", "tc-2", {"order": 7}, call)
        broken = await runner.run(agent_id, "broken", "tc-3", {"order": 7}, call)
        huge = await runner.run(agent_id, "huge", "tc-4", {"order": 7}, call)
        gone = await runner.run(agent_id, "missing", "tc-5", {}, call)
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        with pytest.raises(ServiceError) as refused:
            await runner.run(agent_id, "ok", "tc-6", {"order": 7}, call)
    await runner.close()
    assert refused.value.code == "not_found"
    assert (ok.outcome, json.loads(ok.result)) == ("ok", {"status": "ships Monday", "order": 7})
    body, headers = receiver.requests[0]
    assert json.loads(body) == {"tool_call_id": "tc-1", "name": "ok", "arguments": {"order": 7}, "call": call}
    assert WebhookSignature.verify_header(body.decode(), headers[signing.SIGNATURE_HEADER], made.tool_secret,
                                          tolerance=300)
    assert slow.outcome == "failed" and "did not answer within 0.5 seconds" in slow.result
    assert broken.outcome == "failed" and "HTTP 503" in broken.result
    assert huge.outcome == "ok" and huge.result.startswith("x" * RESULT_MAX_BYTES)
    assert huge.result.endswith(f"[the tool's answer was cut at {RESULT_MAX_BYTES} bytes]")
    assert gone.outcome == "refused" and "not available" in gone.result
    assert len(receiver.requests) == 4  # the missing tool and the other business's caller sent nothing
