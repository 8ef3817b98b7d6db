"""The agent's booking and lead tools during a call (services/calls/booking_tools.py, lead_tools.py) in the fast tier:
the words the model is told, and the rules, with sdr's booking use cases on the in-memory database behind the calls
service's port (tests.service.fakes.SdrBookings) and the clock fixed; through the tool calls' use case, a repeated
delivery books once. sdr's writing of a caller's lead is tested on the real database
(tests/service/test_caller_lead_service.py); the whole path in tests/e2e/test_booking_tools.py."""
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from core import tenant
from core.errors import ServiceError, invalid
from core.ids import new_id
from core.pagination import Page
from core.tenant import acting_as, acting_for
from services.calls import booking_tools, lead_tools
from services.calls.booking_tools import BookingTools, days_asked, spoken
from services.calls.lead_tools import LeadTools
from services.calls.ports import AgentTool, Lead
from services.calls.repository import calls_units
from services.calls.tools_service import ToolCalls
from services.sdr.bookings_service import Bookings
from services.sdr.service import Leads
from tests.memory.calls import MemoryCalls
from tests.memory.sdr import in_memory
from tests.service.fakes import CallerLeads, CallsNeighbours, SdrBookings
from tests.storage_contracts import call_values
from tests.unit.test_tool_calls import ToolAgents, tool_calls

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)  # Sunday 1 March, 07:00 in New York
CALLER = "+14155550177"
SATURDAY = {"weekly_hours": {"sat": [["10:00", "12:00"]]}, "slot_minutes": 60}


class Sdr:
    """sdr's ports for its booking use cases: every business in New York; the calls of the test by business."""

    def __init__(self):
        self.calls: dict[str, str] = {}

    async def zone(self, business_id):
        return "America/New_York"

    async def call_business(self, call_id):
        business_id = self.calls.get(call_id)
        return business_id if business_id is not None and tenant.current().can_access(business_id) else None


@pytest.fixture
async def call(database, business_id):
    async with calls_units(database, MemoryCalls).transaction() as work:
        return await work.calls.add(**call_values(business_id, provider_call_id=f"pc-{new_id()}", direction="inbound",
                                                  from_number=CALLER, to_number="+14155550100", variables={}))


@pytest.fixture
def sdr_bookings(database, call):
    sdr = Sdr()
    sdr.calls[call.id] = call.business_id
    return Bookings(in_memory(database), sdr, sdr, clock=lambda: NOW)


@pytest.fixture
def leads():
    return CallerLeads()


@pytest.fixture
async def tools(sdr_bookings, leads, call):
    with acting_as(acting_for(call.business_id, "test")):
        await sdr_bookings.save_availability(None, SATURDAY)
        yield BookingTools(SdrBookings(sdr_bookings), leads, clock=lambda: NOW)


async def booked(sdr_bookings):
    listed, _ = await sdr_bookings.list(None, None, None, None, Page(limit=50))
    return listed.rows


def test_a_time_is_said_in_words():
    assert spoken(datetime(2026, 12, 5, 10)) == "Saturday 5 December at 10:00 AM"
    assert spoken(datetime(2026, 12, 5, 12, 30)) == "Saturday 5 December at 12:30 PM"
    assert spoken(datetime(2026, 12, 7, 0, 5)) == "Monday 7 December at 12:05 AM"


def test_the_days_looked_at():
    today = date(2026, 3, 1)
    assert days_asked({"date": "2026-03-07"}, today) == (date(2026, 3, 7), date(2026, 3, 7))
    assert days_asked({"from": "2026-03-02", "to": "2026-03-04"}, today) == (date(2026, 3, 2), date(2026, 3, 4))
    assert days_asked({"from": "2026-03-02"}, today) == (date(2026, 3, 2), date(2026, 3, 8))
    assert days_asked({"from": "2026-03-02", "to": "2026-05-01"}, today) == (date(2026, 3, 2), date(2026, 3, 15))
    assert days_asked({}, today) == (date(2026, 2, 28), date(2026, 3, 7))  # the business's today may be UTC's eve
    for wrong in ({"date": "next Saturday"}, {"date": 7}, {"from": "2026-03-04", "to": "2026-03-02"},
                  {"from": "9999-12-30"}):
        with pytest.raises(ValueError, match="YYYY-MM-DD"):
            days_asked(wrong, today)


async def test_check_availability_says_the_free_slots_or_that_none_is(tools, call):
    outcome, said = await tools.check_availability(call, {"date": "2026-03-07"})
    assert outcome == "ok"
    assert said == ("Free times on Saturday 7 March (the business's local time, America/New_York): Saturday 7 March "
                    "at 10:00 AM (2026-03-07T10:00:00-05:00), Saturday 7 March at 11:00 AM (2026-03-07T11:00:00-05:00). To book "
                    "one, call book_appointment with its starts_at as given in brackets.")
    assert (await tools.check_availability(call, {}))[1].startswith("Free times in the coming week")
    assert await tools.check_availability(call, {"date": "2026-03-06"}) == (
        "ok", "No time is free on Friday 6 March. Please offer the caller another day.")
    assert await tools.check_availability(call, {"date": "Saturday"}) == ("refused", booking_tools.DATE_FORMAT)


