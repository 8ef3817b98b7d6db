"""/api/v1/availability*, /api/v1/bookings: the availability round trip, free slots in the business's zone, booking
linked to the caller's lead, rescheduling and canceling, bad inputs, the race for one slot (exactly one booking),
the booking events delivered to a webhook subscription, and another business's key seeing and changing none of it.
Dates are taken from the business's today: nothing here depends on the day or hour the test runs."""
import asyncio
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.receiver import Receiver

ZONE = "America/Chicago"
EVERY_DAY = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
PHONE = "+14155550177"


@pytest.fixture
async def receiver():
    r = await Receiver().start()
    yield r
    await r.stop()


async def call(api, account, method, path, status=200, **kwargs):
    got, body, _ = await api.request(method, path, key=account["key"], **kwargs)
    assert got == status, (method, path, body)
    return body


async def open_every_day(api, account, **extra) -> date:
    """The business in Chicago, open 09:00-17:00 every day in hourly slots; the local date two days from now."""
    await call(api, account, "PATCH", "/api/v1/workspaces", json={"id": account["business_id"], "timezone": ZONE})
    await call(api, account, "PUT", "/api/v1/availability", json={"weekly_hours": EVERY_DAY, "slot_minutes": 60,
                                                                  **extra})
    return datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=2)


async def slots(api, account, **params) -> list[dict]:
    return (await call(api, account, "GET", "/api/v1/availability/slots", params=params))["slots"]


async def book(api, account, starts_at: str, status=201, **extra):
    return await call(api, account, "POST", "/api/v1/bookings", status=status, json={
        "starts_at": starts_at, "name": "Ann Lee", "phone_number": PHONE, **extra})


async def test_availability_round_trip(api, account):
    shown = await call(api, account, "GET", "/api/v1/availability")
    assert (shown["saved"], shown["slot_minutes"], shown["buffer_minutes"], shown["updated_at"]) == (False, 30, 0, None)
    assert shown["weekly_hours"]["mon"] == [["09:00", "17:00"]] and shown["weekly_hours"]["sat"] == []
    wanted = {"weekly_hours": {"tue": [["13:00", "17:00"], ["08:00", "12:00"]], "sat": [["10:00", "12:00"]]},
              "slot_minutes": 45, "buffer_minutes": 15, "blackout_dates": ["2030-12-25"], "horizon_days": 90}
    saved = await call(api, account, "PUT", "/api/v1/availability",
                       json={"business_id": account["business_id"], **wanted})
    assert saved["saved"] is True and saved["updated_at"]
    assert saved["weekly_hours"]["tue"] == [["08:00", "12:00"], ["13:00", "17:00"]]
    assert saved["weekly_hours"]["mon"] == []
    assert (saved["slot_minutes"], saved["buffer_minutes"], saved["blackout_dates"], saved["horizon_days"]) == (
        45, 15, ["2030-12-25"], 90)
    assert await call(api, account, "GET", "/api/v1/availability") == saved
    for bad, field in (({"slot_minutes": 241}, "slot_minutes"), ({"weekly_hours": {"mon": [["17:00", "09:00"]]}},
                                                                   "open before it closes"),
                       ({"weekly_hours": {"mon": [["09:00", "12:00"], ["11:00", "13:00"]]}}, "overlapping"),
                       ({"weekly_hours": {"monday": []}}, "weekly_hours"),
                       ({"blackout_dates": ["2030-02-30"]}, "blackout_dates"),
                       ({"blackout_dates": ["2030-01-01"] * 367}, "blackout_dates")):
        body = await call(api, account, "PUT", "/api/v1/availability", status=400, json=bad)
        assert body["error"]["code"] == "invalid_request" and field in body["error"]["message"], body
    assert await call(api, account, "GET", "/api/v1/availability") == saved


