"""Inbound calls the provider took while our gateway was down (issue 55's lost lead): the provider's
assistant-request, sent once, finds no gateway and the call ends at the provider with nothing recorded here; the
calls service's reconciliation (every CALLS_RECONCILE_SECONDS, 1 s in the tests' stacks) finds it in the provider's
list and records it once, with the caller's lead and one terminal event. A call its messages recorded is left as
it is."""
import asyncio

from tests.calling import our_call, ring, settled
from tests.waiting import wait_until

CALLER, OTHER_CALLER = "+14155550186", "+14155550187"
ROUNDS = 8  # seconds: the settle time of a call's messages (5 s) and a few reconciliation rounds after it


async def types_of(api, key: str, call_id: str) -> list[str]:
    """The types of the events of the call, sorted."""
    found = []
    for kind in ("call.received", "call.started", "call.completed", "call.failed"):
        status, body, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": kind})
        assert status == 200, body
        found += [e["type"] for e in body["events"] if e["data"]["call_id"] == call_id]
    return sorted(found)


async def calls_of(api, key: str, agent_id: str, conversation_id: str) -> list[dict]:
    status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent_id})
    assert status == 200, page
    return [c for c in page["calls"] if c["conversation_id"] == conversation_id]


async def rung_while_the_gateways_are_down(stack, voice, number: str, caller: str) -> dict:
    """Ring `number` with every gateway stopped (the provider's messages find nobody), then start them again."""
    gateways = [p for p in stack.processes if p.module == "gateway"]
    for p in gateways:
        stack.stop_process(p)
    try:
        return await ring(voice, number, caller)
    finally:
        for p in gateways:
            stack.spawn(p)
        await asyncio.to_thread(stack.wait_ready, 60)


async def test_an_inbound_call_lost_while_the_gateways_were_down_is_recorded_once_with_its_lead(
        api, stack, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "name": "Robin Vale", "phone": CALLER})
    assert status == 201, lead
    lost = await rung_while_the_gateways_are_down(stack, voice, agent["phone_number"], CALLER)
    assert (lost["status"], lost["endedReason"]) == ("ended", "assistant-request-returned-error")
    assert "assistantId" not in lost  # nobody answered the caller

    [listed] = await wait_until(lambda: calls_of(api, key, agent["id"], lost["id"]),
                                "the reconciliation to record the lost call", timeout=30, interval=0.5)
    call = await settled(api, key, listed["id"])
    assert (call["direction"], call["status"], call["from"], call["to"], call["lead_id"]) == (
        "inbound", "failed", CALLER, agent["phone_number"], lead["id"])
    assert call["ended_reason"] == "assistant-request-returned-error"
    await wait_until(lambda: types_of(api, key, call["id"]), "the lost call's events",
                     lambda found: len(found) >= 2)
    await asyncio.sleep(ROUNDS)  # later rounds find it recorded
    assert len(await calls_of(api, key, agent["id"], lost["id"])) == 1
    assert await types_of(api, key, call["id"]) == ["call.failed", "call.received"]


async def test_an_inbound_call_its_messages_recorded_is_not_recorded_again(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], OTHER_CALLER)
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert (await settled(api, key, call["id"]))["status"] == "completed"
    await asyncio.sleep(ROUNDS)  # past its messages' settle time: the reconciliation has looked at it
    assert len(await calls_of(api, key, agent["id"], at_provider["id"])) == 1
    assert await types_of(api, key, call["id"]) == ["call.completed", "call.received", "call.started"]
