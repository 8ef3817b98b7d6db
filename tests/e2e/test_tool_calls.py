"""The model's tool calls during a call, end to end: a signed tool-calls server message posted to the gateway as the
voice provider posts it is answered in Vapi's documented `results` shape, the custom tool's URL gets one signed
POST however often the message is delivered, send_sms and send_link text the caller once per tool call (shown in
the business's conversations, refused to a caller who texted STOP), and the call's detail lists the tool calls to
its business alone; an inbound call whose caller (the simulator's scripted lines) asks for it makes the agent call
its custom tool."""
import json
import time

import aiohttp
from stripe import WebhookSignature

from core.signing import SIGNATURE_HEADER
from tests.calling import our_call, ring, settled
from tests.e2e.test_call_lifecycle import MESSAGES, signed
from tests.receiver import Receiver
from tests.texting import number, texts_to

MENU = "https://example.com/menu"


def tool_calls_message(provider_call_id: str, call_id: str) -> bytes:
    return json.dumps({"message": {
        "type": "tool-calls", "timestamp": int(time.time() * 1000),
        "call": {"id": provider_call_id, "assistantOverrides": {"metadata": {"switchboard_call_id": call_id}}},
        "toolCallList": [
            {"id": "call_lookup_1", "type": "function",
             "function": {"name": "lookup_order", "arguments": json.dumps({"order": "A-17"})}},
            {"id": "call_end_1", "type": "function", "function": {"name": "end_call", "arguments": "{}"}},
            {"id": "call_sms_1", "type": "function", "function": {"name": "send_sms", "arguments": "{}"}}]}}).encode()


async def test_a_tool_calls_message_is_answered_once_per_tool_call_and_on_the_calls_record(
        api, stack, account, calling_agent, other_key):
    key, receiver = account["key"], await Receiver().start()
    try:
        lookup = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
                  "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
                  "url": receiver.url}  # loopback: the stack is local (`make run`)
        status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
            "id": calling_agent["id"], "tools": [{"type": "end_call"}, {"type": "send_sms"}, lookup]})
        assert status == 200, patched
        secret = patched["tool_secret"]
        status, call, _ = await api.request("POST", "/api/v1/calls", key=key,
                                            json={"agent_id": calling_agent["id"], "to": "+14155550186"})
        assert status == 201, call
        ended = await settled(api, key, call["id"])
        body = tool_calls_message(ended["conversation_id"], call["id"])
        async with aiohttp.ClientSession() as session:
            async def post() -> tuple[int, dict]:
                async with session.post(stack.base_url + MESSAGES, data=body, headers=signed(
                        body, stack.env()["VOICE_WEBHOOK_SECRET"], time.time())) as r:
                    return r.status, await r.json()

            status, answer = await post()
            assert status == 200, answer
            assert [r["toolCallId"] for r in answer["results"]] == ["call_lookup_1", "call_end_1", "call_sms_1"]
            assert answer["results"][0]["result"] == "ok" and answer["results"][1]["result"] == "ok"
            assert answer["results"][2]["result"].startswith("No text was sent")  # it says nothing to send
            assert await post() == (200, answer)  # the provider's retry: the same results, nothing run again
        [request] = receiver.requests
        assert request["json"] == {"tool_call_id": "call_lookup_1", "name": "lookup_order",
                                   "arguments": {"order": "A-17"}, "call": {
                                       "id": call["id"], "business_id": account["business_id"],
                                       "agent_id": calling_agent["id"], "direction": "outbound",
                                       "from": ended.get("from"), "to": "+14155550186"}}
        assert WebhookSignature.verify_header(request["body"].decode(), request["headers"][SIGNATURE_HEADER], secret,
                                              tolerance=300)

        status, detail, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
        assert status == 200
        listed = {t["id"]: (t["name"], t["arguments"], t["result"], t["outcome"]) for t in detail["tool_calls"]}
        assert listed == {"call_lookup_1": ("lookup_order", {"order": "A-17"}, "ok", "ok"),
                          "call_end_1": ("end_call", {}, "ok", "ok"),
                          "call_sms_1": ("send_sms", {}, answer["results"][2]["result"], "refused")}
        assert all(t["duration_ms"] is not None and t["created_at"] for t in detail["tool_calls"])
        status, _, _ = await api.request("GET", "/api/v1/calls", key=other_key, params={"id": call["id"]})
        assert status == 404
    finally:
        await receiver.stop()