async def test_at_most_five_slots_are_said(tools, sdr_bookings, call):
    await sdr_bookings.save_availability(None, {"weekly_hours": {"mon": [["09:00", "17:00"]]}, "slot_minutes": 60})
    _, said = await tools.check_availability(call, {"date": "2026-03-02"})
    assert said.count("Monday 2 March at") == 5 and "T14:00" not in said and ", and 3 more." in said


async def test_a_free_slot_is_booked_for_the_caller_on_the_call_and_the_lead(tools, sdr_bookings, leads, database,
                                                                              call):
    made = await Leads(in_memory(database), None).create(call.business_id, {"name": "Ann Lee", "phone": CALLER})
    leads.leads[(call.business_id, CALLER)] = lead(call.business_id, "Ann Lee")  # as the calls service reads it
    assert await tools.book_appointment(call, {"starts_at": "2026-03-07T10:00", "notes": "leaking tap"}) == (
        "ok", "Booked Saturday 7 March at 10:00 AM for Ann Lee. Please confirm it to the caller.")  # the lead's name
    [row] = await booked(sdr_bookings)
    assert (row.starts_at, row.name, row.phone_number, row.notes, row.call_id, row.lead_id) == (
        datetime(2026, 3, 7, 15, tzinfo=UTC), "Ann Lee", CALLER, "leaking tap", call.id, made.id)
    # an offset is an instant: 16:00 UTC is 11:00 in New York
    assert (await tools.book_appointment(call, {"starts_at": "2026-03-07T16:00:00Z", "name": "Bo"}))[0] == "ok"
    outcome, said = await tools.book_appointment(call, {"starts_at": "2026-03-07T10:00", "name": "Cy"})
    assert outcome == "refused" and said == (
        "Saturday 7 March at 10:00 AM is not free: the business is closed then or it is taken. Nothing else is free "
        "around then: please ask the caller for another day.")
    assert len(await booked(sdr_bookings)) == 2


async def test_a_time_past_closed_or_unreadable_is_refused_with_the_nearest_free_times(tools, sdr_bookings, call):
    outcome, said = await tools.book_appointment(call, {"starts_at": "2026-03-07T09:00", "name": "Ann"})
    assert outcome == "refused" and said == (
        "Saturday 7 March at 9:00 AM is not free: the business is closed then or it is taken. The nearest free times "
        "are Saturday 7 March at 10:00 AM (2026-03-07T10:00:00-05:00), Saturday 7 March at 11:00 AM (2026-03-07T11:00:00-05:00): "
        "please offer these to the caller.")
    assert await tools.book_appointment(call, {"starts_at": "2026-02-28T10:00", "name": "Ann"}) == (
        "refused", "Saturday 28 February at 10:00 AM has already passed. Nothing else is free around then: please "
                   "ask the caller for another day.")
    for unreadable in ("Saturday at ten", "9999-12-31T23:00:00+09:00", "0001-01-01T00:00"):
        assert await tools.book_appointment(call, {"starts_at": unreadable, "name": "Ann"}) == (
            "refused", booking_tools.START_FORMAT)
    assert await tools.book_appointment(call, {"starts_at": "2026-03-07T10:00"}) == ("refused", booking_tools.NO_NAME)
    assert await booked(sdr_bookings) == []


async def test_a_slot_taken_meanwhile_is_refused_with_the_others(sdr_bookings, leads, call):
    class Stale(SdrBookings):
        """The slots as listed just before another caller takes 10:00."""

        async def free_slots(self, business_id, first, last):
            found = await super().free_slots(business_id, first, last)
            await sdr_bookings.book(None, datetime(2026, 3, 7, 15, tzinfo=UTC), {"name": "Eve", "phone_number": CALLER})
            return found

    with acting_as(acting_for(call.business_id, "test")):
        await sdr_bookings.save_availability(None, SATURDAY)
        tools = BookingTools(Stale(sdr_bookings), leads, clock=lambda: NOW)
        assert await tools.book_appointment(call, {"starts_at": "2026-03-07T10:00", "name": "Ann"}) == (
            "refused", "Saturday 7 March at 10:00 AM was just taken. The nearest free times are Saturday 7 March at "
                       "11:00 AM (2026-03-07T11:00:00-05:00): please offer these to the caller.")


