"""transfer_call to the business's own phone, end to end: a signed transfer-destination-request posted to the
gateway as the voice provider posts it, about an inbound call to an agent whose transfer_call names no destination,
is answered with the business's phone_forward_to as a warm number destination and is on the call's record; a
request naming a call of another business, or of a business that gave no phone, is refused with words the
assistant says."""
import json
import time
import uuid

import aiohttp

from providers.voice.vapi import assistants
from tests.agents import read_agent
from tests.calling import agent_with_number, our_call, ring, settled
from tests.e2e.test_call_lifecycle import MESSAGES, signed

FORWARD_TO = "+14155550177"
CALLER = "+14155550193"


def transfer_request(provider_call_id: str, call_id: str) -> bytes:
    return json.dumps({"message": {
        "type": "transfer-destination-request", "timestamp": int(time.time() * 1000), "artifact": {"messages": []},
        "call": {"id": provider_call_id, "type": "inboundPhoneCall",
                 "assistantOverrides": {"metadata": {"switchboard_call_id": call_id}}}}}).encode()


async def business(api, **signup) -> dict:
    """A new account (with `signup`'s fields) with a key of every scope."""
    made = await api.signup(email=f"owner-{uuid.uuid4().hex[:10]}@example.com", **signup)
    dash = await api.dashboard(made)
    try:
        key = (await dash.create_key(name="all", scopes=["*"]))["key"]
    finally:
        await dash.close()
    return {"key": key, "business_id": made["business_id"]}


async def inbound_call(api, voice, account: dict) -> tuple[dict, dict]:
    """An agent of the account with transfer_call and no destination, and an inbound call it answered."""
    agent = await agent_with_number(api, account)
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent["id"], "tools": [{"type": "transfer_call"}]})
    assert status == 200, body
    assert (await read_agent(api, account, agent["id"]))["tools"] == [
        {"type": "transfer_call", "destinations": [], "mode": "warm"}]
    at_provider = await ring(voice, agent["phone_number"], CALLER)
    call = await our_call(api, account["key"], agent["id"], at_provider["id"])
    return agent, await settled(api, account["key"], call["id"])


async def test_a_transfer_request_is_answered_with_the_business_phone_and_refused_for_another_business(
        api, stack, voice):
    ours = await business(api, phone_forward_to=FORWARD_TO)
    theirs = await business(api, business_name="Other Co")  # gave no phone_forward_to
    agents = []
    try:
        agent, call = await inbound_call(api, voice, ours)
        agents.append((ours, agent))
        other_agent, other_call = await inbound_call(api, voice, theirs)
        agents.append((theirs, other_agent))
        secret = stack.env()["VOICE_WEBHOOK_SECRET"]
        async with aiohttp.ClientSession() as session:
            async def post(body: bytes) -> dict:
                async with session.post(stack.base_url + MESSAGES, data=body,
                                        headers=signed(body, secret, time.time())) as r:
                    assert r.status == 200, await r.text()
                    return await r.json()

            answer = await post(transfer_request(call["conversation_id"], call["id"]))
            destination = answer["destination"]
            assert (destination["type"], destination["number"]) == ("number", FORWARD_TO)
            assert destination["transferPlan"]["mode"] == assistants.WARM_TRANSFER
            assert CALLER in destination["transferPlan"]["message"]  # the person hears who is coming
            assert destination["transferPlan"]["fallbackPlan"] == {"message": assistants.TRANSFER_FAILED,
                                                                   "endCallEnabled": False}
            # Our call's id with the provider's call of another business: refused, recorded on neither.
            refused = await post(transfer_request(other_call["conversation_id"], call["id"]))
            assert set(refused) == {"error"} and "can't transfer you" in refused["error"]
            # That business's own call: it gave no phone to put callers through to.
            nobody = await post(transfer_request(other_call["conversation_id"], other_call["id"]))
            assert set(nobody) == {"error"} and "nobody I can put you through to" in nobody["error"]

        status, detail, _ = await api.request("GET", "/api/v1/calls", key=ours["key"], params={"id": call["id"]})
        assert status == 200
        assert [(t["name"], t["outcome"], t["result"]) for t in detail["tool_calls"]] == [
            ("transfer_call", "ok", f"Put through to {FORWARD_TO} (warm).")]
        status, detail, _ = await api.request("GET", "/api/v1/calls", key=theirs["key"],
                                              params={"id": other_call["id"]})
        assert [(t["name"], t["outcome"]) for t in detail["tool_calls"]] == [("transfer_call", "refused")]
        status, _, _ = await api.request("GET", "/api/v1/calls", key=theirs["key"], params={"id": call["id"]})
        assert status == 404
    finally:
        for account, agent in agents:
            await api.request("DELETE", "/api/v1/phone-numbers", key=account["key"],
                              params={"phone_number": agent["phone_number"]})