def message_of(provider_call_id: str, *calls: tuple[str, str, dict]) -> bytes:
    """A tool-calls server message about the provider's call (an inbound call: no id of ours in its metadata)."""
    return json.dumps({"message": {
        "type": "tool-calls", "timestamp": int(time.time() * 1000), "call": {"id": provider_call_id},
        "toolCallList": [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                         for i, n, a in calls]}}).encode()


async def delivered(stack, body: bytes) -> dict:
    async with aiohttp.ClientSession() as session:
        async with session.post(stack.base_url + MESSAGES, data=body, headers=signed(
                body, stack.env()["VOICE_WEBHOOK_SECRET"], time.time())) as r:
            assert r.status == 200, await r.text()
            return {a["toolCallId"]: a["result"] for a in (await r.json())["results"]}


async def test_send_sms_and_send_link_text_an_inbound_caller_once_each_in_the_businesss_thread(
        api, stack, account, calling_agent, voice, sms, other_key):
    key, agent = account["key"], calling_agent
    status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={"id": agent["id"], "tools": [
        {"type": "send_sms"}, {"type": "send_link", "links": [{"name": "Menu", "url": MENU}]}]})
    assert status == 200, patched
    caller, stopped = number("0433"), number("0434")
    await sms.answered(stopped, agent["phone_number"], "STOP")  # an explicit opt-out, before the call

    at_provider = await ring(voice, agent["phone_number"], caller)
    call = await our_call(api, key, agent["id"], at_provider["id"])
    body = message_of(at_provider["id"], ("tc-sms", "send_sms", {"text": "We open at 9 tomorrow."}),
                      ("tc-link", "send_link", {"name": "Menu"}), ("tc-bad", "send_link", {"name": "Prices"}))
    answered = await delivered(stack, body)
    assert answered["tc-sms"] == answered["tc-link"] == f"Text sent to {caller}."
    assert 'no saved link named "Prices"' in answered["tc-bad"] and "Menu" in answered["tc-bad"]
    assert await delivered(stack, body) == answered  # the provider's retry: nothing texted again
    taken = await texts_to(stack, caller)
    assert sorted(t["body"] for t in taken) == sorted(["We open at 9 tomorrow.",
                                                       f"Here is the link you asked for (Menu): {MENU}"])
    assert {t["from"] for t in taken} == {agent["phone_number"]}

    status, threads, _ = await api.request("GET", "/api/v1/sms/conversations", key=key)
    [thread] = [t for t in threads["conversations"] if t["contact_number"] == caller]
    assert (thread["business_number"], thread["outbound_count"]) == (agent["phone_number"], 2)
    status, messages, _ = await api.request("GET", "/api/v1/sms/messages", key=key,
                                            params={"conversation_id": thread["id"]})
    assert sorted(m["body"] for m in messages["messages"]) == sorted(t["body"] for t in taken)
    status, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": caller})
    assert ("conversational", "call_request", call["id"]) in [
        (c["kind"], c["source"], c["reference"]) for c in consent["history"]]
    status, logged, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params={"phone": caller})
    assert sorted(d["reference"] for d in logged["decisions"] if d["actor"] == "agent_tool") == ["tc-link", "tc-sms"]

    status, detail, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert {t["id"]: t["outcome"] for t in detail["tool_calls"]} == {"tc-sms": "ok", "tc-link": "ok",
                                                                     "tc-bad": "refused"}
    status, theirs, _ = await api.request("GET", "/api/v1/sms/conversations", key=other_key)
    assert status == 200 and caller not in [t["contact_number"] for t in theirs["conversations"]]
    status, _, _ = await api.request("GET", "/api/v1/sms/conversations", key=other_key, params={"id": thread["id"]})
    assert status == 404
    status, _, _ = await api.request("GET", "/api/v1/calls", key=other_key, params={"id": call["id"]})
    assert status == 404

    before = len(await texts_to(stack, stopped))  # the provider's own answer to the STOP
    at_provider = await ring(voice, agent["phone_number"], stopped)
    await our_call(api, key, agent["id"], at_provider["id"])
    refused = await delivered(stack, message_of(at_provider["id"], ("tc-stop", "send_sms", {"text": "Hi"})))
    assert refused["tc-stop"] == f"No text was sent: {stopped} cannot receive texts from this business. Please " \
                                 "tell the caller the text can't be sent and offer another way to help."
    assert len(await texts_to(stack, stopped)) == before
    await settled(api, key, call["id"])


