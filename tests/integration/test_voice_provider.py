"""The real voice-provider client against the simulator process: every resource, the retry rules,
time-outs, errors that are safe to show, and state that survives a restart."""
import subprocess
import sys

import aiohttp
import pytest

from deploy.local.servers import free_port, stop_process, wait_for_port
from deploy.local.stack import ROOT
from providers.voice.adapter import ProviderError
from providers.voice.client import VapiClient

KEY = "sim-test-key"


class Simulator:
    def __init__(self, folder):
        self.folder, self.port, self.proc = folder, free_port(), None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.folder / "simulator.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "providers.voice.simulator", "--port", str(self.port), "--data-dir",
             str(self.folder / "data"), "--api-key", KEY], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin"})
        wait_for_port(self.port, 20, self.proc, "voice simulator", self.folder / "simulator.log")

    def stop(self) -> None:
        stop_process(self.proc, 15, 10)

    async def control(self, method: str, path: str, json=None):
        async with aiohttp.ClientSession() as s, s.request(method, f"{self.url}/_simulator{path}", json=json) as r:
            return await r.json()

    async def attempts(self, path: str) -> list[dict]:
        return await self.control("GET", f"/requests?path={path}")


@pytest.fixture(scope="module")
def simulator(tmp_path_factory):
    sim = Simulator(tmp_path_factory.mktemp("voice-sim"))
    sim.start()
    yield sim
    sim.stop()


@pytest.fixture
async def client(simulator):
    c = VapiClient(simulator.url, KEY, timeout=1.0, backoff_base=0.01, backoff_max=0.05)
    yield c
    await c.close()
    await simulator.control("DELETE", "/faults")


ASSISTANT = {"name": "Front desk", "firstMessage": "Hello!",
             "model": {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7,
                       "messages": [{"role": "system", "content": "Answer calls."}]}}


