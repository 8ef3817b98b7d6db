"""Where a call goes when the agent transfers it with its transfer_call and no destination of its own: the
provider's transfer request, answered while the provider waits with the business's own phone (its signup's
phone_forward_to), warm or blind as the tool says, or refused with words the assistant says.

Only a call of ours is put through: a request about no call we recorded, or naming one of our calls while the
provider's call is another (another business's), is refused and recorded nowhere. The agent's tools are read now,
as the call's business, so an agent that no longer has transfer_call (or whose transfer_call names destinations:
the provider puts those through itself) is refused too. Each request is on the call's record once, as a tool call
named transfer_call whose result says where the call went (a retried request, which carries the same time, is
answered again and recorded once)."""
from __future__ import annotations

import logging
import time

from contracts.agents import TRANSFER_MODES
from core import tenant
from core.errors import ServiceError
from core.ids import new_id, utcnow
from providers.voice.port import TransferAnswer, TransferRequest
from services.calls.ports import AgentTool, BusinessPhone, Owners
from services.calls.records import Call
from services.calls.tools_service import ToolCalls

log = logging.getLogger(__name__)

ACTOR = "calls-transfer"
TOOL = "transfer_call"
CANNOT_TRANSFER = "I'm sorry, I can't transfer you right now."
NO_PHONE = "I'm sorry, there is nobody I can put you through to right now."
UNAVAILABLE = "I'm sorry, I can't put you through at the moment."
HOLD = "Please hold while I put you through."


def introduction(business: str, caller: str | None) -> str:
    """What the person hears on a warm transfer: who is coming, and from where."""
    who = f"a caller, {caller}," if caller else "a caller"
    return f"Hello, this is the {business} assistant. I have {who} on the line who asked to speak with someone."


def business_transfer(tools: tuple[AgentTool, ...]) -> AgentTool | None:
    """The agent's transfer_call when it transfers to the business's phone (it names no destination), else None."""
    tool = next((t for t in tools if t.type == TOOL), None)
    return None if tool is None or tool.settings.get("destinations") else tool


def answer_for(call: Call, tool: AgentTool, phone: BusinessPhone) -> tuple[str, TransferAnswer]:
    """(outcome, answer) of a transfer request with the agent's transfer_call as saved and the business's phone."""
    if phone.forward_to is None:
        return "refused", TransferAnswer(refusal=NO_PHONE)
    warm = tool.settings.get("mode", TRANSFER_MODES[0]) == "warm"
    caller = call.from_number if call.direction == "inbound" else call.to_number
    return "ok", TransferAnswer(phone.forward_to, warm, HOLD, introduction(phone.name, caller) if warm else None)


def recorded(answer: TransferAnswer) -> str:
    """The transfer's result on the call's record."""
    if answer.phone_number is None:
        return answer.refusal or ""
    return f"Put through to {answer.phone_number} ({'warm' if answer.warm else 'blind'})."


class Transfers:
    def __init__(self, tools: ToolCalls, owners: Owners):
        self.tools = tools  # the call of a message, the agent's tools, and the calls' records (tools.uow)
        self.owners = owners  # the business's phone (services.calls.ports)

    async def answer(self, request: TransferRequest) -> TransferAnswer:
        call = await self.tools.call_of(request.call)
        if call is None:
            log.warning("transfer request for no call of ours (provider call %s) refused",
                        request.call.provider_call_id)
            return TransferAnswer(refusal=CANNOT_TRANSFER)
        started = time.monotonic()
        stamp = request.sent_at.isoformat() if request.sent_at else new_id()
        async with self.tools.uow.transaction() as work:
            claimed = await work.calls.claim_tool_call(
                call_id=call.id, tool_call_id=f"transfer:{stamp}", name=TOOL, arguments={}, outcome="running",
                created_at=utcnow())
        with tenant.acting_as(tenant.acting_for(call.business_id, ACTOR)):
            outcome, answer = await self._decide(call)
        log.info("transfer request of call %s: %s", call.id, outcome)  # never the phone: personal data
        if claimed is not None:
            async with self.tools.uow.transaction() as work:
                await work.calls.settle_tool_call(call.id, claimed.tool_call_id, {
                    "result": recorded(answer), "outcome": outcome,
                    "duration_ms": round((time.monotonic() - started) * 1000)})
        return answer

    async def _decide(self, call: Call) -> tuple[str, TransferAnswer]:
        tools = await self.tools.tools_of(call.agent_id)
        if tools is None:
            return "failed", TransferAnswer(refusal=UNAVAILABLE)
        tool = business_transfer(tools)
        if tool is None:
            return "refused", TransferAnswer(refusal=CANNOT_TRANSFER)
        try:
            phone = await self.owners.business_phone(call.business_id)
        except ServiceError as exc:
            log.warning("the phone of business %s could not be read: %s", call.business_id, exc.code)
            return "failed", TransferAnswer(refusal=UNAVAILABLE)
        return answer_for(call, tool, phone)
