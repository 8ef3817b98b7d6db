"""The real voice-provider client against the simulator process: every resource, the retry rules,
time-outs, errors that are safe to show, and state that survives a restart."""
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.voice.port import ProviderError
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import MESSAGES_PATH, ServerConfig, WebhookAuth
from tests.integration.servers import serving

ROOT = Path(__file__).resolve().parents[2]
KEY = "sim-test-key-0123456789"


class Simulator:
    """`python -m providers.voice.vapi.simulator` as a child process, with its control plane."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.proc = folder, free_port(), None
        self.log = folder / "simulator.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "providers.voice.vapi.simulator", "--port", str(self.port),
                 "--data-dir", str(self.folder / "data"), "--api-key", KEY],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin"})
        wait_for_port(self.port, 20, self.proc, "voice simulator", self.log)

    def stop(self) -> int | None:
        stop_process(self.proc, signal.SIGTERM, 10)
        return self.proc.returncode if self.proc else None

    async def control(self, method: str, path: str, json=None):
        async with aiohttp.ClientSession() as s, s.request(method, f"{self.url}/_simulator{path}", json=json) as r:
            assert r.status < 300, await r.text()
            return await r.json()

    async def fault(self, method: str, path: str, status: int, times: int = 1, delay_seconds: float = 0) -> None:
        await self.control("POST", "/faults", {"method": method, "path": path, "status": status, "times": times,
                                               "delay_seconds": delay_seconds})

    async def attempts(self, method: str, path: str) -> list:
        """Statuses of the logged requests with exactly this method and path, oldest first."""
        return [e["status"] for e in await self.control("GET", f"/requests?path={path}")
                if e["method"] == method and e["path"] == path]


@pytest.fixture(scope="module")
def simulator(tmp_path_factory):
    sim = Simulator(tmp_path_factory.mktemp("voice-sim"))
    sim.start()
    yield sim
    sim.stop()


@pytest.fixture
async def client(simulator):
    c = VapiClient(simulator.url, KEY, timeout=2.0, backoff_base=0.01, backoff_max=0.05)
    yield c
    await c.close()
    await simulator.control("DELETE", "/faults")


ASSISTANT = {"name": "Front desk", "firstMessage": "Hello!",
             "model": {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7,
                       "messages": [{"role": "system", "content": "Answer calls."}]},
             "voice": {"provider": "11labs", "voiceId": "burt"}, "maxDurationSeconds": 600,
             "metadata": {"switchboard_agent_id": "a-1"}}


async def test_simulator_is_healthy_and_answers_in_the_providers_shape(simulator):
    assert await simulator.control("GET", "/health") == {"status": "ok"}
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {KEY}"}) as s:
        async with s.get(f"{simulator.url}/no-such-thing") as r:
            assert r.status == 404 and (await r.json())["statusCode"] == 404
        async with s.post(f"{simulator.url}/assistant", data=b"{not json") as r:
            assert r.status == 400 and (await r.json())["error"] == "Bad Request"


async def test_assistant_round_trip(client):
    made = await client.create_assistant(ASSISTANT)
    assert made["id"] and made["orgId"] and made["createdAt"].endswith("Z") and made["updatedAt"].endswith("Z")
    assert {k: made[k] for k in ASSISTANT} == ASSISTANT
    assert await client.get_assistant(made["id"]) == made

    updated = await client.update_assistant(made["id"], {"firstMessage": "Hi!", "voicemailDetection": "off"})
    assert updated["firstMessage"] == "Hi!" and updated["model"] == ASSISTANT["model"]
    assert updated["voice"] == ASSISTANT["voice"] and updated["voicemailDetection"] == "off"
    assert updated["updatedAt"] >= made["updatedAt"] and updated["createdAt"] == made["createdAt"]
    assert await client.get_assistant(made["id"]) == updated

    second = await client.create_assistant({"name": "Second"})
    listed = [a["id"] for a in await client.list_assistants(limit=10)]
    assert listed[:2] == [second["id"], made["id"]]  # newest first
    assert len(await client.list_assistants(limit=1)) == 1

    await client.delete_assistant(made["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_assistant(made["id"])
    assert err.value.status == 404 and err.value.code == "provider_error"
    assert "Couldn't Find Assistant" in err.value.message
    await client.delete_assistant(made["id"])  # already gone: fine
    await client.delete_assistant("never-existed")
    assert made["id"] not in [a["id"] for a in await client.list_assistants()]


@pytest.mark.parametrize("body, message", [
    # No property of UpdateAssistantDTO is nullable.
    ({"voice": None}, "voice must not be null"),
    # The voice and model DTOs: a known provider, and what it requires (ElevenLabsVoice: voiceId).
    ({"voice": {"provider": "11labs"}}, "voice.voiceId should not be empty"),
    ({"voice": {"provider": "elevenlabs", "voiceId": "burt"}}, "voice.provider must be one of"),
    ({"model": {"provider": "gpt", "model": "gpt-4.1"}}, "model.provider must be one of"),
    ({"model": {"provider": "custom-llm", "model": "m"}}, "model.url should not be empty"),
    ({"voicemailDetection": "on"}, 'voicemailDetection must be "off" or a voicemail detection plan'),
    ({"voicemailDetection": {"provider": "acme"}}, "voicemailDetection.provider must be one of"),
    # JsonSchema has no minimum or maximum.
    ({"analysisPlan": {"structuredDataPlan": {"schema": {"type": "object", "properties": {
        "score": {"type": "integer", "minimum": 1}}}}}},
     "analysisPlan.structuredDataPlan.schema.properties.score.property minimum should not exist"),
])
async def test_assistant_updates_are_refused_as_the_provider_refuses_them(client, body, message):
    made = await client.create_assistant(ASSISTANT)
    with pytest.raises(ProviderError) as err:
        await client.update_assistant(made["id"], body)
    assert err.value.status == 400 and message in err.value.message, err.value.message


async def test_credentials_never_show_a_secret(client):
    plan = {"type": "hmac", "secretKey": "s3cret-value", "algorithm": "sha256"}
    made = await client.create_credential({"provider": "webhook", "name": "ours", "authenticationPlan": plan})
    listed = [c for c in await client.list_credentials() if c["id"] == made["id"]]
    for shown in (made, *listed):
        assert shown["authenticationPlan"] == {"type": "hmac", "algorithm": "sha256"}
        assert "s3cret-value" not in str(shown)


async def test_a_configured_credential_is_used_without_asking_and_discovery_finds_ours_by_name(client, simulator):
    async def asked() -> tuple[int, int]:
        return len(await simulator.attempts("GET", "/credential")), len(await simulator.attempts("POST", "/credential"))

    before = await asked()
    configured = ServerConfig(client, WebhookAuth("hmac", "configured-secret", "cred-from-settings"), "https://sb")
    assert await configured.get() == {"url": "https://sb" + MESSAGES_PATH, "credentialId": "cred-from-settings"}
    assert await asked() == before
    first = await ServerConfig(client, WebhookAuth("hmac", "discovered-secret"), "https://sb").get()
    again = await ServerConfig(client, WebhookAuth("hmac", "discovered-secret"), "https://sb").get()
    assert first == again and await asked() == (before[0] + 2, before[1] + 1)  # found the second time


async def test_discovery_creates_a_credential_where_the_provider_does_not_list_them(client, simulator, caplog):
    await simulator.fault("GET", "/credential", 404)
    server = await ServerConfig(client, WebhookAuth("bearer", "unlisted-secret"), "https://sb").get()
    assert server["credentialId"] and "VOICE_WEBHOOK_CREDENTIAL_ID=" + server["credentialId"] in caplog.text


async def test_ids_are_one_path_segment(client):
    with pytest.raises(ProviderError) as err:
        await client.get_assistant("../phone-number")
    assert err.value.status == 404 and "Couldn't Find Assistant" in err.value.message
    with pytest.raises(ValueError):
        await client.get_assistant("")


async def test_refusals_carry_the_providers_message_and_never_the_key(client, simulator):
    with pytest.raises(ProviderError) as err:
        await client.create_assistant({**ASSISTANT, "silenceTimeoutSeconds": 30})
    assert err.value.status == 400
    assert err.value.message == ("voice provider refused POST /assistant (400): "
                                 "property silenceTimeoutSeconds should not exist")
    with pytest.raises(ProviderError) as err:
        await client.create_assistant({"name": "x" * 41, "model": {**ASSISTANT["model"], "temperature": 3}})
    assert err.value.status == 400 and "name must be shorter than or equal to 40 characters" in err.value.message
    assert "model.temperature must not be greater than 2" in err.value.message

    before = await simulator.attempts("GET", "/assistant/x")
    wrong = VapiClient(simulator.url, "wrong-key", backoff_base=0.01)
    try:
        with pytest.raises(ProviderError) as err:
            await wrong.get_assistant("x")
    finally:
        await wrong.close()
    assert err.value.status == 401 and err.value.message == "voice provider rejected our credentials"
    assert await simulator.attempts("GET", "/assistant/x") == [*before, 401]  # not retried


async def test_reads_are_retried_through_server_errors(client, simulator, caplog):
    made = await client.create_assistant(ASSISTANT)
    path = f"/assistant/{made['id']}"
    await simulator.fault("GET", path, 503, times=2)
    with caplog.at_level(logging.WARNING, logger="providers.voice.vapi.client"):
        assert (await client.get_assistant(made["id"]))["id"] == made["id"]
    assert await simulator.attempts("GET", path) == [503, 503, 200]
    retries = [r.getMessage() for r in caplog.records if r.name == "providers.voice.vapi.client"]
    assert len(retries) == 2 and f"GET {path} attempt 1/4" in retries[0] and "503" in retries[0]
    assert not any(KEY in m for m in retries)

    await simulator.fault("GET", path, 502, times=10)
    with pytest.raises(ProviderError) as err:
        await client.get_assistant(made["id"])
    assert err.value.status == 502 and err.value.message == "voice provider failed (GET /assistant/{id}: 502)"
    assert "Injected" not in err.value.message  # no 5xx body
    assert await simulator.attempts("GET", path) == [503, 503, 200] + [502] * 4  # max_attempts, then the error

    await simulator.control("DELETE", "/faults")
    await simulator.fault("PATCH", path, 500, times=1)
    await simulator.fault("DELETE", path, 503, times=1)
    assert (await client.update_assistant(made["id"], {"name": "Patched"}))["name"] == "Patched"
    await client.delete_assistant(made["id"])
    assert await simulator.attempts("PATCH", path) == [500, 200]
    assert await simulator.attempts("DELETE", path) == [503, 200]


async def test_a_fault_without_times_hits_every_matching_request_until_cleared(client, simulator):
    made = await client.create_assistant(ASSISTANT)
    path = f"/assistant/{made['id']}"
    before = await simulator.attempts("GET", path)
    added = await simulator.control("POST", "/faults", {"method": "GET", "path": "/assistant", "status": 503,
                                                        "times": None})
    assert added["fault"]["times"] is None
    for _ in range(3):  # each read retried to its max_attempts (4), every attempt hit
        with pytest.raises(ProviderError) as err:
            await client.get_assistant(made["id"])
        assert err.value.status == 503
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {KEY}"}) as s:
        async with s.get(f"{simulator.url}{path}") as r:  # in the provider's error shape
            assert r.status == 503 and await r.json() == {"message": "Injected fault", "error": "Service Unavailable",
                                                          "statusCode": 503}
    assert [f["times"] for f in await simulator.control("GET", "/faults")] == [None]  # still pending
    assert await simulator.control("DELETE", "/faults") == {"cleared": 1}
    assert (await client.get_assistant(made["id"]))["id"] == made["id"]
    assert await simulator.attempts("GET", path) == [*before, *[503] * 13, 200]


async def test_creates_are_retried_on_429_but_not_on_server_errors(client, simulator):
    before = await simulator.attempts("POST", "/assistant")
    await simulator.fault("POST", "/assistant", 500)
    with pytest.raises(ProviderError) as err:
        await client.create_assistant(ASSISTANT)
    assert err.value.status == 500
    assert await simulator.attempts("POST", "/assistant") == [*before, 500]  # a create that may have happened

    await simulator.fault("POST", "/assistant", 429, times=2)
    made = await client.create_assistant(ASSISTANT)
    assert made["id"]
    assert await simulator.attempts("POST", "/assistant") == [*before, 500, 429, 429, 201]

    await simulator.fault("POST", "/assistant", 429, times=10)
    with pytest.raises(ProviderError) as err:
        await client.create_assistant(ASSISTANT)
    assert err.value.status == 429
    assert await simulator.attempts("POST", "/assistant") == [*before, 500, 429, 429, 201] + [429] * 4


async def test_timeouts_become_provider_errors_after_the_allowed_attempts(simulator):
    quick = VapiClient(simulator.url, KEY, timeout=0.3, backoff_base=0.01, backoff_max=0.02)
    try:
        made = await quick.create_assistant(ASSISTANT)
        path = f"/assistant/{made['id']}"
        await simulator.fault("GET", path, 0, times=10, delay_seconds=0.8)
        with pytest.raises(ProviderError) as err:
            await quick.get_assistant(made["id"])
        assert err.value.status is None
        assert err.value.message == "voice provider unreachable (GET /assistant/{id}): timed out"
        assert len(await simulator.attempts("GET", path)) == 4

        # A create that timed out may still happen at the provider: it is not repeated.
        before = len(await simulator.attempts("POST", "/assistant"))
        await simulator.fault("POST", "/assistant", 0, times=10, delay_seconds=0.8)
        with pytest.raises(ProviderError) as err:
            await quick.create_assistant({"name": "Slow create"})
        assert err.value.status is None and "timed out" in err.value.message
        assert len(await simulator.attempts("POST", "/assistant")) == before + 1
    finally:
        await quick.close()
        await simulator.control("DELETE", "/faults")


async def test_a_held_answer_leaves_the_work_done_though_the_client_timed_out(simulator):
    quick = VapiClient(simulator.url, KEY, timeout=0.3, backoff_base=0.01, backoff_max=0.02)
    try:
        await simulator.control("POST", "/faults", {"method": "POST", "path": "/assistant", "status": 0,
                                                    "delay_seconds": 0.8, "hold": "answer"})
        with pytest.raises(ProviderError) as err:
            await quick.create_assistant({"name": "Made though unanswered"})
        assert "timed out" in err.value.message
        assert "Made though unanswered" in [a["name"] for a in await quick.list_assistants()]
        async with aiohttp.ClientSession() as s, s.post(f"{simulator.url}/_simulator/faults", json={
                "status": 0, "hold": "later"}) as r:
            assert r.status == 400 and "hold must be one of request, answer" in await r.text()
    finally:
        await quick.close()
        await simulator.control("DELETE", "/faults")


async def test_unreachable_provider_is_retried_even_for_creates(caplog):
    unreachable = VapiClient(f"http://127.0.0.1:{free_port()}", KEY, backoff_base=0.01, max_attempts=3)
    try:
        with caplog.at_level(logging.WARNING, logger="providers.voice.vapi.client"), pytest.raises(ProviderError) as err:
            await unreachable.create_assistant(ASSISTANT)
    finally:
        await unreachable.close()
    assert err.value.status is None
    assert err.value.message == "voice provider unreachable (POST /assistant): could not connect"
    attempts = [r.getMessage() for r in caplog.records if r.name == "providers.voice.vapi.client"]
    assert len(attempts) == 3 and "attempt 3/3" in attempts[-1]  # nothing was sent: safe to repeat


async def test_retry_after_is_honoured_and_capped():
    """A provider that answers 429 with Retry-After (seconds, taken from the id here), then serves."""
    hits: list[float] = []

    async def busy(request: web.Request) -> web.Response:
        hits.append(time.monotonic())
        if len(hits) % 2:
            return web.json_response({"message": "slow down"}, status=429,
                                     headers={"Retry-After": request.match_info["id"]})
        return web.json_response({"id": request.match_info["id"]})

    app = web.Application()
    app.router.add_get("/assistant/{id}", busy)
    async with serving(app) as server:
        provider = VapiClient(str(server.make_url("")), KEY, backoff_base=0.001, backoff_max=0.5)
        try:
            assert await provider.get_assistant("0.3") == {"id": "0.3"}
            assert hits[1] - hits[0] >= 0.29
            hits.clear()
            assert await provider.get_assistant("30") == {"id": "30"}
            assert hits[1] - hits[0] < 1.0  # capped at backoff_max
        finally:
            await provider.close()


async def test_phone_numbers(client):
    assistant = await client.create_assistant(ASSISTANT)
    body = {"provider": "byo-phone-number", "number": "+14152019999", "credentialId": "trunk",
            "numberE164CheckEnabled": True, "name": "Switchboard +14152019999"}
    number = await client.import_phone_number(body)
    assert number["number"] == "+14152019999" and number["status"] == "active"
    assert number["credentialId"] == "trunk" and number["provider"] == "byo-phone-number"
    assert number["id"] and number["orgId"] == assistant["orgId"] and "assistantId" not in number

    with pytest.raises(ProviderError) as err:
        await client.import_phone_number(body)
    assert err.value.status == 400 and err.value.message.endswith("Number Already Exists")
    for bad in ({**body, "number": "+1415"}, {**body, "number": "+14152019998", "credentialId": ""},
                {**body, "number": "+14152019998", "assistantId": "no-such-assistant"},
                {**body, "number": "+14152019998", "name": "n" * 41},
                {"provider": "twilio", "number": "+14152019998"}):
        with pytest.raises(ProviderError) as err:
            await client.import_phone_number(bad)
        assert err.value.status == 400, bad

    linked = await client.update_phone_number(number["id"], {"assistantId": assistant["id"]})
    assert linked["assistantId"] == assistant["id"] and linked["number"] == number["number"]
    assert (await client.get_phone_number(number["id"]))["assistantId"] == assistant["id"]
    unlinked = await client.update_phone_number(number["id"], {"assistantId": None})
    assert unlinked["assistantId"] is None
    with pytest.raises(ProviderError) as err:
        await client.update_phone_number(number["id"], {"assistantId": "no-such-assistant"})
    assert err.value.status == 400

    bought = await client.import_phone_number({"provider": "vapi", "numberDesiredAreaCode": "212",
                                               "assistantId": assistant["id"]})
    assert bought["number"].startswith("+1212") and bought["assistantId"] == assistant["id"]
    assert {number["id"], bought["id"]} <= {n["id"] for n in await client.list_phone_numbers()}

    await client.delete_phone_number(number["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_phone_number(number["id"])
    assert err.value.status == 404 and "Couldn't Find Phone Number" in err.value.message
    await client.delete_phone_number(number["id"])  # already gone: fine
    assert number["id"] not in {n["id"] for n in await client.list_phone_numbers()}
    again = await client.import_phone_number(body)  # the number is free again
    assert again["id"] != number["id"]


async def test_calls(client):
    assistant = await client.create_assistant(ASSISTANT)
    other = await client.create_assistant({"name": "Other"})
    number = await client.import_phone_number({"provider": "byo-phone-number", "number": "+14152018888",
                                               "credentialId": "trunk"})
    call = await client.create_call({"assistantId": assistant["id"], "phoneNumberId": number["id"],
                                     "customer": {"number": "+14155550123"}})
    assert call["status"] == "queued" and call["type"] == "outboundPhoneCall"
    assert call["assistantId"] == assistant["id"] and call["phoneNumberId"] == number["id"]
    assert (await client.get_call(call["id"])) == call
    second = await client.create_call({"assistantId": assistant["id"], "phoneNumberId": number["id"],
                                       "customer": {"number": "+14155550124"}})
    await client.create_call({"assistantId": other["id"], "phoneNumberId": number["id"],
                              "customer": {"number": "+14155550125"}})
    assert [c["id"] for c in await client.list_calls(assistant_id=assistant["id"])] == [second["id"], call["id"]]
    assert [c["id"] for c in await client.list_calls(assistant_id=assistant["id"], limit=1)] == [second["id"]]
    assert len(await client.list_calls()) >= 3

    for bad in ({"assistantId": assistant["id"], "phoneNumberId": number["id"], "customer": {"number": "123"}},
                {"assistantId": assistant["id"], "phoneNumberId": number["id"],  # CreateCustomerDTO.name: 40 at most
                 "customer": {"number": "+14155550123", "name": "N" * 41}},
                {"assistantId": assistant["id"], "phoneNumberId": "nope", "customer": {"number": "+14155550123"}},
                {"phoneNumberId": number["id"], "customer": {"number": "+14155550123"}}):
        with pytest.raises(ProviderError) as err:
            await client.create_call(bad)
        assert err.value.status == 400, bad
    with pytest.raises(ProviderError) as err:
        await client.get_call("no-such-call")
    assert err.value.status == 404


async def test_evals_and_runs(client):
    assistant = await client.create_assistant(ASSISTANT)
    messages = [{"role": "user", "content": "Hi"},
                {"role": "assistant", "judgePlan": {"type": "regex", "content": ".*"}}]
    scenario = await client.create_eval({"type": "chat.mockConversation", "name": "greeting.polite",
                                         "messages": messages})
    assert scenario["id"] and scenario["orgId"] and scenario["messages"] == messages
    updated = await client.update_eval(scenario["id"], {"name": "greeting.warm"})
    assert updated["name"] == "greeting.warm" and updated["messages"] == messages
    assert await client.get_eval(scenario["id"]) == updated
    for bad in ({"type": "chat.mockConversation", "messages": []}, {"messages": messages},
                {"type": "chat.mockConversation", "messages": messages, "name": ""}):
        with pytest.raises(ProviderError) as err:
            await client.create_eval(bad)
        assert err.value.status == 400, bad

    target = {"type": "assistant", "assistantId": assistant["id"]}
    run = await client.create_eval_run({"type": "eval", "evalId": scenario["id"], "target": target})
    assert run["status"] == "queued" and run["type"] == "eval" and run["target"] == target
    assert run["evalId"] == scenario["id"] and run["results"] == [] and run["startedAt"] is None
    assert await client.get_eval_run(run["id"]) == run
    transient = await client.create_eval_run({"type": "eval", "target": target, "eval": {
        "type": "chat.mockConversation", "messages": messages}})
    assert transient["status"] == "queued" and transient["eval"]["messages"] == messages
    for bad in ({"type": "eval", "evalId": "nope", "target": target},
                {"type": "eval", "evalId": scenario["id"], "target": {"type": "assistant", "assistantId": "nope"}},
                {"type": "eval", "target": target}):
        with pytest.raises(ProviderError) as err:
            await client.create_eval_run(bad)
        assert err.value.status == 400, bad

    await client.delete_eval(scenario["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_eval(scenario["id"])
    assert err.value.status == 404 and "Couldn't Find Eval" in err.value.message


async def test_state_survives_a_restart(client, simulator):
    made = await client.create_assistant(ASSISTANT)
    number = await client.import_phone_number({"provider": "byo-phone-number", "number": "+14152017777",
                                               "credentialId": "trunk", "assistantId": made["id"]})
    assert simulator.stop() == 0  # SIGTERM: a clean exit
    simulator.start()
    await client.close()
    assert await client.get_assistant(made["id"]) == made
    assert (await client.get_phone_number(number["id"]))["assistantId"] == made["id"]
    assert (await client.create_assistant({"name": "After restart"}))["orgId"] == made["orgId"]
    with pytest.raises(ProviderError) as err:  # uniqueness still holds
        await client.import_phone_number({"provider": "byo-phone-number", "number": "+14152017777",
                                          "credentialId": "trunk"})
    assert err.value.status == 400
    log = simulator.log.read_text()
    assert f"voice simulator listening on http://127.0.0.1:{simulator.port}" in log and KEY not in log
