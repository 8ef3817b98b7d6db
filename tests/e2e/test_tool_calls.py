"""The model's tool calls during a call, end to end: a signed tool-calls server message posted to the gateway as the
voice provider posts it is answered in Vapi's documented `results` shape, the custom tool's URL gets one signed
POST however often the message is delivered, and the call's detail lists the tool calls to its business alone."""
import json
import time

import aiohttp
from stripe import WebhookSignature

from core.signing import SIGNATURE_HEADER
from tests.calling import settled
from tests.e2e.test_call_lifecycle import MESSAGES, signed
from tests.receiver import Receiver


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
            assert "not available yet" in answer["results"][2]["result"]
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
