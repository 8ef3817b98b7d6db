"""The booking use cases (services/sdr/bookings_service.py) in the fast tier, on the in-memory database
(tests/memory) with the business's zone from an in-memory port and the clock fixed: availability saved and read,
free slots, booking linked to its lead, rescheduling, canceling, and their events. The booking lock and the race
are the database's: tests/e2e/test_bookings.py."""
from datetime import UTC, datetime

import pytest

from core import tenant
from core.ids import new_id
from core.pagination import Page
from core.tenant import Tenant, acting_as
from services.sdr.bookings_service import Bookings
from services.sdr.service import Leads
from tests.memory.sdr import in_memory
from tests.use_cases import refused

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
MONDAY_NINE = datetime(2026, 3, 9, 13, tzinfo=UTC)  # 09:00 in New York (EDT)
PHONE = "+14155550123"
PAGE = Page(limit=50)


class Zones:
    """The accounts port's time zones: every business of the test in New York; and the calls port's calls (by id,
    their business), seen by their business alone."""

    def __init__(self, calls: dict[str, str] | None = None):
        self.calls = calls or {}

    async def zone(self, business_id):
        return "America/New_York"

    async def call_business(self, call_id):
        business_id = self.calls.get(call_id)
        return business_id if business_id is not None and tenant.current().can_access(business_id) else None


CALL_ID = new_id()


@pytest.fixture
def bookings(database, business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))):
        zones = Zones({CALL_ID: business_id})
        yield Bookings(in_memory(database), zones, zones, clock=lambda: NOW)


def events(database, type_):
    return [e for e in database.events if e["type"] == type_]


async def test_the_defaults_until_an_availability_is_saved(bookings, business_id):
    shown = await bookings.availability(None)
    assert (shown.business_id, shown.saved, shown.zone.key) == (business_id, None, "America/New_York")
    saved = await bookings.save_availability(None, {"weekly_hours": {"sat": [["10:00", "12:00"]]}, "slot_minutes": 60})
    assert saved.saved is not None and saved.saved.updated_at == NOW
    again = await bookings.availability(business_id)
    assert again.availability == saved.availability and again.availability.to_json()["weekly_hours"]["mon"] == []
    slots = await bookings.slots(None, "2026-03-07", None, None)
    assert [s.starts_at for s in slots.slots] == [datetime(2026, 3, 7, 15, tzinfo=UTC),
                                                 datetime(2026, 3, 7, 16, tzinfo=UTC)]
    await refused(bookings.save_availability(None, {"slot_minutes": 1}), "invalid_request", "slot_minutes")
    await refused(bookings.availability(new_id()), "forbidden")


async def test_a_booking_takes_its_slot_and_is_linked_to_the_callers_newest_lead(bookings, database, business_id):
    lead = await Leads(in_memory(database), None).create(business_id, {"name": "Ann", "phone": PHONE})
    made = await bookings.book(None, MONDAY_NINE, {"name": "Ann", "phone_number": PHONE, "notes": "roof"})
    row = made.row
    assert (row.status, row.lead_id, row.ends_at, row.notes, row.call_id) == (
        "confirmed", lead.id, datetime(2026, 3, 9, 13, 30, tzinfo=UTC), "roof", None)
    [created] = events(database, "booking.created")
    assert created["business_id"] == business_id and created["data"]["starts_at"] == "2026-03-09T09:00:00-04:00"
    assert created["data"]["lead_id"] == lead.id and created["data"]["timezone"] == "America/New_York"
    free = await bookings.slots(None, "2026-03-09", None, None)
    assert MONDAY_NINE not in [s.starts_at for s in free.slots] and len(free.slots) == 15
    await refused(bookings.book(None, MONDAY_NINE, {"name": "Bo", "phone_number": "+14155550124"}), "conflict")
    stranger = await bookings.book(None, datetime(2026, 3, 9, 14, tzinfo=UTC),
                                   {"name": "Cy", "phone_number": "+14155550199"}, call_id=CALL_ID)
    assert stranger.row.lead_id is None and stranger.row.call_id == CALL_ID
    # a call that is not one of the business's (another's, or none) is not found, and books nothing
    await refused(bookings.book(None, datetime(2026, 3, 9, 15, tzinfo=UTC), {"name": "Di", "phone_number": PHONE},
                                call_id=new_id()), "not_found", "call")
    await refused(bookings.book(None, datetime(2026, 3, 9, 15, tzinfo=UTC), {"name": "Di", "phone_number": PHONE},
                                lead_id=new_id()), "not_found", "lead")
    assert len(events(database, "booking.created")) == 2


