"""Answering the provider's assistant-request as a use case, on the real database, with the other services behind
the calls service's ports played in memory (services.calls.ports)."""
import uuid
from datetime import UTC, datetime

import pytest

from providers.voice.port import AnswerRequest
from services.calls import schema
from services.calls.inbound_service import NOT_IN_SERVICE, Inbound
from services.calls.ports import Lead, NumberRoute
from services.calls.repository import calls_units
from tests.service.conftest import vapi_port
from tests.service.fakes import CallsNeighbours, accounts_saying

NUMBER, CALLER, IDLE_NUMBER = "+14155550170", "+14155550199", "+14155550171"


@pytest.fixture
def business_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def others(business_id) -> CallsNeighbours:
    known = Lead(str(uuid.uuid4()), business_id, "Dana Reyes", "Dana", 40, "contacted", None, 2, "inbound_call",
                 datetime(2026, 11, 1, tzinfo=UTC))
    return CallsNeighbours(
        routes={NUMBER: NumberRoute(business_id, str(uuid.uuid4()), "Front desk", "assistant-1"),
                IDLE_NUMBER: NumberRoute(business_id, None, None, None)},
        leads={(business_id, CALLER): known}, names={business_id: "Acme Plumbing"})


@pytest.fixture
async def answer(cfg, database, others, business_id):
    """The provider's answer to an assistant-request for a call from `caller` to `number`: read by the voice port,
    answered by the use case, worded by the port."""
    voice = vapi_port(cfg)
    inbound = Inbound(calls_units(database), others.ports, standings=accounts_saying({business_id: "trialing"}))

    async def answered(number: str, caller: str, provider_call_id: str) -> dict:
        message = voice.read_message({"message": {"type": "assistant-request", "call": {
            "id": provider_call_id, "customer": {"number": caller}, "phoneNumber": {"number": number}}}})
        assert isinstance(message, AnswerRequest)
        return await voice.answer(await inbound.assistant_request(message.call))

    yield answered
    await voice.close()


async def test_a_repeated_request_answers_alike_and_records_the_call_once(answer, engine, others, business_id):
    provider_call_id = f"pc-{uuid.uuid4()}"
    first = await answer(NUMBER, CALLER, provider_call_id)
    again = await answer(NUMBER, CALLER, provider_call_id)
    assert first == again and first["assistantId"] == "assistant-1"
    assert first["assistantOverrides"]["server"]["url"].endswith("/api/v1/providers/voice/messages")
    variables = first["assistantOverrides"]["variableValues"]
    assert (variables["business_name"], variables["name"], variables["lead_status"]) == ("Acme Plumbing", "Dana",
                                                                                        "contacted")
    async with engine.connect() as conn:
        rows = (await conn.execute(schema.calls.select().where(schema.calls.c.provider_call_id == provider_call_id))).all()
        events = (await conn.execute(schema.outbox.select().where(
            schema.outbox.c.type == "call.received", schema.outbox.c.data["conversation_id"].astext == provider_call_id)
            )).all()
    assert len(rows) == 1 and rows[0].direction == "inbound" and rows[0].status == "ringing" and len(events) == 1
    assert str(rows[0].lead_id) == others.leads[(business_id, CALLER)].id


async def test_numbers_nobody_answers_are_refused(answer):
    for number in ("+14155550100", IDLE_NUMBER, "not a number"):
        assert await answer(number, CALLER, f"pc-{uuid.uuid4()}") == {
            "error": NOT_IN_SERVICE}
