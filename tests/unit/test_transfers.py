"""transfer_call to the business's own phone, in the fast tier: the Vapi adapter reading a
transfer-destination-request and wording its answer, and the calls service's use case
(services/calls/transfer_service.py) on the in-memory database with the agents and accounts services behind in-memory
ports."""
import json
from datetime import UTC, datetime

import pytest

from core import tenant
from core.errors import ServiceError, not_found
from core.ids import new_id
from providers.voice.port import TransferAnswer, TransferRequest
from providers.voice.vapi import assistants
from providers.voice.vapi import calls as vapi_calls
from providers.voice.vapi.simulator import validation
from services.calls.lifecycle_service import Lifecycle
from services.calls.ports import AgentTool, BusinessPhone
from services.calls.repository import calls_units
from services.calls.tools_service import ToolCalls
from services.calls.transfer_service import CANNOT_TRANSFER, HOLD, NO_PHONE, UNAVAILABLE, Transfers, introduction
from tests.memory.calls import MemoryCalls
from tests.service.fakes import CallsNeighbours, idle_builtins
from tests.storage_contracts import call_values
from tests.unit.test_tool_calls import ToolAgents

FORWARD_TO = "+14155550177"
SENT = 1_790_000_000_000  # the message's timestamp, milliseconds


def transfer_request(provider_call_id: str, our_id: str | None = None, sent: int | None = SENT) -> TransferRequest:
    """A transfer-destination-request as Vapi sends it (ServerMessageTransferDestinationRequest), read by the
    adapter."""
    metadata = {"metadata": {vapi_calls.CALL_ID_KEY: our_id}} if our_id else {}
    message = {"type": "transfer-destination-request", "call": {"id": provider_call_id, "assistantOverrides": metadata},
               "artifact": {"messages": []}, **({"timestamp": sent} if sent is not None else {})}
    read = vapi_calls.read_message({"message": message})
    assert isinstance(read, TransferRequest)
    return read


# -- the adapter ----------------------------------------------------------------------------------


def test_a_transfer_request_is_read_and_answered_with_a_number_destination_or_an_error():
    read = transfer_request("pc-1", "our-1")
    assert (read.call.provider_call_id, read.call.our_call_id) == ("pc-1", "our-1")
    assert read.sent_at == datetime.fromtimestamp(SENT / 1000, UTC)
    fallback = {"message": assistants.TRANSFER_FAILED, "endCallEnabled": False}
    warm = vapi_calls.transfer_answer(TransferAnswer(FORWARD_TO, True, HOLD, "A caller for you."))
    assert warm == {"destination": {"type": "number", "number": FORWARD_TO, "message": HOLD, "transferPlan": {
        "mode": "warm-transfer-experimental", "message": "A caller for you.", "fallbackPlan": fallback}}}
    blind = vapi_calls.transfer_answer(TransferAnswer(FORWARD_TO, False, HOLD, "not said on a blind transfer"))
    assert blind["destination"]["transferPlan"] == {"mode": "blind-transfer", "fallbackPlan": fallback}
    assert vapi_calls.transfer_answer(TransferAnswer(refusal=CANNOT_TRANSFER)) == {"error": CANNOT_TRANSFER}
    # The destination is one the simulator (Vapi's TransferDestinationNumber) takes.
    for answer in (warm, blind):
        tool = {"type": "transferCall", "destinations": [answer["destination"]]}
        assert validation.assistant({"model": {"provider": "openai", "model": "gpt-4.1", "tools": [tool]}}) == []


# -- the calls service's use case -------------------------------------------------------------------


class Phones:
    """The calls service's port on accounts for a business's phone: `phone` (None: it gave none) for `business_id`
    alone (not found outside the caller's businesses), or `error` raised."""

    def __init__(self, business_id: str, phone: str | None, error: ServiceError | None = None):
        self.business_id, self.phone, self.error = business_id, phone, error
        self.asked: list[str] = []

    async def business_phone(self, business_id):
        self.asked.append(business_id)
        if self.error is not None:
            raise self.error
        if business_id != self.business_id or not tenant.current().can_access(business_id):
            raise not_found("workspace")
        return BusinessPhone("Bay Dental", self.phone)


@pytest.fixture
async def call(database, business_id):
    async with calls_units(database, MemoryCalls).transaction() as work:
        return await work.calls.add(**call_values(business_id, provider_call_id=f"pc-{new_id()}",
                                                  direction="inbound", from_number="+14155550199"))


@pytest.fixture
def agents(business_id, call):
    return ToolAgents(business_id, call.agent_id, (AgentTool("transfer_call", "transfer_call", {
        "type": "transfer_call", "destinations": [], "mode": "warm"}),))