async def test_assistant_round_trip(client):
    made = await client.create_assistant(ASSISTANT)
    assert made["id"] and made["orgId"] and made["createdAt"].endswith("Z") and made["name"] == "Front desk"
    got = await client.get_assistant(made["id"])
    assert got == made
    updated = await client.update_assistant(made["id"], {"firstMessage": "Hi!"})
    assert updated["firstMessage"] == "Hi!" and updated["model"] == ASSISTANT["model"]
    assert updated["updatedAt"] >= made["updatedAt"]
    assert made["id"] in [a["id"] for a in await client.list_assistants(limit=10)]
    await client.delete_assistant(made["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_assistant(made["id"])
    assert err.value.status == 404 and err.value.code == "provider_error"
    await client.delete_assistant(made["id"])  # already gone: fine


async def test_refusals_carry_the_providers_message_and_never_the_key(client, simulator):
    with pytest.raises(ProviderError) as err:
        await client.create_assistant({**ASSISTANT, "server": {"url": "x"}, "silenceTimeoutSeconds": 30})
    assert err.value.status == 400 and "silenceTimeoutSeconds should not exist" in err.value.message
    wrong = VapiClient(simulator.url, "wrong-key", backoff_base=0.01)
    try:
        with pytest.raises(ProviderError) as err:
            await wrong.get_assistant("x")
        assert err.value.status == 401 and err.value.message == "voice provider rejected our credentials"
        assert "wrong-key" not in err.value.message
    finally:
        await wrong.close()


async def test_reads_are_retried_through_server_errors(client, simulator):
    made = await client.create_assistant(ASSISTANT)
    await simulator.control("POST", "/faults", {"method": "GET", "path": f"/assistant/{made['id']}", "status": 503,
                                                "times": 2})
    assert (await client.get_assistant(made["id"]))["id"] == made["id"]
    statuses = [a["status"] for a in await simulator.attempts(f"/assistant/{made['id']}") if a["method"] == "GET"]
    assert statuses[-3:] == [503, 503, 200]
    await simulator.control("POST", "/faults", {"method": "GET", "path": f"/assistant/{made['id']}", "status": 502,
                                                "times": 10})
    with pytest.raises(ProviderError) as err:
        await client.get_assistant(made["id"])
    assert err.value.status == 502 and "502" in err.value.message
    statuses = [a["status"] for a in await simulator.attempts(f"/assistant/{made['id']}") if a["method"] == "GET"]
    assert statuses[-4:] == [502] * 4  # max_attempts, then the error


async def test_creates_are_retried_on_429_but_not_on_server_errors(client, simulator):
    before = len([a for a in await simulator.attempts("/assistant") if a["method"] == "POST"])
    await simulator.control("POST", "/faults", {"method": "POST", "path": "/assistant", "status": 500, "times": 1})
    with pytest.raises(ProviderError) as err:
        await client.create_assistant(ASSISTANT)
    assert err.value.status == 500
    posts = [a for a in await simulator.attempts("/assistant") if a["method"] == "POST"]
    assert len(posts) == before + 1  # a create that may have happened is not repeated
    await simulator.control("POST", "/faults", {"method": "POST", "path": "/assistant", "status": 429, "times": 2})
    made = await client.create_assistant(ASSISTANT)
    posts = [a["status"] for a in await simulator.attempts("/assistant") if a["method"] == "POST"]
    assert posts[-3:] == [429, 429, 201] and made["id"]


async def test_timeouts_become_provider_errors(client, simulator):
    made = await client.create_assistant(ASSISTANT)
    await simulator.control("POST", "/faults", {"method": "GET", "path": "/assistant", "status": 0, "times": 10,
                                                "delay_seconds": 1.5})
    with pytest.raises(ProviderError) as err:
        await client.get_assistant(made["id"])
    assert err.value.status is None and "timed out" in err.value.message
    await simulator.control("DELETE", "/faults")
    unreachable = VapiClient(f"http://127.0.0.1:{free_port()}", KEY, backoff_base=0.01, max_attempts=2)
    try:
        with pytest.raises(ProviderError) as err:
            await unreachable.create_assistant(ASSISTANT)
        assert err.value.status is None and "unreachable" in err.value.message
    finally:
        await unreachable.close()


async def test_phone_numbers_calls_and_evals(client):
    assistant = await client.create_assistant(ASSISTANT)
    number = await client.import_phone_number({"provider": "byo-phone-number", "number": "+14152019999",
                                               "credentialId": "trunk", "assistantId": assistant["id"]})
    assert number["number"] == "+14152019999" and number["status"] == "active"
    with pytest.raises(ProviderError) as err:
        await client.import_phone_number({"provider": "byo-phone-number", "number": "+14152019999",
                                          "credentialId": "trunk"})
    assert "Number Already Exists" in err.value.message
    with pytest.raises(ProviderError):
        await client.import_phone_number({"provider": "byo-phone-number", "number": "+1415", "credentialId": "t"})
    assert (await client.update_phone_number(number["id"], {"assistantId": None}))["assistantId"] is None
    assert number["id"] in [n["id"] for n in await client.list_phone_numbers()]
    assert (await client.get_phone_number(number["id"]))["number"] == "+14152019999"

    call = await client.create_call({"assistantId": assistant["id"], "phoneNumberId": number["id"],
                                     "customer": {"number": "+14155550123"}})
    assert call["status"] == "queued" and call["type"] == "outboundPhoneCall"
    assert (await client.get_call(call["id"]))["customer"] == {"number": "+14155550123"}
    assert [c["id"] for c in await client.list_calls(assistant_id=assistant["id"])] == [call["id"]]
    with pytest.raises(ProviderError):
        await client.create_call({"assistantId": assistant["id"], "phoneNumberId": number["id"],
                                  "customer": {"number": "123"}})

    scenario = await client.create_eval({"type": "chat.mockConversation", "name": "greeting.polite", "messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "judgePlan": {"type": "regex", "content": ".*"}}]})
    assert (await client.update_eval(scenario["id"], {"name": "greeting.warm"}))["name"] == "greeting.warm"
    assert (await client.get_eval(scenario["id"]))["messages"][0] == {"role": "user", "content": "Hi"}
    run = await client.create_eval_run({"type": "eval", "evalId": scenario["id"],
                                        "target": {"type": "assistant", "assistantId": assistant["id"]}})
    assert run["status"] == "queued" and (await client.get_eval_run(run["id"]))["evalId"] == scenario["id"]
    await client.delete_eval(scenario["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_eval(scenario["id"])
    assert err.value.status == 404
    await client.delete_phone_number(number["id"])
    await client.delete_phone_number(number["id"])


async def test_state_survives_a_restart(client, simulator):
    made = await client.create_assistant(ASSISTANT)
    simulator.stop()
    simulator.start()
    await client.close()
    assert (await client.get_assistant(made["id"]))["name"] == "Front desk"
