"""The voice simulator's calls as a server sees them, in the provider's shapes: the default server messages
(speech-update, conversation-update, user-interrupted, hang) or the assistant's own `serverMessages`, timed
`artifact.messages`, the recording under `artifact.recording` (the deprecated `recordingUrl` only when asked),
voicemail noticed only with detection on, the HMAC timestamp in seconds or milliseconds (each checked by our
receiver's own verification), `endedMessage` on a refused inbound call, and a scripted caller's lines (the control
plane's `caller`) answered by the stand-in assistant, its function tools asked with signed tool-calls messages."""
import asyncio
import json
import time
from itertools import pairwise

import aiohttp
import pytest
from aiohttp import web

from deploy.local.servers import free_port
from providers.voice.port import Forwarding
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.numbers import ringing_hooks
from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.simulator.app import build_app
from providers.voice.vapi.simulator.tool_calls import NO_RESULT
from tests.integration.servers import serving
from tests.waiting import wait_until

KEY = "sim-playback-key-0123456789"
AUTH = WebhookAuth("hmac", "playback-secret")


class Server:
    """A server URL of ours: keeps every message (and the path it came to: `/messages`, or a tool's own `/tool`),
    answers assistant-requests with `answer` and tool-calls with a result per call ("<name> done"), and refuses what
    our gateway's verification refuses."""

    def __init__(self):
        self.messages: list[dict] = []
        self.paths: list[str] = []
        self.stamps: list[str] = []
        self.answer: dict = {}

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        why = AUTH.refusal(body, dict(request.headers), time.time())
        if why is not None:
            return web.json_response({"error": why}, status=401)
        self.stamps.append(request.headers["x-timestamp"])
        message = json.loads(body)["message"]
        self.messages.append(message)
        self.paths.append(request.path)
        if message["type"] == "tool-calls":
            if request.path == "/slow":
                await asyncio.sleep(1.5)
            return web.json_response({"results": [{"toolCallId": c["id"], "result": f"{c['function']['name']} done"}
                                                  for c in message["toolCallList"]]})
        return web.json_response(self.answer if message["type"] == "assistant-request" else {})

    def of(self, call_id: str) -> list[dict]:
        return [m for m in self.messages if m["call"]["id"] == call_id]


@pytest.fixture
async def server():
    ours = Server()
    app = web.Application()
    app.router.add_post("/messages", ours.handle)
    app.router.add_post("/tool", ours.handle)
    app.router.add_post("/slow", ours.handle)  # a tool's server that answers tool-calls after 1.5 s
    async with serving(app) as served:
        ours.url = str(served.make_url("/messages"))
        yield ours


