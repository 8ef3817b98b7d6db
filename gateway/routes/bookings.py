"""Bookings: a business's availability (weekly hours in its time zone, slot length, buffer, blackout dates,
horizon), its free slots, and the appointments booked on them (book, list, reschedule, cancel)."""
from __future__ import annotations

from typing import Any

from contracts import bookings
from gateway.convert import to_json
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import AVAILABILITY_PUT, BOOKING_CHANGE, BOOKING_CREATE, BUSINESS, TIME, UUID
from gateway.timeparse import set_time
from switchboard.v1 import sdr_pb2

SDR = "switchboard.v1.Sdr"
V1 = "/api/v1"
READ, WRITE = "bookings:read", "bookings:write"
ERRORS = ("unauthorized", "forbidden", "bad_request", "invalid_request")
DATE = {"type": "string", "format": "date"}
ZONE = ("Times of day and dates are the business's, in its workspace's timezone (PATCH /api/v1/workspaces); "
        "instants are RFC 3339 with the business's offset then (e.g. 2026-03-09T09:00:00-04:00). ")
SLOTS = ("Slots: each day's windows are cut from their opening into slots of slot_minutes, buffer_minutes apart; a "
         "slot that would end after the window closes is not offered. Slots follow the wall clock: on the day clocks "
         "go forward a slot in the skipped hour does not exist, on the day they go back the repeated hour is offered "
         "once. A slot is free when it starts in the future, on a day no later than horizon_days after the "
         "business's today, not on a blackout date, and no confirmed booking is within buffer_minutes of it. ")
BOOKING = ("Two callers never hold overlapping confirmed bookings of one business: each booking or rescheduling "
           "checks the slot and writes under the business's lock in the database, so of concurrent requests for one "
           "slot exactly one succeeds and the others are 409 conflict. ")


def _business_query(**extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"business_id": BUSINESS, **extra}}


async def get_availability(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.GetAvailabilityRequest(), ctx.query, "business_id")
    return to_json(await ctx.rpc("sdr").GetAvailability(req))


async def put_availability(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.PutAvailabilityRequest(), ctx.body, "business_id", "slot_minutes", "buffer_minutes",
                     "horizon_days")
    if ctx.body.get("weekly_hours") is not None:
        req.weekly_hours.update(ctx.body["weekly_hours"])
    req.blackout_dates.extend(ctx.body.get("blackout_dates") or [])
    return to_json(await ctx.rpc("sdr").PutAvailability(req))


