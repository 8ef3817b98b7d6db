"""Inbound calls: the simulator rings an assigned number, the provider's assistant-request is answered with the
number's agent and the caller's lead, the call plays to its outcome, a new caller becomes a lead, a voicemail
reaches the audit (with voicemail detection on), and a number no agent answers is refused."""
from tests.calling import call_events, our_call, ring, settled
from tests.leads import leads_with
from tests.waiting import wait_until


async def test_a_known_caller_reaches_the_numbers_agent_with_their_lead(api, account, calling_agent, voice):
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


async def test_a_new_caller_becomes_a_lead(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], "+14155550196")
    call = await our_call(api, key, agent["id"], at_provider["id"])
    await settled(api, key, call["id"])
    [lead] = await wait_until(lambda: leads_with(api, key, "+14155550196"), "a lead of the caller with one interaction",
                              lambda leads: bool(leads) and leads[0]["interaction_count"] == 1)
    assert (lead["source"], lead["email"], lead["interaction_count"]) == ("inbound_call", "jordan@example.com", 1)


async def test_a_voicemail_reaches_the_audit(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    # The provider notices a voicemail only with detection on (its default is off): the agent's own setting.
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "provider_config": {"voicemailDetection": {"provider": "vapi"}}})
    assert status == 200, body
    at_provider = await ring(voice, agent["phone_number"], "+14155550197", outcome="voicemail")
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert (await settled(api, key, call["id"]))["status"] == "voicemail"

    async def unhandled() -> dict:
        status, audit, _ = await api.request("GET", "/api/v1/leads/audit", key=key)
        return audit["voicemails_unhandled"]
    [voicemail] = (await wait_until(unhandled, "an unhandled voicemail", lambda v: v["count"]))["voicemails"]
    assert voicemail["call_id"] == call["id"] and voicemail["from_number"] == "+14155550197"
    assert voicemail["recording_url"] and voicemail["transcript"]


async def test_a_number_without_an_agent_is_refused(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    status, _, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                     json={"phone_number": agent["phone_number"], "agent_id": None})
    assert status == 200
    at_provider = await ring(voice, agent["phone_number"], "+14155550198")
    assert at_provider["status"] == "ended" and at_provider["endedReason"] == "assistant-request-returned-error"
    assert at_provider["endedMessage"] == "This number is not in service." and "error" not in at_provider
    status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
    assert page["calls"] == []