@pytest.fixture
async def sim(request, tmp_path, server):
    """The simulator, built with the test's `indirect` parameters (build_app's keywords), if any."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with serving(build_app(tmp_path / "voice-sim", KEY, 0.01, url, **getattr(request, "param", {})), port):
        client = VapiClient(url, KEY, max_attempts=1)
        credential = await client.create_credential({"provider": "webhook", "name": "ours",
                                                     "authenticationPlan": AUTH.plan()})
        sim = Sim(url, client, {"url": server.url, "credentialId": credential["id"]}, server)
        yield sim
        await client.close()


class Sim:
    def __init__(self, url: str, client: VapiClient, server_config: dict, server: Server):
        self.url, self.client, self.server_config, self.server = url, client, server_config, server

    async def playback(self, **script) -> None:
        async with aiohttp.ClientSession() as s, s.post(f"{self.url}/_simulator/playback", json=script) as r:
            assert r.status == 201, await r.text()

    async def call(self, to: str, **assistant) -> list[dict]:
        """The messages of a call to `to` by an assistant with these settings, once its report came."""
        made = await self.client.create_assistant({"name": "Closer", "firstMessage": "Hi there!",
                                                   "server": self.server_config, **assistant})
        number = await self.client.import_phone_number({"provider": "vapi", "assistantId": made["id"]})
        call = await self.client.create_call({"assistantId": made["id"], "phoneNumberId": number["id"],
                                              "customer": {"number": to}})
        return await wait_until(lambda: self._messages(call["id"]), f"the report of call {call['id']}",
                                lambda found: any(m["type"] == "end-of-call-report" for m in found))

    async def ring_first(self, forward_pickup: bool) -> list[dict]:
        """The messages of an inbound call to a number with our ring-first hooks, once it has ended."""
        number = await self.client.import_phone_number({"provider": "vapi", "server": self.server_config,
                                                        "hooks": ringing_hooks(Forwarding("+14155550140", 5))})
        async with aiohttp.ClientSession() as s, s.post(f"{self.url}/_simulator/inbound", json={
                "to": number["number"], "from": "+14155550141", "forward_pickup": forward_pickup}) as r:
            call = await r.json()
        return await wait_until(lambda: self._messages(call["id"]), f"the end of call {call['id']}",
                                lambda found: any(m["type"] == "end-of-call-report" for m in found))

    async def _messages(self, call_id: str) -> list[dict]:
        return self.server.of(call_id)


def report_of(messages: list[dict]) -> dict:
    [report] = [m for m in messages if m["type"] == "end-of-call-report"]
    return report


async def test_an_answered_call_sends_the_providers_default_messages_in_order(sim):
    messages = await sim.call("+14155550123")
    kinds = [m["type"] for m in messages]
    assert kinds[:2] == ["status-update", "status-update"] and kinds[-2:] == ["status-update", "end-of-call-report"]
    assert {"speech-update", "conversation-update", "user-interrupted", "hang"} <= set(kinds)
    speech = [(m["role"], m["status"], m["turn"]) for m in messages if m["type"] == "speech-update"]
    assert speech[:4] == [("assistant", "started", 0), ("assistant", "stopped", 0), ("user", "started", 1),
                          ("user", "stopped", 1)]
    updates = [m for m in messages if m["type"] == "conversation-update"]
    assert [len(u["messages"]) for u in updates] == [1, 2, 3, 4]
    assert updates[-1]["messagesOpenAIFormatted"][0] == {"role": "assistant", "content": "Hi there!"}
    assert all(isinstance(m["timestamp"], int) for m in messages)


async def test_the_reports_messages_are_timed_and_its_recording_is_the_current_shape(sim):
    report = report_of(await sim.call("+14155550124"))
    artifact = report["artifact"]
    said = artifact["messages"]
    assert [m["role"] for m in said] == ["bot", "user", "bot", "user"]
    for before, after in pairwise(said):
        assert before["time"] < before["endTime"] <= after["time"]
        assert before["secondsFromStart"] < after["secondsFromStart"]
    assert said[0]["time"] > 1e12  # milliseconds since the epoch
    assert artifact["transcript"].startswith("AI: Hi there!\nUser: ")
    assert artifact["recording"]["mono"]["combinedUrl"].endswith(".wav") and "recordingUrl" not in artifact
    async with aiohttp.ClientSession() as s, s.get(artifact["recording"]["mono"]["combinedUrl"]) as r:
        assert r.status == 200 and (await r.read())[:4] == b"RIFF"


async def test_the_deprecated_recording_url_comes_only_when_asked(sim):
    await sim.playback(legacy_recording=True)
    artifact = report_of(await sim.call("+14155550125"))["artifact"]
    assert artifact["recordingUrl"].endswith(".wav") and "recording" not in artifact


async def test_the_assistants_server_messages_choose_what_is_sent(sim):
    messages = await sim.call("+14155550126", serverMessages=["status-update", "end-of-call-report"])
    assert {m["type"] for m in messages} == {"status-update", "end-of-call-report"}


async def test_a_voicemail_box_is_noticed_only_with_voicemail_detection_on(sim):
    unnoticed = report_of(await sim.call("+14155550003"))  # the provider's default: detection off
    assert unnoticed["endedReason"] == "customer-ended-call"
    assert [m["role"] for m in unnoticed["artifact"]["messages"]] == ["bot", "user"]
    detected = report_of(await sim.call("+14155550003", voicemailDetection={"provider": "vapi"}))
    assert detected["endedReason"] == "voicemail"
    by_tool = report_of(await sim.call("+14155550003", model={"provider": "openai", "model": "gpt-4.1",
                                                              "tools": [{"type": "voicemail"}]}))
    assert by_tool["endedReason"] == "voicemail"


@pytest.mark.parametrize("milliseconds, digits", [(False, 10), (True, 13)])
async def test_the_hmac_timestamp_is_in_seconds_or_asked_milliseconds(sim, server, milliseconds, digits):
    await sim.playback(timestamp_ms=milliseconds)
    messages = await sim.call("+14155550127")
    assert len(server.stamps) >= len(messages) and {len(s) for s in server.stamps} == {digits}


async def test_an_inbound_call_the_server_refuses_ends_with_its_message(sim, server):
    number = await sim.client.import_phone_number({"provider": "vapi", "server": sim.server_config})
    server.answer = {"error": "This number is not in service."}
    async with aiohttp.ClientSession() as s, s.post(f"{sim.url}/_simulator/inbound", json={
            "to": number["number"], "from": "+14155550128"}) as r:
        call = await r.json()
    assert (call["status"], call["endedReason"]) == ("ended", "assistant-request-returned-error")
    assert call["endedMessage"] == "This number is not in service." and "error" not in call


async def test_a_ring_first_hook_ends_the_call_unless_the_organization_enabled_the_fallback(sim, server):
    """Vapi applies a blind transfer's fallbackPlan only where the organization enabled transfer-outcome detection:
    by default the hook's transfer ends the call whether the forward-to phone picks up or not."""
    for pickup in (True, False):
        messages = await sim.ring_first(forward_pickup=pickup)
        assert report_of(messages)["endedReason"] == "call.ringing.hook-executed-transfer"
        assert "assistant-request" not in [m["type"] for m in messages]