async def test_a_callers_line_at_the_simulator_makes_the_agent_call_its_custom_tool(
        api, account, calling_agent, voice, other_key):
    key, agent, receiver = account["key"], calling_agent, await Receiver().start()
    try:
        lookup = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
                  "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
                  "url": receiver.url}  # loopback: the stack is local (`make run`)
        prompt = "\n".join(["Answer the phone.",
                            'When the caller says "order", call lookup_order with {"order": "A-17"}.',
                            'When the caller says "bye", call endCall and answer "Goodbye!"'])
        status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
            "id": agent["id"], "inbound_prompt": prompt, "tools": [{"type": "end_call"}, lookup]})
        assert status == 200, patched
        at_provider = await ring(voice, agent["phone_number"], "+14155550188",
                                 says=["Where is my order?", "Great, thanks. Bye!", "Hello?"])
        call = await our_call(api, key, agent["id"], at_provider["id"])
        ended = await settled(api, key, call["id"])
        assert (ended["status"], ended["ended_reason"]) == ("completed", "assistant-ended-call")

        [request] = receiver.requests  # the gateway got the tool-calls message; the tool's URL one signed POST
        assert (request["json"]["name"], request["json"]["arguments"]) == ("lookup_order", {"order": "A-17"})
        assert request["json"]["call"]["id"] == call["id"] and request["json"]["call"]["direction"] == "inbound"
        assert WebhookSignature.verify_header(request["body"].decode(), request["headers"][SIGNATURE_HEADER],
                                              patched["tool_secret"], tolerance=300)
        status, detail, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
        assert status == 200
        [tool_call] = detail["tool_calls"]
        assert (tool_call["name"], tool_call["arguments"], tool_call["result"], tool_call["outcome"]) == (
            "lookup_order", {"order": "A-17"}, "ok", "ok")
        assert tool_call["id"] == request["json"]["tool_call_id"] and tool_call["id"].startswith("call_")

        status, page, _ = await api.request("GET", "/api/v1/transcripts", key=key, params={"agent_id": agent["id"]})
        [transcript] = [t["transcript"] for t in page["transcripts"] if t["call_id"] == call["id"]]
        # After the recording disclosure and the agent's greeting; the caller's last line is never said.
        assert transcript.split("\n")[-4:] == ["Caller: Where is my order?", "Agent: ok",
                                               "Caller: Great, thanks. Bye!", "Agent: Goodbye!"]
        status, at_end = await voice.request("GET", f"/call/{at_provider['id']}")  # the provider's record of it
        said = at_end["artifact"]["messages"]
        assert [m["role"] for m in said][-7:] == ["user", "tool_calls", "tool_call_result", "bot", "user",
                                                  "tool_calls", "bot"]
        assert said[-5]["result"] == "ok" and said[-5]["toolCallId"] == tool_call["id"]
        status, _, _ = await api.request("GET", "/api/v1/calls", key=other_key, params={"id": call["id"]})
        assert status == 404
    finally:
        await receiver.stop()