async def test_slots_booking_reschedule_and_cancel(api, account):
    day = await open_every_day(api, account)
    free = await slots(api, account, date=day.isoformat())
    assert len(free) == 8
    offset = datetime(day.year, day.month, day.day, 9, tzinfo=ZoneInfo(ZONE)).isoformat()[-6:]
    assert free[0]["starts_at"] == f"{day.isoformat()}T09:00:00{offset}"
    assert free[-1]["ends_at"] == f"{day.isoformat()}T17:00:00{offset}"
    lead = await call(api, account, "POST", "/api/v1/leads", status=201,
                      json={"business_id": account["business_id"], "name": "Ann Lee", "phone": PHONE})

    made = await book(api, account, free[0]["starts_at"], email="Ann@Example.com", notes="a new roof")
    assert (made["status"], made["lead_id"], made["starts_at"], made["ends_at"], made["timezone"]) == (
        "confirmed", lead["id"], free[0]["starts_at"], free[0]["ends_at"], ZONE)
    assert (made["email"], made["notes"], made["call_id"], made["business_id"]) == (
        "ann@example.com", "a new roof", None, account["business_id"])
    assert [s["starts_at"] for s in await slots(api, account, date=day.isoformat())] == [
        s["starts_at"] for s in free[1:]]
    taken = await book(api, account, free[0]["starts_at"], status=409)
    assert taken["error"]["code"] == "conflict"
    # the same instant written in UTC is the same slot
    in_utc = datetime.fromisoformat(free[0]["starts_at"]).astimezone(UTC).isoformat().replace("+00:00", "Z")
    assert (await book(api, account, in_utc, status=409))["error"]["code"] == "conflict"
    assert await call(api, account, "GET", "/api/v1/bookings", params={"id": made["id"]}) == made

    moved = await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"],
                                                                        "starts_at": free[2]["starts_at"]})
    assert (moved["starts_at"], moved["status"], moved["lead_id"]) == (free[2]["starts_at"], "confirmed", lead["id"])
    assert free[0]["starts_at"] in [s["starts_at"] for s in await slots(api, account, date=day.isoformat())]
    other = await book(api, account, free[0]["starts_at"], phone_number="+14155550178")
    assert other["lead_id"] is None
    clash = await call(api, account, "PATCH", "/api/v1/bookings", status=409,
                       json={"id": made["id"], "starts_at": free[0]["starts_at"]})
    assert clash["error"]["code"] == "conflict"

    canceled = await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"], "status": "canceled"})
    assert canceled["status"] == "canceled" and canceled["starts_at"] == free[2]["starts_at"]
    again = await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"], "status": "canceled"})
    assert again == canceled
    assert free[2]["starts_at"] in [s["starts_at"] for s in await slots(api, account, date=day.isoformat())]
    listed = await call(api, account, "GET", "/api/v1/bookings")
    assert [b["id"] for b in listed["bookings"]] == [made["id"], other["id"]]  # the latest starts_at first
    assert listed["has_more"] is False
    confirmed = await call(api, account, "GET", "/api/v1/bookings", params={"status": "confirmed"})
    assert [b["id"] for b in confirmed["bookings"]] == [other["id"]]
    later = await call(api, account, "GET", "/api/v1/bookings", params={"from": free[1]["starts_at"]})
    assert [b["id"] for b in later["bookings"]] == [made["id"]]
    first = await call(api, account, "GET", "/api/v1/bookings", params={"limit": 1})
    rest = await call(api, account, "GET", "/api/v1/bookings", params={"limit": 1, "cursor": first["next_cursor"]})
    assert [b["id"] for b in first["bookings"] + rest["bookings"]] == [made["id"], other["id"]]


async def test_bad_bookings_are_refused_saying_why(api, account):
    day = await open_every_day(api, account)
    blackout = day + timedelta(days=1)
    await call(api, account, "PUT", "/api/v1/availability", json={
        "weekly_hours": EVERY_DAY, "slot_minutes": 60, "blackout_dates": [blackout.isoformat()], "horizon_days": 5})
    zone = ZoneInfo(ZONE)

    def at(on: date, hour: int, minute: int = 0) -> str:
        return datetime(on.year, on.month, on.day, hour, minute, tzinfo=zone).isoformat()

    yesterday = datetime.now(zone).date() - timedelta(days=1)
    for starts_at, why in ((at(yesterday, 10), "in the past"), (at(day + timedelta(days=10), 10), "horizon"),
                           (at(blackout, 10), "blackout date"), (at(day, 10, 30), "not on a slot boundary"),
                           (at(day, 18), "outside its hours")):
        body = await book(api, account, starts_at, status=400)
        assert body["error"]["code"] == "invalid_request" and why in body["error"]["message"], (starts_at, body)
    good = at(day, 10)
    for extra, field in (({"phone_number": "4155550177"}, "phone_number"), ({"name": ""}, "name"),
                         ({"notes": "x" * 1001}, "notes"), ({"email": "not an email"}, "email"),
                         ({"starts_at": "tomorrow"}, "starts_at"), ({"lead_id": "nope"}, "lead_id")):
        body = await call(api, account, "POST", "/api/v1/bookings", status=400,
                          json={"starts_at": good, "name": "Ann Lee", "phone_number": PHONE, **extra})
        assert field in body["error"]["message"], (extra, body)
    missing = await book(api, account, good, status=404, lead_id="00000000-0000-4000-8000-000000000000")
    assert missing["error"]["code"] == "not_found"
    for params in ({"date": day.isoformat(), "from": day.isoformat()}, {},
                   {"from": day.isoformat(), "to": (day + timedelta(days=14)).isoformat()},
                   {"from": day.isoformat(), "to": (day - timedelta(days=1)).isoformat()}):
        body = await call(api, account, "GET", "/api/v1/availability/slots", status=400, params=params)
        assert body["error"]["code"] == "invalid_request", (params, body)
    assert await slots(api, account, date=blackout.isoformat()) == []
    made = await book(api, account, good)
    for change in ({"id": made["id"]}, {"id": made["id"], "status": "canceled", "starts_at": good},
                   {"id": made["id"], "status": "confirmed"}):
        body = await call(api, account, "PATCH", "/api/v1/bookings", status=400, json=change)
        assert body["error"]["code"] == "invalid_request", (change, body)
    await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"], "status": "canceled"})
    body = await call(api, account, "PATCH", "/api/v1/bookings", status=409, json={"id": made["id"],
                                                                                   "starts_at": at(day, 11)})
    assert "canceled" in body["error"]["message"]
    assert (await call(api, account, "GET", "/api/v1/bookings", params={"status": "confirmed"}))["bookings"] == []