@pytest.mark.parametrize("sim", [{"transfer_fallback": True}], indirect=True)
async def test_with_the_organizations_fallback_an_unanswered_forward_comes_back_to_the_agent(sim, server):
    made = await sim.client.create_assistant({"name": "Front desk", "firstMessage": "Hi!", "server": sim.server_config})
    server.answer = {"assistantId": made["id"]}
    messages = await sim.ring_first(forward_pickup=False)
    kinds = [m["type"] for m in messages]
    assert "assistant-request" in kinds and report_of(messages)["endedReason"] != "call.ringing.hook-executed-transfer"
    picked_up = await sim.ring_first(forward_pickup=True)
    assert report_of(picked_up)["endedReason"] == "call.ringing.hook-executed-transfer"


# -- a caller's lines (the control plane's `caller`), answered by the stand-in assistant ---------------------------

RULES = "\n".join([
    'When the caller says "order", call lookup_order with {"order": "A-17"}.',
    'When the caller says "hours", answer "We open at nine."',
    'When the caller says "bye", call endCall and answer "Goodbye!"'])
LOOKUP = {"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object", "properties": {
    "order": {"type": "string"}}}}}


def model(*tools: dict) -> dict:
    return {"provider": "openai", "model": "gpt-4.1", "messages": [{"role": "system", "content": RULES}],
            "tools": list(tools)}


async def test_a_callers_lines_are_answered_by_the_rules_and_a_function_tool_is_asked_at_its_server(sim, server):
    await sim.playback(caller=["Where is my order?", "What are your hours?", "Thanks!"])
    messages = await sim.call("+14155550130", model=model(LOOKUP))
    kinds = [m["type"] for m in messages]
    [asked] = [m for m in messages if m["type"] == "tool-calls"]  # signed: the server verified it
    [call] = asked["toolCallList"]
    assert call["function"] == {"name": "lookup_order", "arguments": json.dumps({"order": "A-17"})}
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert asked["toolWithToolCallList"] == [{**LOOKUP, "toolCall": call}]
    assert asked["call"]["id"] == messages[0]["call"]["id"]
    assert [m["role"] for m in asked["artifact"]["messages"]] == ["bot", "user", "tool_calls"]
    # Sent in the call's order: after the caller's line and the model's call, before the answer is said.
    said_before = [m for m in messages[:kinds.index("tool-calls")] if m["type"] == "conversation-update"]
    assert [m["role"] for m in said_before[-1]["messages"]] == ["bot", "user", "tool_calls"]
    artifact = report_of(messages)["artifact"]
    assert [m["role"] for m in artifact["messages"]] == ["bot", "user", "tool_calls", "tool_call_result", "bot",
                                                        "user", "bot", "user", "bot"]
    calls, result = artifact["messages"][2:4]
    assert calls["toolCalls"] == [call] and calls["message"] == ""
    assert (result["toolCallId"], result["name"], result["result"]) == (call["id"], "lookup_order", "lookup_order done")
    assert artifact["transcript"].split("\n") == [
        "AI: Hi there!", "User: Where is my order?", "AI: lookup_order done", "User: What are your hours?",
        "AI: We open at nine.", "User: Thanks!", "AI: I'm sorry, I can't help with that."]
    openai = [m for m in messages if m["type"] == "conversation-update"][-1]["messagesOpenAIFormatted"]
    assert openai[2] == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert openai[3] == {"role": "tool", "content": "lookup_order done", "tool_call_id": call["id"]}
    assert report_of(messages)["endedReason"] == "customer-ended-call"


