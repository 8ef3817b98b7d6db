"""Answering the model's tool calls (services/calls/tools_service.py) on the real database: of deliveries of one
toolCallId racing each other, the table's unique key lets one run the tool and the others answer its result."""
import asyncio
import uuid

from core.ids import utcnow
from providers.voice.port import ToolResult
from services.calls import store
from services.calls.ports import AgentTool
from services.calls.repository import calls_units
from services.calls.tools_service import ToolCalls
from tests.service.fakes import CallsNeighbours, idle_builtins
from tests.unit.test_tool_calls import ToolAgents, tool_calls


async def test_racing_deliveries_of_one_tool_call_run_it_once(engine, database):
    now, business_id, agent_id = utcnow(), str(uuid.uuid4()), str(uuid.uuid4())
    async with engine.begin() as conn:
        call = await store.insert_call(
            conn, id=str(uuid.uuid4()), business_id=business_id, agent_id=agent_id, direction="inbound",
            status="in-progress", to_number="+14155550100", max_duration=600, compliance="skip", variables={},
            provider_call_id=f"pc-{uuid.uuid4()}", created_at=now, updated_at=now)
    agents = ToolAgents(business_id, agent_id, (AgentTool("lookup_order", "custom"),), delay=0.2)
    tools = ToolCalls(calls_units(database), agents, texts=CallsNeighbours(), **idle_builtins(), wait_seconds=5, poll_seconds=0.02)
    message = tool_calls(call.provider_call_id, str(call.id), ("tc-1", "lookup_order", {"order": 7}))
    answers = await asyncio.gather(*(tools.answer(message) for _ in range(5)))
    assert answers == [[ToolResult("tc-1", "order 7 ships Monday")]] * 5
    assert len(agents.runs) == 1
    async with calls_units(database).read() as work:
        _, [row] = await work.calls.with_tool_calls([business_id], str(call.id))
    assert (row.outcome, row.arguments, row.duration_ms >= 150) == ("ok", {"order": 7}, True)
