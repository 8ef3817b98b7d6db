"""The agent's booking and lead tools during a call, end to end: signed tool-calls messages posted to the gateway as
the voice provider posts them. check_availability tells the business's free slots in words; book_appointment books
a free one for the caller's number, linked to the call and the caller's lead, fires booking.created at a webhook
subscription, books once however often the message is delivered, and refuses a time in the past; update_lead
writes what the caller said on their lead with an activity entry naming the call. Another business's key sees none
of it. Dates are taken from the business's today: nothing here depends on the day or hour the test runs."""
import json
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import aiohttp
import pytest

from tests.calling import settled
from tests.e2e.test_bookings import EVERY_DAY, ZONE, call, open_every_day
from tests.e2e.test_call_lifecycle import MESSAGES, signed
from tests.receiver import Receiver

CALLEE, NEW_CALLEE = "+14155550187", "+14155550188"
TOOLS = [{"type": "check_availability"}, {"type": "book_appointment"}, {"type": "update_lead"}]


@pytest.fixture
async def receiver():
    r = await Receiver().start()
    yield r
    await r.stop()


def tool_calls_message(provider_call_id: str, call_id: str, *calls: tuple[str, str, dict]) -> bytes:
    return json.dumps({"message": {
        "type": "tool-calls", "timestamp": int(time.time() * 1000),
        "call": {"id": provider_call_id, "assistantOverrides": {"metadata": {"switchboard_call_id": call_id}}},
        "toolCallList": [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                         for i, n, a in calls]}}).encode()


async def ended_call(api, account, agent, to: str) -> dict:
    made = await call(api, account, "POST", "/api/v1/calls", status=201, json={"agent_id": agent["id"], "to": to})
    return await settled(api, account["key"], made["id"])


async def post(stack, body: bytes) -> dict:
    async with aiohttp.ClientSession() as session, session.post(
            stack.base_url + MESSAGES, data=body,
            headers=signed(body, stack.env()["VOICE_WEBHOOK_SECRET"], time.time())) as r:
        assert r.status == 200, await r.text()
        return await r.json()


