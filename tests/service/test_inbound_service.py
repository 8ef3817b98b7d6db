"""Answering the provider's assistant-request as a use case, on the real database and the running services."""
import uuid

import pytest

from core import rpc
from providers.voice.client import VapiClient
from providers.voice.server_messages import ServerConfig, WebhookAuth
from services.calls import store
from services.calls.inbound_service import NOT_IN_SERVICE, Inbound
from tests.e2e.test_calls import calling_agent  # noqa: F401 - a fixture
from tests.service.conftest import no_events


@pytest.fixture
async def inbound(cfg, engine):
    voice = VapiClient(cfg.voice_api_url, cfg.voice_api_key.reveal(), max_attempts=1)
    clients = {name: rpc.connect(name, cfg, forward_tenant=True) for name in ("agents", "sdr", "accounts")}
    yield Inbound(engine, ServerConfig(voice, WebhookAuth.of(cfg), cfg.public_base_url),
                  clients["agents"][0], clients["sdr"][0], clients["accounts"][0], no_events)
    for _, channel in clients.values():
        await channel.close()
    await voice.close()


def request(number: str, caller: str, provider_call_id: str) -> dict:
    return {"type": "assistant-request", "call": {"id": provider_call_id, "customer": {"number": caller},
                                                  "phoneNumber": {"number": number}}}


async def test_a_repeated_request_answers_alike_and_records_the_call_once(inbound, engine, calling_agent):  # noqa: F811
    provider_call_id = f"pc-{uuid.uuid4()}"
    first = await inbound.assistant_request(request(calling_agent["phone_number"], "+14155550199", provider_call_id))
    again = await inbound.assistant_request(request(calling_agent["phone_number"], "+14155550199", provider_call_id))
    assert first == again and first["assistantId"] == calling_agent["provider_assistant_id"]
    assert first["assistantOverrides"]["server"]["url"].endswith("/api/v1/providers/voice/messages")
    async with engine.connect() as conn:
        rows = (await conn.execute(store.calls.select().where(store.calls.c.provider_call_id == provider_call_id))).all()
        events = (await conn.execute(store.outbox.select().where(
            store.outbox.c.type == "call.received", store.outbox.c.data["conversation_id"].astext == provider_call_id)
            )).all()
    assert len(rows) == 1 and rows[0].direction == "inbound" and rows[0].status == "ringing" and len(events) == 1


async def test_numbers_nobody_answers_are_refused(inbound):
    assert await inbound.assistant_request(request("+14155550100", "+14155550199", "pc-x")) == {"error": NOT_IN_SERVICE}
    assert await inbound.assistant_request(request("not a number", "+14155550199", "pc-y")) == {"error": NOT_IN_SERVICE}
