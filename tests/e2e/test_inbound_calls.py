"""Inbound calls: the simulator rings an assigned number, the provider's assistant-request is answered with the
number's agent and the caller's lead, the call plays to its outcome, a new caller becomes a lead, a voicemail
reaches the audit, and a number no agent answers is refused."""
import asyncio

import pytest

from tests.e2e.test_call_lifecycle import call_events, settled
from tests.e2e.test_calls import calling_agent  # noqa: F401 - a fixture


async def ring(voice, to: str, caller: str, outcome: str | None = None, **control) -> dict:
    body = {"to": to, "from": caller, **({"outcome": outcome} if outcome else {}), **control}
    async with voice.session.post(f"{voice.url}/_simulator/inbound", json=body) as r:
        assert r.status == 201, await r.text()
        return await r.json()


async def our_call(api, key, agent_id: str, conversation_id: str) -> dict:
    for _ in range(50):
        status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent_id})
        found = [c for c in page["calls"] if c["conversation_id"] == conversation_id]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    pytest.fail("the inbound call was not recorded")


async def test_a_known_caller_reaches_the_numbers_agent_with_their_lead(api, account, calling_agent, voice):  # noqa: F811
    key, agent = account["key"], calling_agent
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "name": "Dana Reyes", "phone": "+14155550195", "status": "qualified"})
    at_provider = await ring(voice, agent["phone_number"], "+14155550195")
    assert at_provider["assistantId"] == agent["provider_assistant_id"]
    variables = at_provider["assistantOverrides"]["variableValues"]
    assert (variables["name"], variables["lead_status"], variables["business_phone"]) == (
        "Dana", "qualified", agent["phone_number"])
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert call["direction"] == "inbound"
    ended = await settled(api, key, call["id"])
    assert ended["status"] == "completed" and ended["lead_id"] == lead["id"] and ended["from"] == "+14155550195"
    assert ended["to"] == agent["phone_number"]
    assert await call_events(api, key, call["id"], 2) == ["call.completed", "call.started"]
    status, received, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": "call.received"})
    assert [e for e in received["events"] if e["data"]["call_id"] == call["id"]]


async def test_a_new_caller_becomes_a_lead(api, account, calling_agent, voice):  # noqa: F811
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], "+14155550196")
    call = await our_call(api, key, agent["id"], at_provider["id"])
    await settled(api, key, call["id"])
    for _ in range(100):
        status, page, _ = await api.request("GET", "/api/v1/leads", key=key, params={"phone": "+14155550196"})
        if page["leads"] and page["leads"][0]["interaction_count"] == 1:
            break
        await asyncio.sleep(0.1)
    [lead] = page["leads"]
    assert (lead["source"], lead["email"], lead["interaction_count"]) == ("inbound_call", "jordan@example.com", 1)


async def test_a_voicemail_reaches_the_audit(api, account, calling_agent, voice):  # noqa: F811
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], "+14155550197", outcome="voicemail")
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert (await settled(api, key, call["id"]))["status"] == "voicemail"
    for _ in range(100):
        status, audit, _ = await api.request("GET", "/api/v1/leads/audit", key=key)
        if audit["voicemails_unhandled"]["count"]:
            break
        await asyncio.sleep(0.1)
    [voicemail] = audit["voicemails_unhandled"]["voicemails"]
    assert voicemail["call_id"] == call["id"] and voicemail["from_number"] == "+14155550197"
    assert voicemail["recording_url"] and voicemail["transcript"]


async def test_a_number_without_an_agent_is_refused(api, account, calling_agent, voice):  # noqa: F811
    key, agent = account["key"], calling_agent
    status, _, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                     json={"phone_number": agent["phone_number"], "agent_id": None})
    assert status == 200
    at_provider = await ring(voice, agent["phone_number"], "+14155550198")
    assert at_provider["status"] == "ended" and at_provider["endedReason"] == "assistant-request-returned-error"
    assert at_provider["error"] == "This number is not in service."
    status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
    assert page["calls"] == []
