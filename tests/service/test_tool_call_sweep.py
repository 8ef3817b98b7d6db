"""The tool-call sweep (services/calls/tool_sweep.py) on the real database: tool calls left running by a run that
died are settled failed with a sentence, in batches, each once however many sweeps run at once; a running one that
is not stale and a settled one are left as they are; and a later delivery of a swept tool call answers its sentence
instead of "still being worked on"."""
import asyncio
import uuid
from datetime import timedelta

import sqlalchemy as sa

from core.ids import utcnow
from providers.voice.port import ToolResult
from services.calls import schema, store
from services.calls.repository import calls_units
from services.calls.tool_sweep import GAVE_UP, ToolCallSweep
from services.calls.tools_service import ToolCalls
from tests.service.fakes import CallsNeighbours, idle_builtins
from tests.unit.test_tool_calls import ToolAgents, tool_calls

# Older than any tool call another test leaves running, so these sweeps take this test's alone (the stack's own
# sweep, two minutes' bound, may also take some of them: it settles each once too).
LONG_AGO = timedelta(days=10)
STALE_AFTER = timedelta(days=9)


async def test_stale_running_tool_calls_are_settled_failed_once_in_batches(engine, database):
    now, business_id, agent_id = utcnow(), str(uuid.uuid4()), str(uuid.uuid4())
    async with engine.begin() as conn:
        call = await store.insert_call(
            conn, id=str(uuid.uuid4()), business_id=business_id, agent_id=agent_id, direction="inbound",
            status="in-progress", to_number="+14155550100", max_duration=600, compliance="skip", variables={},
            provider_call_id=f"pc-{uuid.uuid4()}", created_at=now, updated_at=now)
        for i in range(7):
            await store.claim_tool_call(conn, call_id=call.id, tool_call_id=f"stale-{i}", name="lookup_order",
                                        arguments={}, outcome="running", created_at=now - LONG_AGO)
        await store.claim_tool_call(conn, call_id=call.id, tool_call_id="done", name="end_call", arguments={},
                                    outcome="ok", result="ok", duration_ms=3, created_at=now - LONG_AGO)
        await store.claim_tool_call(conn, call_id=call.id, tool_call_id="fresh", name="lookup_order", arguments={},
                                    outcome="running", created_at=now)
    async with engine.connect() as conn:  # every stale one, other tests' included: the sweeps may settle those too
        t = schema.tool_calls.c
        stale = await conn.scalar(sa.select(sa.func.count()).select_from(schema.tool_calls).where(
            t.outcome == "running", t.created_at < now - STALE_AFTER))
    sweeps = [ToolCallSweep(calls_units(database), stale_after=STALE_AFTER, batch=2) for _ in range(3)]
    settled = []
    while True:  # three replicas' sweeps at once, a batch of two each, until none has more to do
        counts = await asyncio.gather(*(s.sweep() for s in sweeps))
        settled += counts
        if not any(counts):
            break
    assert max(settled) <= 2 and 7 <= sum(settled) <= stale  # batches; no tool call settled twice
    async with engine.connect() as conn:
        t = schema.tool_calls.c
        rows = {r.tool_call_id: r for r in await conn.execute(schema.tool_calls.select().where(t.call_id == call.id))}
    assert {i: (r.outcome, r.result) for i, r in rows.items() if i.startswith("stale")} == {
        f"stale-{i}": ("failed", GAVE_UP) for i in range(7)}
    assert all(r.duration_ms >= LONG_AGO.total_seconds() * 1000 for i, r in rows.items() if i.startswith("stale"))
    assert (rows["done"].outcome, rows["done"].result, rows["done"].duration_ms) == ("ok", "ok", 3)
    assert (rows["fresh"].outcome, rows["fresh"].result) == ("running", None)
    # The provider's next delivery of a swept tool call gets the sentence at once, and nothing runs.
    agents = ToolAgents(business_id, agent_id, ())
    tools = ToolCalls(calls_units(database), agents, texts=CallsNeighbours(), **idle_builtins(), wait_seconds=5, poll_seconds=0.02)
    answered = await asyncio.wait_for(tools.answer(tool_calls(call.provider_call_id, str(call.id),
                                                              ("stale-0", "lookup_order", {}))), 1)
    assert answered == [ToolResult("stale-0", GAVE_UP)] and agents.runs == []


def test_the_sweep_waits_far_longer_than_any_tool_may_take():
    from contracts.agents import TIMEOUT_MS
    from services.calls.tool_sweep import STALE_AFTER as BOUND
    from services.calls.tools_service import WAIT_SECONDS
    assert BOUND.total_seconds() > 4 * max(TIMEOUT_MS[2] / 1000, WAIT_SECONDS)