async def test_an_agent_checks_availability_books_and_records_the_caller_during_a_call(
        api, stack, account, calling_agent, other_key, receiver):
    day = await open_every_day(api, account)  # Chicago, 09:00-17:00 hourly every day; two days from now
    yesterday = day - timedelta(days=3)
    await call(api, account, "POST", "/api/v1/webhooks", status=201,
               json={"webhook_url": receiver.url, "events": ["booking.created"]})
    await call(api, account, "PATCH", "/api/v1/agents", json={"id": calling_agent["id"], "tools": TOOLS})
    lead = await call(api, account, "POST", "/api/v1/leads", status=201, json={
        "business_id": account["business_id"], "name": "Sam", "phone": CALLEE})
    ended = await ended_call(api, account, calling_agent, CALLEE)
    offset = datetime(day.year, day.month, day.day, 10, tzinfo=ZoneInfo(ZONE)).isoformat()[-6:]

    body = tool_calls_message(
        ended["conversation_id"], ended["id"],
        ("tc-slots", "check_availability", {"date": day.isoformat()}),
        ("tc-book", "book_appointment", {"starts_at": f"{day.isoformat()}T10:00:00{offset}", "name": "Ann Lee",
                                         "notes": "leaking boiler"}),
        ("tc-past", "book_appointment", {"starts_at": f"{yesterday.isoformat()}T10:00", "name": "Ann Lee"}),  # local
        ("tc-lead", "update_lead", {"name": "Ann Lee", "email": "ann@example.com", "status": "qualified",
                                    "interest": "a new boiler"}),
        ("tc-bad", "update_lead", {"email": "not-an-address"}))
    answer = await post(stack, body)
    results = {r["toolCallId"]: r["result"] for r in answer["results"]}
    said_day = f"{day:%A} {day.day} {day:%B}"
    assert results["tc-slots"].startswith(f"Free times on {said_day} (the business's local time, {ZONE}): "
                                          f"{said_day} at 9:00 AM ({day.isoformat()}T09:00:00{offset}), ")
    assert results["tc-book"] == f"Booked {said_day} at 10:00 AM for Ann Lee. Please confirm it to the caller."
    assert "has already passed" in results["tc-past"] and f"{said_day} at 10:00 AM" not in results["tc-past"]
    assert results["tc-lead"] == "Recorded on the caller's lead: name, email, status, interest."
    assert results["tc-bad"].startswith("That could not be recorded: email is invalid")
    assert await post(stack, body) == answer  # the provider's retry: the same results, nothing run again

    listed = (await call(api, account, "GET", "/api/v1/bookings"))["bookings"]
    assert [(b["starts_at"], b["name"], b["phone_number"], b["notes"], b["lead_id"], b["call_id"]) for b in listed] == [
        (f"{day.isoformat()}T10:00:00{offset}", "Ann Lee", CALLEE, "leaking boiler", lead["id"], ended["id"])]
    [created] = (await receiver.wait_for(1, "booking.created")).values()
    assert (created["json"]["data"]["id"], created["json"]["data"]["call_id"]) == (listed[0]["id"], ended["id"])

    shown = await call(api, account, "GET", "/api/v1/leads", params={"id": lead["id"]})
    assert (shown["name"], shown["email"], shown["status"]) == ("Ann Lee", "ann@example.com", "qualified")
    log = (await call(api, account, "GET", "/api/sdr/activity",
                      params={"businessId": account["business_id"], "leadId": lead["id"]}))["activity"]
    assert [(e["action"], e["reference"], e["origin"]) for e in log] == [("update_lead", ended["id"], "call")]

    detail = await call(api, account, "GET", "/api/v1/calls", params={"id": ended["id"]})
    assert {t["id"]: t["outcome"] for t in detail["tool_calls"]} == {
        "tc-slots": "ok", "tc-book": "ok", "tc-past": "refused", "tc-lead": "ok", "tc-bad": "refused"}

    # a caller the business has no lead for yet (or only the one the call's end makes): one lead, with their name
    other_call = await ended_call(api, account, calling_agent, NEW_CALLEE)
    answer = await post(stack, tool_calls_message(other_call["conversation_id"], other_call["id"],
                                                  ("tc-new", "update_lead", {"name": "Bo Diaz"})))
    assert answer["results"][0]["result"] == "Recorded on the caller's lead: name."
    [new_lead] = (await call(api, account, "GET", "/api/v1/leads", params={"phone": NEW_CALLEE}))["leads"]
    assert new_lead["name"] == "Bo Diaz"
    log = (await call(api, account, "GET", "/api/sdr/activity",
                      params={"businessId": account["business_id"], "leadId": new_lead["id"]}))["activity"]
    assert [(e["action"], e["reference"]) for e in log] == [("update_lead", other_call["id"])]

    for method, path, params, status in (
            ("GET", "/api/v1/bookings", {"id": listed[0]["id"]}, 404),
            ("GET", "/api/v1/leads", {"id": lead["id"]}, 404),
            ("GET", "/api/sdr/activity", {"businessId": account["business_id"], "leadId": lead["id"]}, 403)):
        got, _, _ = await api.request(method, path, key=other_key, params=params)
        assert got == status, (method, path)
    got, body, _ = await api.request("GET", "/api/v1/bookings", key=other_key)
    assert got == 200 and body["bookings"] == []


async def test_a_booking_names_a_call_of_its_business_only(api, account, calling_agent, other_key):
    """POST /api/v1/bookings with another business's call (or none) is 404: a booking never links a stranger's call."""
    day = await open_every_day(api, account)
    ended = await ended_call(api, account, calling_agent, CALLEE)
    got, _, _ = await api.request("PUT", "/api/v1/availability", key=other_key,
                                  json={"weekly_hours": EVERY_DAY, "slot_minutes": 60})
    assert got == 200
    got, theirs, _ = await api.request("GET", "/api/v1/availability/slots", key=other_key,
                                       params={"date": day.isoformat()})
    got, body, _ = await api.request("POST", "/api/v1/bookings", key=other_key, json={
        "starts_at": theirs["slots"][-1]["starts_at"], "name": "Eve", "phone_number": CALLEE,
        "call_id": ended["id"]})
    assert (got, body["error"]["code"]) == (404, "not_found") and "call" in body["error"]["message"], body
    slots = (await call(api, account, "GET", "/api/v1/availability/slots", params={"date": day.isoformat()}))["slots"]
    got, body, _ = await api.request("POST", "/api/v1/bookings", key=account["key"], json={
        "starts_at": slots[0]["starts_at"], "name": "Ann", "phone_number": CALLEE,
        "call_id": "00000000-0000-4000-8000-000000000001"})
    assert (got, body["error"]["code"]) == (404, "not_found"), body
    made = await call(api, account, "POST", "/api/v1/bookings", status=201, json={
        "starts_at": slots[0]["starts_at"], "name": "Ann", "phone_number": CALLEE, "call_id": ended["id"]})
    assert made["call_id"] == ended["id"]
