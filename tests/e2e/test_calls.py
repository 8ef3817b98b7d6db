"""POST/GET /api/v1/calls: placing outbound calls at the voice provider with the agent's outbound
configuration and the lead's enrichment, idempotent retries, provider failures, validation and tenancy."""
import uuid
from datetime import timedelta

import asyncpg

from services.calls import domain
from services.calls.service import Calls, NewCall
from tests.calling import place
from tests.waiting import wait_until

TO = "+14155550177"


async def test_an_outbound_call_carries_the_outbound_configuration_and_the_leads_enrichment(api, account, voice,
                                                                                           calling_agent):
    key, agent = account["key"], calling_agent
    status, _, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "outbound_prompt": "You call back about quotes.", "outbound_first_message": "Hi, it's Acme.",
        "outbound_llm": "gpt-4.1-mini"})
    assert status == 200
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "first_name": "Dana", "last_name": "Reyes", "phone": TO,
        "source": "referral", "status": "contacted"})
    assert status == 201, lead
    status, call, _ = await place(api, key, agent_id=agent["id"], to=TO, context="Quote for a water heater")
    assert status == 201, call
    assert set(call) == {"id", "conversation_id", "status", "agent_id", "to", "name", "created_at"}
    assert call["status"] == "queued" and call["to"] == TO and call["agent_id"] == agent["id"] and call["name"] is None

    status, placed = await voice.request("GET", f"/call/{call['conversation_id']}")
    assert status == 200 and placed["phoneNumberId"] == agent["provider_number"]
    assert placed["customer"] == {"number": TO}
    overrides = placed["assistantOverrides"]
    assert overrides["firstMessage"] == "Hi, it's Acme." and overrides["maxDurationSeconds"] == 600
    assert overrides["model"]["model"] == "gpt-4.1-mini"
    assert overrides["model"]["messages"][0]["content"] == ("You call back about quotes.\n\n"
                                                            "Context for this call: Quote for a water heater")
    variables = overrides["variableValues"]
    assert {k: variables[k] for k in ("name", "lead_status", "lead_source", "lead_score", "interaction_count",
                                      "days_since_first_contact", "business_name", "business_phone")} == {
        "name": "Dana", "lead_status": "contacted", "lead_source": "referral", "lead_score": lead["score"],
        "interaction_count": 0, "days_since_first_contact": 0, "business_name": "Acme Plumbing",
        "business_phone": agent["phone_number"]}
    assert variables["time_of_day"] in ("morning", "afternoon", "evening")
    assert variables["context"] == "Quote for a water heater"

    status, full, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert status == 200 and full["lead_id"] == lead["id"] and full["direction"] == "outbound"
    assert full["agent_name"] == "Closer" and full["from"] == agent["phone_number"]
    assert full["variables"] == {k: v for k, v in variables.items() if k != "context"}
    assert full["context"] == "Quote for a water heater" and full["max_duration"] == 600
    status, listed, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
    assert [c["id"] for c in listed["calls"]] == [call["id"]] and listed["calls"][0]["direction"] == "outbound"

    async def listed_under_its_status() -> bool:
        """The simulator plays the call meanwhile (queued, ringing, ...): the list by its status as read now holds
        it (the status only moves forward, so this settles)."""
        _, now, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
        _, by_status, _ = await api.request("GET", "/api/v1/calls", key=key, params={"status": now["status"],
                                                                                    "agent_id": agent["id"]})
        return [c["id"] for c in by_status["calls"]] == [call["id"]]

    await wait_until(listed_under_its_status, "the call listed under its status")


async def test_the_request_name_aliases_and_max_duration_reach_the_provider(api, account, voice, calling_agent):
    agent = calling_agent
    status, call, _ = await place(api, account["key"], agent_id=agent["id"], to="+14155550178",
                                  customer_name="Sam Ortiz", firstMessage="Hello Sam!", max_duration=120)
    assert status == 201 and call["name"] == "Sam Ortiz"
    status, placed = await voice.request("GET", f"/call/{call['conversation_id']}")
    assert placed["customer"] == {"number": "+14155550178", "name": "Sam Ortiz"}
    assert placed["assistantOverrides"]["firstMessage"] == "Hello Sam!"
    assert placed["assistantOverrides"]["maxDurationSeconds"] == 120
    assert placed["assistantOverrides"]["variableValues"]["name"] == "Sam"
    assert "lead_score" not in placed["assistantOverrides"]["variableValues"]  # no lead has this number


