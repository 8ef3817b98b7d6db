"""The erasure of a person end to end (issue 56): someone called the business (the voice simulator rings its
number), texted it (the messaging simulator's inbound), became a lead with a score, and booked; the business erases
them by phone. Afterwards no public route shows their data (calls list, read, transcripts and recording; leads;
texts; bookings; the event history and its replay to a webhook), nor a dashboard page, nor an export of the
business, the simulators' copies are gone or redacted,
texting or calling them is refused (their opt-out holds), and erasure.completed reached the business's webhook
subscriber with the report and nothing of theirs."""
import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.calling import our_call, ring, settled
from tests.exports import exported
from tests.leads import leads_with
from tests.receiver import Receiver
from tests.texting import number, send, texts_to
from tests.waiting import wait_until

PATH = "/api/v1/privacy/erasures"
NAME, EMAIL = "Dana Reyes", "dana.reyes@example.com"
SAID = ["Hi, this is Dana Reyes, I need a plumber for a leak on Saturday.", "My email is dana.reyes@example.com."]


@pytest.fixture
async def receiver():
    r = await Receiver().start()
    yield r
    await r.stop()


async def get(api, key, path, **params):
    status, body, _ = await api.request("GET", path, key=key, params=params or None)
    return status, body


def holds(person: str, reply) -> bool:
    """Whether an answer shows anything of the person: their number (in any form we store it), name or email."""
    text = json.dumps(reply) if not isinstance(reply, str) else reply
    digits = person[-10:]
    return any(part in text for part in (person, digits, NAME, "Dana", EMAIL, "dana.reyes"))


async def test_a_person_who_called_texted_was_scored_and_booked_is_erased_everywhere(
        api, account, calling_agent, voice, sms, stack, receiver):
    key, business, agent = account["key"], account["business_id"], calling_agent
    person = number("0191")
    status, hook, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
        "webhook_url": receiver.url, "events": ["erasure.completed", "lead.created", "call.completed",
                                                "sms.received", "booking.created"]})
    assert status == 201, hook

    # They call (and say who they are), then text.
    at_provider = await ring(voice, agent["phone_number"], person, says=SAID)
    call = await settled(api, key, (await our_call(api, key, agent["id"], at_provider["id"]))["id"])
    assert await sms.text_in(person, agent["phone_number"], f"It's {NAME} again, is Saturday fine?") == []
    # A lead with a score, then a booking.
    [lead] = await wait_until(lambda: leads_with(api, key, person), f"a lead of {person}",
                              lambda leads: bool(leads) and leads[0]["interaction_count"] >= 2, timeout=20)
    status, lead, _ = await api.request("PATCH", "/api/v1/leads", key=key, json={
        "id": lead["id"], "name": NAME, "email": EMAIL, "notes": "leak under the sink"})
    assert status == 200 and lead["score"] is not None, lead
    status, _, _ = await api.request("PUT", "/api/v1/availability", key=key, json={
        "weekly_hours": {d: [["09:00", "17:00"]] for d in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")},
        "slot_minutes": 60})
    assert status == 200
    day = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    status, free = await get(api, key, "/api/v1/availability/slots", date=day)
    status, booking, _ = await api.request("POST", "/api/v1/bookings", key=key, json={
        "starts_at": free["slots"][0]["starts_at"], "name": NAME, "phone_number": person, "email": EMAIL})
    assert status == 201 and booking["lead_id"] == lead["id"], booking
    await receiver.wait_for(1, "booking.created")
    status, events = await get(api, key, "/api/v1/events", limit="100")
    assert holds(person, events)  # before: the history names them

    # Erased by phone, in the national format.
    status, erasure, _ = await api.request("POST", PATH, key=key, json={
        "phone": f"({person[2:5]}) {person[5:8]}-{person[8:]}"})
    assert status == 202, erasure
    done = await wait_until(lambda: get(api, key, PATH, id=erasure["id"]), "the erasure to complete",
                            lambda r: r[1]["status"] == "completed", timeout=60)
    report = done[1]["report"]
    assert {line["service"] for line in report} == {"sdr", "calls", "messaging", "webhooks"}
    assert sum(line["count"] for line in report) > 0 and not holds(person, done[1])

    # No public route shows them.
    for path, params in (("/api/v1/calls", {"limit": "100"}), ("/api/v1/calls", {"id": call["id"]}),
                         ("/api/v1/transcripts", {}), ("/api/v1/leads", {"limit": "100"}),
                         ("/api/v1/sms/messages", {"limit": "100"}), ("/api/v1/sms/conversations", {}),
                         ("/api/v1/bookings", {"limit": "100"}), ("/api/v1/events", {"limit": "100"}),
                         ("/api/v1/emails", {})):
        status, body = await get(api, key, path, **params)
        assert status in (200, 404) and not holds(person, body), (path, params, body)
    assert await leads_with(api, key, person) == []
    status, recording = await get(api, key, "/api/v1/recordings", call_id=call["id"])
    assert status == 404 or recording["recording_url"] is None, recording
    # The replay of the history to the subscriber carries nothing of them either.
    before = len(receiver.requests)
    status, replayed, _ = await api.request("POST", "/api/v1/events/replay", key=key, json={
        "webhook_id": hook["webhook"]["id"], "since": (datetime.now(UTC) - timedelta(hours=1)).isoformat()})
    assert status == 200, replayed
    await wait_until(lambda: len(receiver.requests) - before, "the replay to arrive",
                     lambda n: n >= replayed["queued"], timeout=20)
    assert not any(holds(person, r["body"].decode()) for r in receiver.requests[before:])
    # Nor the owner's dashboard pages, nor an export of the business.
    dashboard = account["dashboard"]
    for page in ("/dashboard", "/dashboard/calls", f"/dashboard/calls/{call['id']}", "/dashboard/leads",
                 f"/dashboard/leads/{lead['id']}", "/dashboard/messages", "/dashboard/pipeline"):
        status, html, _ = await dashboard.request("GET", page)
        assert status in (200, 404) and not holds(person, html), (page, status)
    export, files = await exported(api, key)
    assert export["records"] > 0 and not holds(person, "".join(files.values()))

    # The simulators' copies: the provider's call is deleted, its texts redacted.
    status, provider_call = await voice.request("GET", f"/call/{at_provider['id']}")
    assert status == 404 or not holds(person, provider_call), provider_call
    assert all(not holds(person, m["body"]) for m in await texts_to(stack, person))

    # Their opt-out holds: neither a text nor an enforced call reaches them.
    status, refused, _ = await send(api, key, agent, person, "Are you still interested?")
    assert status == 400 and refused["error"]["code"] in ("number_on_dnc", "number_opted_out"), refused
    status, refused, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": person, "compliance": "enforce"})
    assert status == 400 and refused["error"]["code"] in ("number_on_dnc", "number_opted_out"), refused

    # Partners heard of it, with the report and nothing of theirs.
    [completed] = (await receiver.wait_for(1, "erasure.completed")).values()
    assert completed["json"]["data"] == {"erasure_id": erasure["id"], "business_id": business, "report": report}
    assert not holds(person, completed["body"].decode())