async def test_an_instant_is_booked_at_once_and_the_free_slots_say_why_one_cannot_be(sdr_bookings, leads, call):
    class Counted(SdrBookings):
        listed = 0

        async def free_slots(self, business_id, first, last):
            self.listed += 1
            return await super().free_slots(business_id, first, last)

    with acting_as(acting_for(call.business_id, "test")):
        await sdr_bookings.save_availability(None, SATURDAY)
        port = Counted(sdr_bookings)
        tools = BookingTools(port, leads, clock=lambda: NOW)
        assert (await tools.book_appointment(call, {"starts_at": "2026-03-07T10:00:00-05:00", "name": "Ann"}))[0] == "ok"
        assert port.listed == 0  # sdr decides whether it is free: nothing is listed first
        assert await tools.book_appointment(call, {"starts_at": "2026-03-07T15:00:00Z", "name": "Bo"}) == (
            "refused", "Saturday 7 March at 10:00 AM is not free: the business is closed then or it is taken. The "
                       "nearest free times are Saturday 7 March at 11:00 AM (2026-03-07T11:00:00-05:00): please offer "
                       "these to the caller.")
        assert port.listed == 1
        assert len(await booked(sdr_bookings)) == 1


async def test_a_caller_who_withheld_their_number_cannot_book(tools, call):
    withheld = replace(call, from_number=None)
    assert await tools.book_appointment(withheld, {"starts_at": "2026-03-07T10:00", "name": "Ann"}) == (
        "refused", booking_tools.NO_NUMBER)


async def test_tool_calls_run_the_booking_tools_and_a_repeated_delivery_books_once(database, sdr_bookings, leads,
                                                                                    call):
    agents = ToolAgents(call.business_id, call.agent_id, (AgentTool("check_availability", "check_availability"),
                                                          AgentTool("book_appointment", "book_appointment"),
                                                          AgentTool("update_lead", "update_lead")))
    with acting_as(acting_for(call.business_id, "test")):
        await sdr_bookings.save_availability(None, SATURDAY)
    answering = ToolCalls(calls_units(database, MemoryCalls), agents, texts=CallsNeighbours(), wait_seconds=1,
                          poll_seconds=0.01,
                          bookings=BookingTools(SdrBookings(sdr_bookings), leads, clock=lambda: NOW),
                          leads=LeadTools(leads))
    message = tool_calls(call.provider_call_id, call.id, ("tc-1", "check_availability", {"date": "2026-03-07"}),
                         ("tc-2", "book_appointment", {"starts_at": "2026-03-07T11:00", "name": "Ann"}),
                         ("tc-3", "update_lead", {"interest": "a new boiler"}))
    first = await answering.answer(message)
    assert await answering.answer(message) == first
    assert "Saturday 7 March at 11:00 AM (2026-03-07T11:00:00-05:00)" in first[0].result
    assert first[1].result == "Booked Saturday 7 March at 11:00 AM for Ann. Please confirm it to the caller."
    assert first[2].result == "Recorded on the caller's lead: interest."
    with acting_as(acting_for(call.business_id, "test")):
        assert len(await booked(sdr_bookings)) == 1
    assert len(leads.said) == 1


# -- update_lead ------------------------------------------------------------------------------------------------


def lead(business_id: str, name: str = "Ann") -> Lead:
    return Lead(new_id(), business_id, name, name.split()[0], 40, "new", None, 0, "inbound_call", NOW)


async def test_update_lead_records_what_the_caller_said_on_their_lead(call):
    leads = CallerLeads({(call.business_id, CALLER): lead(call.business_id)})
    outcome, said = await LeadTools(leads).update_lead(call, {
        "name": " Ann Lee ", "email": "ann@example.com", "interest": "a quote for a roof", "status": "Qualified",
        "phone": "+14155550000"})  # not a field the tool writes
    assert (outcome, said) == ("ok", "Recorded on the caller's lead: name, email, status, interest.")
    [asked] = leads.said
    assert (asked.business_id, asked.phone, asked.call_id, asked.direction, asked.lead_id) == (
        call.business_id, CALLER, call.id, "inbound", None)
    assert (dict(asked.fields), asked.intent) == (
        {"name": "Ann Lee", "email": "ann@example.com", "status": "qualified"}, "a quote for a roof")
    assert lead_tools.recorded_words([]) == "The caller's lead already has these details: nothing new was recorded."


async def test_update_lead_refuses_what_it_cannot_record(call):
    leads = CallerLeads()
    tools = LeadTools(leads)
    assert await tools.update_lead(call, {}) == ("refused", lead_tools.NOTHING)
    outcome, said = await tools.update_lead(call, {"status": "spam"})
    assert outcome == "refused" and said.startswith("The status must be one of new, contacted, qualified")
    withheld = replace(call, from_number=None)
    assert await tools.update_lead(withheld, {"name": "Ann"}) == ("refused", lead_tools.NO_NUMBER)
    assert leads.said == []
    refusing = LeadTools(CallerLeads(error=invalid("email is invalid: no @")))
    assert await refusing.update_lead(call, {"email": "ann"}) == (
        "refused", "That could not be recorded: email is invalid: no @. Please check it with the caller.")
    down = LeadTools(CallerLeads(error=ServiceError("unavailable", "sdr is down")))
    assert await down.update_lead(call, {"email": "ann@example.com"}) == ("failed", lead_tools.UNREACHABLE)