async def test_ten_callers_racing_for_one_slot_get_one_booking(api, account):
    day = await open_every_day(api, account)
    slot = (await slots(api, account, date=day.isoformat()))[3]
    replies = await asyncio.gather(*(api.request("POST", "/api/v1/bookings", key=account["key"], json={
        "starts_at": slot["starts_at"], "name": f"Caller {n}", "phone_number": f"+1415555{100 + n:04d}"})
        for n in range(10)))
    statuses = sorted(status for status, _, _ in replies)
    assert statuses == [201] + [409] * 9, [(s, b) for s, b, _ in replies]
    assert all(body["error"]["code"] == "conflict" for status, body, _ in replies if status == 409)
    listed = await call(api, account, "GET", "/api/v1/bookings", params={"status": "confirmed"})
    assert [b["starts_at"] for b in listed["bookings"]] == [slot["starts_at"]]


async def test_booking_events_reach_a_subscription(api, account, receiver):
    day = await open_every_day(api, account)
    await call(api, account, "POST", "/api/v1/webhooks", status=201, json={
        "webhook_url": receiver.url, "events": ["booking.created", "booking.rescheduled", "booking.canceled"]})
    free = await slots(api, account, date=day.isoformat())
    made = await book(api, account, free[0]["starts_at"], notes="gate code 12")
    await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"], "starts_at": free[1]["starts_at"]})
    await call(api, account, "PATCH", "/api/v1/bookings", json={"id": made["id"], "status": "canceled"})
    [created] = (await receiver.wait_for(1, "booking.created")).values()
    [moved] = (await receiver.wait_for(1, "booking.rescheduled")).values()
    [canceled] = (await receiver.wait_for(1, "booking.canceled")).values()
    assert created["json"]["business_id"] == account["business_id"]
    assert created["json"]["data"] == {
        "id": made["id"], "starts_at": free[0]["starts_at"], "ends_at": free[0]["ends_at"], "timezone": ZONE,
        "status": "confirmed", "name": "Ann Lee", "phone_number": PHONE, "email": None, "notes": "gate code 12",
        "lead_id": None, "call_id": None}
    assert (moved["json"]["data"]["starts_at"], moved["json"]["data"]["previous_starts_at"],
            moved["json"]["data"]["previous_ends_at"]) == (free[1]["starts_at"], free[0]["starts_at"],
                                                           free[0]["ends_at"])
    assert (canceled["json"]["data"]["status"], canceled["json"]["data"]["starts_at"]) == (
        "canceled", free[1]["starts_at"])


async def test_another_business_sees_and_changes_none_of_it(api, account, other_key):
    day = await open_every_day(api, account)
    free = await slots(api, account, date=day.isoformat())
    made = await book(api, account, free[0]["starts_at"])
    mine = {"business_id": account["business_id"]}
    for method, path, kwargs, status in (
            ("GET", "/api/v1/availability", {"params": mine}, 403),
            ("PUT", "/api/v1/availability", {"json": {**mine, "slot_minutes": 15}}, 403),
            ("GET", "/api/v1/availability/slots", {"params": {**mine, "date": day.isoformat()}}, 403),
            ("POST", "/api/v1/bookings", {"json": {**mine, "starts_at": free[1]["starts_at"], "name": "Eve",
                                                   "phone_number": PHONE}}, 403),
            ("GET", "/api/v1/bookings", {"params": mine}, 403),
            ("GET", "/api/v1/bookings", {"params": {"id": made["id"]}}, 404),
            ("PATCH", "/api/v1/bookings", {"json": {"id": made["id"], "status": "canceled"}}, 404),
            ("PATCH", "/api/v1/bookings", {"json": {"id": made["id"], "starts_at": free[1]["starts_at"]}}, 404)):
        got, body, _ = await api.request(method, path, key=other_key, **kwargs)
        assert got == status, (method, path, body)
    got, body, _ = await api.request("GET", "/api/v1/bookings", key=other_key)
    assert got == 200 and body["bookings"] == []
    assert await call(api, account, "GET", "/api/v1/bookings", params={"id": made["id"]}) == made
    assert (await call(api, account, "GET", "/api/v1/availability"))["slot_minutes"] == 60