async def test_bad_times_are_refused_and_book_nothing(bookings, database):
    await bookings.save_availability(None, {"blackout_dates": ["2026-03-10"], "horizon_days": 20})
    for starts_at, why in ((datetime(2026, 2, 27, 14, tzinfo=UTC), "in the past"),
                           (datetime(2026, 3, 30, 13, tzinfo=UTC), "horizon"),
                           (datetime(2026, 3, 10, 13, tzinfo=UTC), "blackout"),
                           (datetime(2026, 3, 9, 13, 5, tzinfo=UTC), "not a slot")):
        await refused(bookings.book(None, starts_at, {"name": "Ann", "phone_number": PHONE}), "invalid_request", why)
    assert database.tables.get("sdr.bookings", {}) == {} and events(database, "booking.created") == []


async def test_rescheduling_and_canceling(bookings, database):
    made = (await bookings.book(None, MONDAY_NINE, {"name": "Ann", "phone_number": PHONE})).row
    other = (await bookings.book(None, datetime(2026, 3, 9, 14, tzinfo=UTC), {"name": "Bo", "phone_number": PHONE})).row
    await refused(bookings.change(made.id, other.starts_at, None), "conflict", "already booked")
    await refused(bookings.change(made.id, None, None), "invalid_request", "give starts_at")
    await refused(bookings.change(made.id, None, "confirmed"), "invalid_request", "only be set to canceled")
    await refused(bookings.change(new_id(), None, "canceled"), "not_found")
    same = await bookings.change(made.id, MONDAY_NINE, None)  # its own slot: nothing changes
    assert same.row == made and events(database, "booking.rescheduled") == []
    moved = await bookings.change(made.id, datetime(2026, 3, 9, 15, tzinfo=UTC), None)
    assert moved.row.starts_at == datetime(2026, 3, 9, 15, tzinfo=UTC)
    [rescheduled] = events(database, "booking.rescheduled")
    assert (rescheduled["data"]["starts_at"], rescheduled["data"]["previous_starts_at"]) == (
        "2026-03-09T11:00:00-04:00", "2026-03-09T09:00:00-04:00")
    canceled = await bookings.change(other.id, None, "canceled")
    again = await bookings.change(other.id, None, "canceled")
    assert canceled.row.status == again.row.status == "canceled" and len(events(database, "booking.canceled")) == 1
    await refused(bookings.change(other.id, MONDAY_NINE, None), "conflict", "canceled booking")
    # the canceled booking's slot is free again
    assert (await bookings.book(None, other.starts_at, {"name": "Cy", "phone_number": PHONE})).row.status == "confirmed"
    listed, zones = await bookings.list(None, None, None, "confirmed", PAGE)
    assert [b.starts_at.hour for b in listed.rows] == [15, 14] and set(zones) == {made.business_id}


async def test_another_business_sees_and_changes_none_of_it(bookings, database, business_id):
    made = (await bookings.book(None, MONDAY_NINE, {"name": "Ann", "phone_number": PHONE})).row
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        other = Bookings(in_memory(database), Zones(), Zones(), clock=lambda: NOW)
        await refused(other.get(made.id), "not_found")
        await refused(other.change(made.id, None, "canceled"), "not_found")
        assert (await other.list(None, None, None, None, PAGE))[0].rows == []
        await refused(other.list(business_id, None, None, None, PAGE), "forbidden")
        await refused(other.book(business_id, MONDAY_NINE, {"name": "Eve", "phone_number": PHONE}), "forbidden")
    assert (await bookings.get(made.id)).row == made