async def test_a_tools_own_server_comes_before_the_assistants(sim, server):
    own = {**LOOKUP, "server": {"url": server.url.replace("/messages", "/tool"),
                                "credentialId": sim.server_config["credentialId"]}}
    await sim.playback(caller=["my order"])
    messages = await sim.call("+14155550131", model=model(own))
    assert [p for p, m in zip(server.paths, server.messages, strict=True)
            if m["type"] == "tool-calls" and m["call"]["id"] == messages[0]["call"]["id"]] == ["/tool"]


async def test_a_duplicated_tool_calls_message_carries_the_same_call_and_a_late_answer_is_no_result(sim, server):
    await sim.playback(caller=["my order"], duplicate=True)
    messages = await sim.call("+14155550135", model=model(LOOKUP))
    first, again = [m for m in messages if m["type"] == "tool-calls"]
    assert first["toolCallList"] == again["toolCallList"]  # the provider's retry: one tool call, delivered twice
    slow = {**LOOKUP, "server": {"url": server.url.replace("/messages", "/slow"), "timeoutSeconds": 1,
                                 "credentialId": sim.server_config["credentialId"]}}
    await sim.playback(caller=["my order"])
    report = report_of(await sim.call("+14155550136", model=model(slow)))
    assert report["artifact"]["messages"][3]["result"] == NO_RESULT
    assert report["artifact"]["transcript"].endswith(f"AI: {NO_RESULT}")


async def test_end_call_ends_the_call_once_its_answer_is_said_and_asks_no_server(sim):
    await sim.playback(caller=["ok bye", "Wait, one more thing"])
    messages = await sim.call("+14155550132", model=model({"type": "endCall"}))
    report = report_of(messages)
    assert report["endedReason"] == "assistant-ended-call" and "tool-calls" not in [m["type"] for m in messages]
    assert [m["role"] for m in report["artifact"]["messages"]] == ["bot", "user", "tool_calls", "bot"]
    assert report["artifact"]["transcript"].endswith("User: ok bye\nAI: Goodbye!")


async def test_an_inbound_call_plays_the_callers_lines(sim, server):
    made = await sim.client.create_assistant({"name": "Front desk", "firstMessageMode": "assistant-waits-for-user",
                                              "server": sim.server_config, "model": model(LOOKUP)})
    number = await sim.client.import_phone_number({"provider": "vapi", "assistantId": made["id"]})
    async with aiohttp.ClientSession() as s, s.post(f"{sim.url}/_simulator/inbound", json={
            "to": number["number"], "from": "+14155550133", "caller": ["What are your hours?"]}) as r:
        assert r.status == 201, await r.text()
        call = await r.json()
    messages = await wait_until(lambda: sim._messages(call["id"]), "the report",
                                lambda found: any(m["type"] == "end-of-call-report" for m in found))
    assert report_of(messages)["artifact"]["transcript"] == "User: What are your hours?\nAI: We open at nine."


@pytest.mark.parametrize("caller, why", [
    ("hello", "caller must be a list of 1 to 50 lines, each a non-empty string"),
    ([], "caller must be a list of 1 to 50 lines, each a non-empty string"),
    (["hi", " "], "caller[1] must be a non-empty string"),
    (["hi", 3], "caller[1] must be a non-empty string"),
    (["x" * 1001], "caller[0] must be at most 1000 characters"),
    (["hi"] * 51, "caller must hold at most 50 lines")])
async def test_a_bad_caller_is_refused_by_the_control_plane(sim, caller, why):
    number = await sim.client.import_phone_number({"provider": "vapi", "server": sim.server_config})
    async with aiohttp.ClientSession() as s:
        for path, body in (("/_simulator/playback", {"caller": caller}),
                           ("/_simulator/inbound", {"to": number["number"], "from": "+14155550134", "caller": caller})):
            async with s.post(f"{sim.url}{path}", json=body) as r:
                assert (r.status, (await r.json())["message"]) == (400, [why])
