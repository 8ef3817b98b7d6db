"""The bookings' RPCs of the Sdr gRPC service: requests into services.sdr.bookings_service, records into replies."""
from __future__ import annotations

from google.protobuf import json_format

from contracts.bookings import BOOKINGS_PAGE
from core.errors import invalid
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page, opt_datetime
from services.sdr import bookings_domain as rules
from services.sdr.bookings_service import AvailabilityView, Bookings, BookingView
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc

BOOKING_TEXT = ("email", "notes", "lead_id", "call_id")


def availability_message(view: AvailabilityView) -> sdr_pb2.Availability:
    shown = view.availability.to_json()
    msg = sdr_pb2.Availability(business_id=view.business_id, timezone=view.zone.key,
                               weekly_hours=struct(shown["weekly_hours"]), slot_minutes=shown["slot_minutes"],
                               buffer_minutes=shown["buffer_minutes"], blackout_dates=shown["blackout_dates"],
                               horizon_days=shown["horizon_days"], saved=view.saved is not None)
    set_timestamp(msg, "updated_at", view.saved.updated_at if view.saved is not None else None)
    return msg


def booking_message(view: BookingView) -> sdr_pb2.Booking:
    row, zone = view.row, view.zone
    msg = sdr_pb2.Booking(id=row.id, business_id=row.business_id, starts_at=rules.local_text(row.starts_at, zone),
                          ends_at=rules.local_text(row.ends_at, zone), timezone=zone.key, status=row.status,
                          name=row.name, phone_number=row.phone_number)
    for name in BOOKING_TEXT:
        if getattr(row, name) is not None:
            setattr(msg, name, str(getattr(row, name)))
    set_timestamp(msg, "created_at", row.created_at)
    set_timestamp(msg, "updated_at", row.updated_at)
    return msg


class BookingsServicer(sdr_pb2_grpc.SdrServicer):
    """A business's availability, its free slots and its bookings, over `bookings`."""

    def __init__(self, bookings: Bookings):
        self.bookings = bookings

    async def GetAvailability(self, request: sdr_pb2.GetAvailabilityRequest,
                              context: Context) -> sdr_pb2.Availability:
        return availability_message(await self.bookings.availability(optional(request, "business_id")))

    async def PutAvailability(self, request: sdr_pb2.PutAvailabilityRequest,
                              context: Context) -> sdr_pb2.Availability:
        given = {name: optional(request, name) for name in ("slot_minutes", "buffer_minutes", "horizon_days")}
        if request.HasField("weekly_hours"):
            given["weekly_hours"] = json_format.MessageToDict(request.weekly_hours)
        given["blackout_dates"] = list(request.blackout_dates)
        return availability_message(await self.bookings.save_availability(optional(request, "business_id"), given))

    async def ListSlots(self, request: sdr_pb2.ListSlotsRequest, context: Context) -> sdr_pb2.SlotList:
        found = await self.bookings.slots(optional(request, "business_id"), optional(request, "date"),
                                          optional(request, "from_date"), optional(request, "to_date"))
        return sdr_pb2.SlotList(business_id=found.business_id, timezone=found.zone.key, slots=[
            sdr_pb2.Slot(starts_at=rules.local_text(s.starts_at, found.zone),
                         ends_at=rules.local_text(s.ends_at, found.zone)) for s in found.slots])

    async def CreateBooking(self, request: sdr_pb2.CreateBookingRequest, context: Context) -> sdr_pb2.Booking:
        starts_at = opt_datetime(request, "starts_at")
        if starts_at is None:
            raise invalid("starts_at is required")
        given = {"name": request.name, "phone_number": request.phone_number, "email": optional(request, "email"),
                 "notes": optional(request, "notes")}
        return booking_message(await self.bookings.book(optional(request, "business_id"), starts_at, given,
                                                        optional(request, "lead_id"), optional(request, "call_id")))

    async def ListBookings(self, request: sdr_pb2.ListBookingsRequest,
                           context: Context) -> sdr_pb2.ListBookingsReply:
        if request.HasField("id"):
            return sdr_pb2.ListBookingsReply(bookings=[booking_message(await self.bookings.get(request.id))])
        paged, zones = await self.bookings.list(optional(request, "business_id"), opt_datetime(request, "from_time"),
                                                opt_datetime(request, "to_time"), optional(request, "status"),
                                                Page.of(request.page, *BOOKINGS_PAGE))
        return sdr_pb2.ListBookingsReply(
            bookings=[booking_message(BookingView(row, zones[row.business_id])) for row in paged.rows],
            page=paged.info())

    async def ChangeBooking(self, request: sdr_pb2.ChangeBookingRequest, context: Context) -> sdr_pb2.Booking:
        return booking_message(await self.bookings.change(request.id, opt_datetime(request, "starts_at"),
                                                          optional(request, "status")))
