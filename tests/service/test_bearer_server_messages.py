"""VOICE_WEBHOOK_AUTH=bearer against the provider: the credential registered at the provider carries the bearer
plan, and the gateway's check accepts a message authenticated with it (as the provider sends it) and refuses one
signed the HMAC way."""
import json
import time
import uuid

import pytest

from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import ServerConfig, WebhookAuth
from providers.voice.vapi.simulator.playback import sign


@pytest.fixture
async def voice(cfg):
    client = VapiClient(cfg.voice_api_url, cfg.voice_api_key.reveal(), max_attempts=1)
    yield client
    await client.close()


async def test_the_bearer_credential_is_registered_and_only_it_is_accepted(voice, cfg):
    auth = WebhookAuth("bearer", f"token-{uuid.uuid4()}")
    server = await ServerConfig(voice, auth, cfg.public_base_url).get()
    [credential] = [c for c in await voice.list_credentials() if c["id"] == server["credentialId"]]
    assert credential["authenticationPlan"]["type"] == "bearer" and credential["name"] == auth.credential_name()
    assert auth.secret not in json.dumps(credential)  # the secret is never shown back
    plan = auth.plan()

    body = json.dumps({"message": {"type": "status-update", "status": "ringing", "timestamp": int(time.time() * 1000),
                                   "call": {"id": f"pc-{uuid.uuid4()}"}}}).encode()
    assert auth.refusal(body, sign(plan, body, time.time()), time.time()) is None
    assert "bearer token" in auth.refusal(body, sign(WebhookAuth("hmac", auth.secret).plan(), body, time.time()),
                                          time.time())
