"""VOICE_WEBHOOK_AUTH=bearer end to end at the use-case level: the credential registered at the provider carries
the bearer plan, and the lifecycle accepts a message authenticated with it (as the provider sends it) and
refuses one signed the HMAC way."""
import json
import time
import uuid

import pytest

from core.errors import ServiceError
from providers.voice.client import VapiClient
from providers.voice.server_messages import ServerConfig, WebhookAuth
from providers.voice.simulator.playback import sign
from services.calls.lifecycle_service import Lifecycle


@pytest.fixture
async def voice(cfg):
    client = VapiClient(cfg.voice_api_url, cfg.voice_api_key.reveal(), max_attempts=1)
    yield client
    await client.close()


async def test_the_bearer_credential_is_registered_and_only_it_is_accepted(voice, database, cfg):
    auth = WebhookAuth("bearer", f"token-{uuid.uuid4()}")
    server = await ServerConfig(voice, auth, cfg.public_base_url).get()
    [credential] = [c for c in await voice.list_credentials() if c["id"] == server["credentialId"]]
    plan = credential["authenticationPlan"]
    assert plan["type"] == "bearer" and credential["name"] == auth.credential_name()

    lifecycle = Lifecycle(database, auth)
    body = json.dumps({"message": {"type": "status-update", "status": "ringing", "timestamp": int(time.time() * 1000),
                                   "call": {"id": f"pc-{uuid.uuid4()}"}}}).encode()
    assert await lifecycle.handle(body, sign(plan, body, time.time())) == {}
    with pytest.raises(ServiceError) as refused:
        await lifecycle.handle(body, sign(WebhookAuth("hmac", auth.secret).plan(), body, time.time()))
    assert refused.value.code == "unauthorized"
