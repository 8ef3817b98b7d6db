"""The model's calls of the agent's tools during a call: the provider's tool-calls message, answered with a result
per tool call while the provider waits.

Each tool call is on the record once per (call, the provider's tool call id): it is claimed (inserted as running:
the unique key decides which of two concurrent deliveries runs it) in a transaction of its own, the tool runs with
no transaction held, and its result is written after. A delivery that finds the tool call claimed already runs
nothing: it answers with the recorded result, waiting up to WAIT_SECONDS for one that is still running.

Only a call of ours is acted on: a message about no call we recorded, or naming one of our calls while the
provider's call is another (another business's), is answered with a refusal the model can say and recorded
nowhere. The agent's tools are read now, as the call's business (the agents service refuses an agent of another
one), so a tool removed during the call is refused too. Custom tools run in the agents service, which holds their
signing secret (services.calls.ports.Agents.run_custom_tool); send_sms and send_link text through messaging
(services.calls.text_tools)."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from contracts.agents import CUSTOM_TOOL, TIMEOUT_MS
from core import tenant
from core.errors import ServiceError
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.voice.port import CallRef, ToolCall, ToolCallsRequest, ToolResult
from services.calls import text_tools
from services.calls.booking_tools import BookingTools
from services.calls.lead_tools import LeadTools
from services.calls.ports import Agents, AgentTool, Texts
from services.calls.records import Call, ToolCallRecord
from services.calls.repository import CallsUnit

log = logging.getLogger(__name__)

ACTOR = "calls-tools"
NOT_THIS_CALL = "I can't use tools on this call. Please tell the caller that this can't be done right now."
STILL_RUNNING = "This is still being worked on. Please tell the caller it will take a moment longer."
UNAVAILABLE = "The tools cannot be reached right now. Please tell the caller that this can't be done at the moment."
END_CALL_RESULT = "ok"  # the provider ends the call itself
# How long a second delivery waits for the result of a tool call another one is running: the longest a custom
# tool may take, and a little more.
WAIT_SECONDS = TIMEOUT_MS[2] / 1000 + 1
POLL_SECONDS = 0.1


def not_the_agents(name: str) -> str:
    return (f"The tool {name or '(unnamed)'} is not available to this agent. Please tell the caller that this "
            "can't be done on this call.")


class ToolCalls:
    def __init__(self, uow: UnitOfWork[CallsUnit], agents: Agents, *, texts: Texts, bookings: BookingTools,
                 leads: LeadTools, wait_seconds: float = WAIT_SECONDS, poll_seconds: float = POLL_SECONDS):
        self.uow = uow  # the calls and their tool calls (services.calls.repository)
        self.agents = agents  # the agent's tools, and the custom tools' runs (services.calls.ports)
        self.texts = texts  # send_sms's and send_link's texts (messaging: services.calls.text_tools)
        self.bookings = bookings  # check_availability, book_appointment (services.calls.booking_tools)
        self.leads = leads  # update_lead (services.calls.lead_tools)
        self.wait_seconds, self.poll_seconds = wait_seconds, poll_seconds

    async def answer(self, request: ToolCallsRequest) -> list[ToolResult]:
        """A result for each tool call of the message, in its order."""
        call = await self.call_of(request.call)
        if call is None:
            log.warning("tool calls for no call of ours (provider call %s) refused", request.call.provider_call_id)
            return [ToolResult(c.id, NOT_THIS_CALL) for c in request.calls]
        claimed = await self._claim(call, request.calls)
        with tenant.acting_as(tenant.acting_for(call.business_id, ACTOR)):
            tools = await self.tools_of(call.agent_id) if claimed else ()
            results = await asyncio.gather(*(
                self._run(call, tools, c) if claimed.pop(c.id, False) else self._recorded(call.id, c.id)
                for c in request.calls))  # an id twice in one message runs once: the second waits for it
        return [ToolResult(c.id, result) for c, result in zip(request.calls, results, strict=True)]

    async def call_of(self, ref: CallRef) -> Call | None:
        """The call of ours the message is about, or None (none, our id names another call than the provider's,
        or the call was erased: services.calls.erasure; nothing of it is recorded or run)."""
        if not ref.provider_call_id:
            return None
        async with self.uow.read() as work:
            call = await work.calls.by_provider_id(ref.provider_call_id)
        if call is None or (ref.our_call_id is not None and ref.our_call_id.lower() != call.id):
            return None
        return call if call.erased_at is None else None

    async def _claim(self, call: Call, calls: tuple[ToolCall, ...]) -> dict[str, bool]:
        """The tool calls (by id) that are this delivery's to run: claimed now, not before."""
        claimed: dict[str, bool] = {}
        async with self.uow.transaction() as work:
            for c in calls:
                if c.id in claimed:
                    continue
                row = await work.calls.claim_tool_call(
                    call_id=call.id, tool_call_id=c.id, name=c.name, arguments=dict(c.arguments), outcome="running",
                    created_at=utcnow())
                claimed[c.id] = row is not None
        return {i: True for i, mine in claimed.items() if mine}

    async def tools_of(self, agent_id: str) -> tuple[AgentTool, ...] | None:
        """The agent's tools now: () when the agent is gone (every tool call refused), None when they cannot be
        read (every tool call failed)."""
        try:
            return await self.agents.tools(agent_id)
        except ServiceError as exc:
            if exc.code == "not_found":
                return ()
            log.warning("the tools of agent %s could not be read: %s", agent_id, exc.code)
            return None

    async def _run(self, call: Call, tools: tuple[AgentTool, ...] | None, tool_call: ToolCall) -> str:
        started = time.monotonic()
        try:
            outcome, result = await self._dispatch(call, tools, tool_call)
        except Exception:  # settled failed rather than left running: the model gets a sentence, not a wait
            log.exception("tool call %s (%s) of call %s failed", tool_call.id, tool_call.name, call.id)
            outcome, result = "failed", UNAVAILABLE
        duration_ms = round((time.monotonic() - started) * 1000)
        log.info("tool call %s (%s) of call %s: %s in %d ms", tool_call.id, tool_call.name, call.id, outcome,
                 duration_ms)  # the arguments may hold personal data: never logged
        async with self.uow.transaction() as work:
            await work.calls.settle_tool_call(call.id, tool_call.id, {"result": result, "outcome": outcome,
                                                                      "duration_ms": duration_ms})
        return result

    async def _dispatch(self, call: Call, tools: tuple[AgentTool, ...] | None,
                        tool_call: ToolCall) -> tuple[str, str]:
        """(outcome, result) of one tool call: the one place a tool call's name decides what runs."""
        if tools is None:
            return "failed", UNAVAILABLE
        tool = next((t for t in tools if t.name == tool_call.name), None)
        if tool is None:
            return "refused", not_the_agents(tool_call.name)
        if tool.type == "end_call":
            return "ok", END_CALL_RESULT
        if tool.type in ("send_sms", "send_link"):
            return await text_tools.run(self.texts, call, tool, tool_call)
        if tool.type == CUSTOM_TOOL:
            try:
                run = await self.agents.run_custom_tool(call.agent_id, tool.name, tool_call.id,
                                                        dict(tool_call.arguments), call_context(call))
            except ServiceError as exc:
                log.warning("custom tool %s of call %s not run: %s", tool.name, call.id, exc.code)
                return "failed", f"The tool {tool.name} could not be reached. Please tell the caller it failed."
            return run.outcome, run.result
        if tool.type == "check_availability":
            return await self.bookings.check_availability(call, tool_call.arguments)
        if tool.type == "book_appointment":
            return await self.bookings.book_appointment(call, tool_call.arguments)
        if tool.type == "update_lead":
            return await self.leads.update_lead(call, tool_call.arguments)
        # transfer_call is the provider's own tool (its destination asked by transfer-destination-request): never
        # one of ours to run.
        return "refused", not_the_agents(tool_call.name)

    async def _recorded(self, call_id: str, tool_call_id: str) -> str:
        """The result of a tool call claimed by an earlier (or concurrent) delivery."""
        deadline = time.monotonic() + self.wait_seconds
        while True:
            async with self.uow.read() as work:
                row: ToolCallRecord | None = await work.calls.tool_call(call_id, tool_call_id)
            if row is not None and row.result is not None:
                return row.result
            if time.monotonic() >= deadline:
                return STILL_RUNNING
            await asyncio.sleep(self.poll_seconds)


def call_context(call: Call) -> dict[str, Any]:
    """What a custom tool is told of the call it is used in."""
    return {"id": call.id, "business_id": call.business_id, "agent_id": call.agent_id, "direction": call.direction,
            "from": call.from_number, "to": call.to_number}