async def list_slots(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(sdr_pb2.ListSlotsRequest(), q, "business_id", "date")
    if "from" in q:
        req.from_date = q["from"]
    if "to" in q:
        req.to_date = q["to"]
    return to_json(await ctx.rpc("sdr").ListSlots(req))


async def create_booking(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.CreateBookingRequest(), ctx.body, "business_id", "name", "phone_number", "email",
                     "notes", "lead_id", "call_id")
    set_time(req.starts_at, ctx.body["starts_at"], "starts_at")
    return to_json(await ctx.rpc("sdr").CreateBooking(req))


async def list_bookings(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(sdr_pb2.ListBookingsRequest(page=ctx.page_request()), q, "business_id", "status")
    for name, field in (("from", "from_time"), ("to", "to_time")):
        if name in q:
            set_time(getattr(req, field), q[name], name)
    reply = await ctx.rpc("sdr").ListBookings(req)
    return ctx.listing("bookings", [to_json(b) for b in reply.bookings], reply.page)


async def get_booking(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("sdr").ListBookings(sdr_pb2.ListBookingsRequest(id=ctx.query["id"]))
    return to_json(reply.bookings[0])


async def change_booking(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.ChangeBookingRequest(id=ctx.body["id"]), ctx.body, "status")
    if ctx.body.get("starts_at") is not None:
        set_time(req.starts_at, ctx.body["starts_at"], "starts_at")
    return to_json(await ctx.rpc("sdr").ChangeBooking(req))


ROUTES = [
    Route("GET", f"{V1}/availability", get_availability, "Read the business's availability", "bookings",
          scope=READ, query=_business_query(), response="Availability", errors=ERRORS,
          rpcs=(f"{SDR}/GetAvailability",),
          description=ZONE + "While the business has saved none (saved false): Monday to Friday 09:00-17:00, "
          f"{bookings.DEFAULT_SLOT_MINUTES}-minute slots, no buffer, no blackout dates, "
          f"{bookings.DEFAULT_HORIZON_DAYS} days ahead."),
    Route("PUT", f"{V1}/availability", put_availability, "Replace the business's availability", "bookings",
          scope=WRITE, body=AVAILABILITY_PUT, response="Availability", errors=ERRORS,
          rpcs=(f"{SDR}/PutAvailability",),
          description=ZONE + "The whole availability: a field left out takes its default. Bookings already made "
          "stay as they are. A window that does not open before it closes, overlapping windows of a day, an unknown "
          "day or a date that is not YYYY-MM-DD is 400 invalid_request naming it. " + SLOTS),
    Route("GET", f"{V1}/availability/slots", list_slots, "The business's free slots", "bookings", scope=READ,
          query=_business_query(date={**DATE, "description": "one local date"},
                                **{"from": {**DATE, "description": "with to: the first local date"},
                                   "to": {**DATE, "description": "with from: the last local date (both included; "
                                          f"at most {bookings.SLOTS_DAYS_MAX} days)"}}),
          response="SlotList", errors=ERRORS, rpcs=(f"{SDR}/ListSlots",),
          description=ZONE + "Give date, or from and to. In order, soonest first. " + SLOTS),
    Route("POST", f"{V1}/bookings", create_booking, "Book a free slot", "bookings", scope=WRITE,
          body=BOOKING_CREATE, response="Booking", status=201, creates=Creates("booking_id"),
          errors=(*ERRORS, "not_found", "conflict"), rpcs=(f"{SDR}/CreateBooking",),
          description=ZONE + "starts_at must be the start of a free slot: a time in the past, beyond the horizon, on "
          "a blackout date, outside the business's hours or not on a slot boundary is 400 invalid_request saying "
          "which; a slot already booked is 409 conflict. The booking is linked to lead_id (404 when it is not a lead "
          "of the business), else to the business's newest lead with phone_number, else to none, and to call_id when "
          "given (404 when it is not a call of the business). Emits booking.created. " + BOOKING),
    Route("GET", f"{V1}/bookings", list_bookings, "List bookings, or read one with ?id=", "bookings", scope=READ,
          query=page_query(bookings.BOOKINGS_PAGE[0], bookings.BOOKINGS_PAGE[1], id=UUID, business_id=BUSINESS,
                           **{"from": {**TIME, "description": "bookings starting at or after this instant (e.g. now, "
                                       "for the upcoming ones)"},
                              "to": {**TIME, "description": "bookings starting before this instant"}},
                           status={"type": "string", "enum": list(bookings.STATUSES)}),
          response=("BookingList", "Booking"), read_one=get_booking, errors=(*ERRORS, "not_found"),
          rpcs=(f"{SDR}/ListBookings",),
          description=ZONE + "Across the key's businesses (or business_id's), the latest starts_at first; pages with "
          "next_cursor. With ?id=: the booking itself; another business's is 404."),
    Route("PATCH", f"{V1}/bookings", change_booking, "Reschedule or cancel a booking", "bookings", scope=WRITE,
          body=BOOKING_CHANGE, response="Booking", errors=(*ERRORS, "not_found", "conflict"),
          rpcs=(f"{SDR}/ChangeBooking",),
          description=ZONE + "{id, starts_at} moves the booking to another free slot with the checks of a new "
          "booking (its own slot does not count as taken; a canceled booking cannot be moved: 409 conflict) and "
          "emits booking.rescheduled; {id, status: canceled} cancels it, which frees its slot, and emits "
          "booking.canceled (canceling a canceled booking changes nothing and answers 200). Give one of the two "
          "(400 otherwise). " + BOOKING),
]
