"""Ring-first forwarding: a number's forwarding is set through the phone-number PATCH and at the provider (the
number's call.ringing transfer hook); an inbound call rings the forward-to phone first, and the agent answers
when nobody picks up there."""
import pytest

from tests.calling import call_events, our_call, ring, settled
from tests.leads import leads_with
from tests.waiting import wait_until

OWNER = "+14155550177"  # picks up at the simulator
OWNER_AWAY = "+14155550001"  # a no-answer test number: never picks up


async def forward(api, key, number: str, forwarding) -> tuple[int, dict]:
    status, body, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                        json={"phone_number": number, "forwarding": forwarding})
    return status, body


async def provider_hooks(voice, agent) -> list:
    status, number = await voice.request("GET", f"/phone-number/{agent['provider_number']}")
    assert status == 200
    return number.get("hooks")


async def test_forwarding_is_set_on_the_number_and_at_the_provider(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    status, number = await forward(api, key, agent["phone_number"], {"to": OWNER})
    assert status == 200, number
    assert number["forwarding"] == {"to": OWNER, "ring_seconds": 20} and number["agent_id"] == agent["id"]
    [hook] = await provider_hooks(voice, agent)
    assert hook["on"] == "call.ringing"
    [action] = hook["do"]
    destination = action["destination"]
    assert (action["type"], destination["type"], destination["number"]) == ("transfer", "number", OWNER)
    assert destination["transferPlan"]["dialTimeout"] == 20
    assert destination["transferPlan"]["fallbackPlan"]["endCallEnabled"] is False  # the agent takes over

    # Changing only the agent keeps the forwarding; changing the ring time reaches the provider.
    status, number, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                          json={"phone_number": agent["phone_number"], "agent_id": agent["id"]})
    assert status == 200 and number["forwarding"] == {"to": OWNER, "ring_seconds": 20}
    status, number = await forward(api, key, agent["phone_number"], {"to": OWNER, "ring_seconds": 35})
    assert status == 200 and number["forwarding"]["ring_seconds"] == 35
    [hook] = await provider_hooks(voice, agent)
    assert hook["do"][0]["destination"]["transferPlan"]["dialTimeout"] == 35
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers", key=key,
                                          params={"phone_number": agent["phone_number"]})
    assert listed["phone_numbers"][0]["forwarding"] == {"to": OWNER, "ring_seconds": 35}

    status, number = await forward(api, key, agent["phone_number"], None)
    assert status == 200 and number.get("forwarding") is None
    assert await provider_hooks(voice, agent) == []


async def test_a_forwarded_call_picked_up_at_the_owners_phone(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    assert (await forward(api, key, agent["phone_number"], {"to": OWNER}))[0] == 200
    at_provider = await ring(voice, agent["phone_number"], "+14155550181")
    assert at_provider["status"] == "forwarding" and "assistantId" not in at_provider
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert call["direction"] == "inbound" and call["forwarded_to"] == OWNER
    ended = await settled(api, key, call["id"])
    assert (ended["status"], ended["ended_reason"]) == ("completed", "call.ringing.hook-executed-transfer")
    assert ended["forwarded_to"] == OWNER and ended["from"] == "+14155550181" and ended["summary"] is None
    status, placed = await voice.request("GET", f"/call/{at_provider['id']}")
    assert "assistantId" not in placed  # the agent never came on the line
    assert await call_events(api, key, call["id"], 2) == ["call.completed", "call.started"]
    leads = await wait_until(lambda: leads_with(api, key, "+14155550181"), "a lead of the caller")  # a new contact
    assert [(lead["source"], lead["interaction_count"]) for lead in leads] == [("inbound_call", 1)]


async def test_a_forwarded_call_nobody_picks_up_is_answered_by_the_agent(api, account, calling_agent,
                                                                         voice):
    key, agent = account["key"], calling_agent
    assert (await forward(api, key, agent["phone_number"], {"to": OWNER_AWAY, "ring_seconds": 10}))[0] == 200
    at_provider = await ring(voice, agent["phone_number"], "+14155550182")
    call = await our_call(api, key, agent["id"], at_provider["id"])
    ended = await settled(api, key, call["id"])
    assert (ended["status"], ended["ended_reason"]) == ("completed", "customer-ended-call")
    assert ended["forwarded_to"] == OWNER_AWAY and ended["summary"]
    status, placed = await voice.request("GET", f"/call/{at_provider['id']}")
    assert placed["assistantId"] == agent["provider_assistant_id"]
    status, transcripts, _ = await api.request("GET", "/api/v1/transcripts", key=key, params={"agent_id": agent["id"]})
    assert next(t for t in transcripts["transcripts"] if t["call_id"] == call["id"])["transcript"].startswith("Agent:")
    assert await call_events(api, key, call["id"], 2) == ["call.completed", "call.started"]


async def test_the_control_plane_decides_the_pickup(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    assert (await forward(api, key, agent["phone_number"], {"to": OWNER}))[0] == 200
    at_provider = await ring(voice, agent["phone_number"], "+14155550183", forward_pickup=False)
    call = await our_call(api, key, agent["id"], at_provider["id"])
    assert (await settled(api, key, call["id"]))["ended_reason"] == "customer-ended-call"


@pytest.mark.parametrize("forwarding, code, fix", [
    ({"to": "4155550177"}, "invalid_request", "forwarding.to must be"),
    ({"to": "+1415555017"}, "invalid_request", "forwarding.to +1415555017 is not a valid phone number"),
    ({"to": OWNER, "ring_seconds": 3}, "invalid_request", "forwarding.ring_seconds: 3 is less than the minimum of 5"),
    ({"to": OWNER, "ring_seconds": 61}, "invalid_request", "forwarding.ring_seconds: 61 is greater than the maximum"),
    ({"ring_seconds": 20}, "bad_request", "forwarding.to is required"),
])
async def test_bad_forwarding_is_refused_with_what_to_fix(api, account, calling_agent, voice, forwarding,
                                                          code, fix):
    status, body = await forward(api, account["key"], calling_agent["phone_number"], forwarding)
    assert status == 400 and body["error"]["code"] == code and fix in body["error"]["message"], body
    assert await provider_hooks(voice, calling_agent) in (None, [])


async def test_forwarding_to_the_number_itself_or_nothing_to_change_is_refused(api, account, calling_agent):
    key, number = account["key"], calling_agent["phone_number"]
    status, body = await forward(api, key, number, {"to": number})
    assert status == 400 and "another phone" in body["error"]["message"]
    status, body, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key, json={"phone_number": number})
    assert status == 400 and body["error"] == {"code": "bad_request", "message": "agent_id or forwarding is required"}


async def test_a_provider_refusal_changes_nothing(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    await voice.fail_next("PATCH", f"/phone-number/{agent['provider_number']}", 500, times=10)  # past retries
    status, body = await forward(api, key, agent["phone_number"], {"to": OWNER})
    assert status == 500 and body["error"]["code"] == "provider_error", body
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers", key=key,
                                          params={"phone_number": agent["phone_number"]})
    assert listed["phone_numbers"][0].get("forwarding") is None


async def test_another_accounts_key_cannot_forward_the_number(api, account, calling_agent, voice, other_key):
    status, body = await forward(api, other_key, calling_agent["phone_number"], {"to": OWNER})
    assert status == 404, body
    assert await provider_hooks(voice, calling_agent) in (None, [])