@pytest.fixture
def phones(business_id):
    return Phones(business_id, FORWARD_TO)


@pytest.fixture
def transfers(database, agents, phones):
    return Transfers(ToolCalls(calls_units(database, MemoryCalls), agents, texts=CallsNeighbours(), **idle_builtins()), phones)


async def recorded(database, call) -> list:
    async with calls_units(database, MemoryCalls).read() as work:
        return (await work.calls.with_tool_calls([call.business_id], call.id))[1]


async def test_an_inbound_call_is_put_through_to_the_business_phone_warm_and_recorded_once(transfers, database, call):
    request = transfer_request(call.provider_call_id, call.id)
    answer = await transfers.answer(request)
    assert answer == TransferAnswer(FORWARD_TO, True, HOLD, introduction("Bay Dental", "+14155550199"))
    assert "a caller, +14155550199," in answer.introduction
    assert await transfers.answer(request) == answer  # the provider's retry: answered again, recorded once
    [row] = await recorded(database, call)
    assert (row.name, row.arguments, row.outcome, row.result) == (
        "transfer_call", {}, "ok", f"Put through to {FORWARD_TO} (warm).")
    assert row.duration_ms is not None
    await transfers.answer(transfer_request(call.provider_call_id, call.id, sent=SENT + 60_000))  # a second transfer
    assert len(await recorded(database, call)) == 2


async def test_a_blind_transfer_tool_puts_the_call_through_without_an_introduction(transfers, agents, call):
    agents.tools_now = (AgentTool("transfer_call", "transfer_call", {"destinations": [], "mode": "blind"}),)
    assert await transfers.answer(transfer_request(call.provider_call_id)) == TransferAnswer(FORWARD_TO, False, HOLD)


async def test_without_a_phone_the_tool_or_the_phones_answer_the_assistant_is_given_a_refusal(
        transfers, agents, phones, database, call):
    phones.phone = None
    assert await transfers.answer(transfer_request(call.provider_call_id, sent=1)) == TransferAnswer(refusal=NO_PHONE)
    phones.phone, phones.error = FORWARD_TO, ServiceError("unavailable", "accounts is away")
    assert await transfers.answer(transfer_request(call.provider_call_id, sent=2)) == TransferAnswer(
        refusal=UNAVAILABLE)
    phones.error = None
    agents.tools_now = (AgentTool("end_call", "end_call"),)  # transfer_call removed during the call
    assert await transfers.answer(transfer_request(call.provider_call_id, sent=3)) == TransferAnswer(
        refusal=CANNOT_TRANSFER)
    agents.tools_now = (AgentTool("transfer_call", "transfer_call", {"destinations": [
        {"name": "Sales", "phone_number": "+14155550123", "mode": "warm"}]}),)  # the provider puts those through
    assert await transfers.answer(transfer_request(call.provider_call_id, sent=4)) == TransferAnswer(
        refusal=CANNOT_TRANSFER)
    outcomes = [(r.outcome, r.result) for r in await recorded(database, call)]
    assert outcomes == [("refused", NO_PHONE), ("failed", UNAVAILABLE), ("refused", CANNOT_TRANSFER),
                        ("refused", CANNOT_TRANSFER)]


async def test_a_request_about_no_call_of_ours_or_another_businesss_call_is_refused_and_recorded_nowhere(
        transfers, phones, database, call):
    async with calls_units(database, MemoryCalls).transaction() as work:
        other = await work.calls.add(**call_values(new_id(), provider_call_id=f"pc-{new_id()}"))
    for request in (transfer_request(f"pc-{new_id()}"),
                    transfer_request(other.provider_call_id, call.id)):  # our id of one call, the provider's of another
        assert await transfers.answer(request) == TransferAnswer(refusal=CANNOT_TRANSFER)
    # The provider's call of another business: its agent is not this business's, so no tool and no phone is read.
    assert await transfers.answer(transfer_request(other.provider_call_id)) == TransferAnswer(refusal=CANNOT_TRANSFER)
    assert phones.asked == [] and await recorded(database, call) == []


async def test_the_lifecycle_answers_a_forwarded_transfer_request_in_the_providers_shape(transfers, database,
                                                                                       voice_port, call):
    body = json.dumps({"message": {"type": "transfer-destination-request", "timestamp": SENT,
                                   "call": {"id": call.provider_call_id}}}).encode()
    handled = await Lifecycle(calls_units(database, MemoryCalls), voice_port, transfers=transfers).handle(body)
    assert handled["destination"]["number"] == FORWARD_TO
    assert handled["destination"]["transferPlan"]["mode"] == assistants.WARM_TRANSFER