async def test_an_idempotency_key_places_one_call(api, account, voice, calling_agent):
    agent = calling_agent
    key, idem = account["key"], {"Idempotency-Key": f"retry-{uuid.uuid4()}"}
    body = {"agent_id": agent["id"], "to": "+14155550179"}
    first = await api.request("POST", "/api/v1/calls", key=key, json=body, headers=idem)
    again = await api.request("POST", "/api/v1/calls", key=key, json=body, headers=idem)
    assert first[0] == again[0] == 201 and again[1]["id"] == first[1]["id"]
    moving = {"status", "updated_at", "started_at", "ended_at"}  # the call may have rung between the two requests
    assert {k: v for k, v in again[1].items() if k not in moving} == {k: v for k, v in first[1].items()
                                                                      if k not in moving}
    status, listed = await voice.request("GET", f"/call?assistantId={agent['provider_assistant_id']}")
    assert len(listed) == 1
    status, body, _ = await api.request("POST", "/api/v1/calls", key=key, json={**body, "to": "+14155550180"},
                                        headers=idem)
    assert status == 409 and "Idempotency-Key" in body["error"]["message"]


async def test_a_key_a_killed_calls_process_left_claimed_is_taken_over_once_its_lease_lapsed(api, account, voice,
                                                                                           calling_agent, stack):
    """Issue 55: a calls process killed after claiming the key, before recording the call, left the key answering
    409 (still being placed) for 24 hours. The claim as it left it (no call named) is taken over by the retry once
    its lease lapsed, and the call placed once; a claim whose lease runs is still being placed."""
    agent, key = calling_agent, account["key"]
    body = {"agent_id": agent["id"], "to": "+14155550182"}
    running, lapsed = f"running-{uuid.uuid4()}", f"lapsed-{uuid.uuid4()}"
    conn = await asyncpg.connect(stack.database_url)
    try:
        account_id = await conn.fetchval("SELECT account_id FROM accounts.businesses WHERE id = $1",
                                         account["business_id"])
        for idem, lease_left in ((running, timedelta(minutes=1)), (lapsed, timedelta(seconds=-1))):
            await conn.execute(
                "INSERT INTO calls.idempotency_keys (account_id, key, request_hash, lease_token, lease_until, "
                "created_at) VALUES ($1, $2, $3, gen_random_uuid(), now() + $4, now() - interval '3 min')",
                account_id, idem, domain.request_hash(Calls._checked(NewCall(**body))), lease_left)
    finally:
        await conn.close()
    status, refused, _ = await api.request("POST", "/api/v1/calls", key=key, json=body,
                                           headers={"Idempotency-Key": running})
    assert status == 409 and "still being placed" in refused["error"]["message"], refused
    status, call, _ = await api.request("POST", "/api/v1/calls", key=key, json=body,
                                        headers={"Idempotency-Key": lapsed})
    assert status == 201, call
    status, again, _ = await api.request("POST", "/api/v1/calls", key=key, json=body,
                                         headers={"Idempotency-Key": lapsed})
    assert status == 201 and again["id"] == call["id"]
    status, listed = await voice.request("GET", f"/call?assistantId={agent['provider_assistant_id']}")
    assert [placed["id"] for placed in listed] == [call["conversation_id"]]


async def test_a_provider_refusal_is_call_failed_and_leaves_no_queued_call(api, account, voice, calling_agent):
    agent = calling_agent
    key, idem = account["key"], {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    await voice.fail_next("POST", "/call", 400)
    status, body, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                                "to": "+14155550181"}, headers=idem)
    assert status == 500 and body["error"]["code"] == "call_failed", body
    status, listed, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
    [failed] = listed["calls"]
    assert failed["status"] == "failed" and failed["conversation_id"] == ""
    status, full, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": failed["id"]})
    assert full["ended_reason"].startswith("provider refused")
    status, retried, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                                   "to": "+14155550181"}, headers=idem)
    assert status == 201 and retried["status"] == "queued" and retried["id"] != failed["id"]


async def test_bad_requests_name_what_to_fix(api, account, other_key):
    key = account["key"]
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "No line", "system_prompt": "Answer."})
    status, body, _ = await place(api, key, agent_id=agent["id"], to=TO)
    assert status == 400 and "phone number" in body["error"]["message"]
    for fields, fragment in (({"to": "+1555"}, "to"), ({"to": TO, "max_duration": 5}, "max_duration"),
                             ({"to": TO, "name": "A", "customer_name": "B"}, "customer_name"),
                             ({"to": TO, "lead_id": "nope"}, "lead_id"), ({"to": TO, "webhook_url": "ftp://x"},
                                                                            "webhook_url"),
                             # a bracketed host that is no IP address (issue 50: it was a 500)
                             ({"to": TO, "webhook_url": "Https://[4:60b2AbdAe295:A1fc]"}, "webhook_url is not a "
                                                                                          "valid URL")):
        status, body, _ = await place(api, key, agent_id=agent["id"], **fields)
        assert status == 400 and fragment in body["error"]["message"], (fields, body)
    status, body, _ = await place(api, other_key, agent_id=agent["id"], to=TO)
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body, _ = await api.request("GET", "/api/v1/calls", key=key, params={"status": "ringing-ish"})
    assert status == 400
    status, body, _ = await api.request("GET", "/api/v1/calls", key=account["read_key"],
                                        params={"id": str(uuid.uuid4())})
    assert status == 404
