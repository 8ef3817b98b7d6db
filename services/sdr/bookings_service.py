"""Booking use cases: a business's availability (read, replace), its free slots, and booking, listing, rescheduling
and canceling appointments, through the sdr unit of work (`work.bookings`) with events raised by `work.emit`. The
rules are services.sdr.bookings_domain; the business's time zone is its workspace's (asked of accounts as the
caller, before any transaction). The caller's tenant comes from core.tenant.

Two callers never hold overlapping confirmed bookings of one business: every booking and rescheduling takes the
business's booking lock in the database (`work.bookings.lock`, a transaction-level lock every replica shares)
before it checks the slot against the confirmed bookings and writes, so the check and the write are one step."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from contracts import bookings as contract
from core import tenant
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.uow import UnitOfWork
from services.sdr import bookings_domain as rules
from services.sdr.ports import Accounts, Calls
from services.sdr.records import Booking, SavedAvailability
from services.sdr.repository import SdrUnit
from switchboard.v1 import events_pb2

BookingEvent = events_pb2.BookingCreated | events_pb2.BookingRescheduled | events_pb2.BookingCanceled


@dataclass(frozen=True)
class AvailabilityView:
    business_id: str
    zone: ZoneInfo
    availability: rules.Availability
    saved: SavedAvailability | None  # None while the business saved none: the defaults


@dataclass(frozen=True)
class Slots:
    business_id: str
    zone: ZoneInfo
    slots: list[rules.Slot]


@dataclass(frozen=True)
class BookingView:
    row: Booking
    zone: ZoneInfo


def event_of(kind: type[BookingEvent], view: BookingView, **extra: str) -> BookingEvent:
    """A booking event's payload: the booking as it is, its times in the business's zone."""
    row = view.row
    return kind(id=row.id, starts_at=rules.local_text(row.starts_at, view.zone),
                ends_at=rules.local_text(row.ends_at, view.zone), timezone=view.zone.key, status=row.status,
                name=row.name, phone_number=row.phone_number, email=row.email, notes=row.notes, lead_id=row.lead_id,
                call_id=row.call_id, **extra)


class Bookings:
    def __init__(self, uow: UnitOfWork[SdrUnit], accounts: Accounts, calls: Calls,
                 clock: Callable[[], datetime] = utcnow):
        self.uow = uow
        self.accounts = accounts  # the business's zone, asked as the caller (services.sdr.ports)
        self.calls = calls  # whose call a booking names, asked as the caller
        self.clock = clock

    async def _business(self, business_id: str | None) -> tuple[str, ZoneInfo]:
        """The business asked about (the key's only one when None) and its zone."""
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        return business_id, await self._zone(business_id)

    async def _zone(self, business_id: str) -> ZoneInfo:
        return ZoneInfo(await self.accounts.zone(business_id))

    # -- availability ---------------------------------------------------------------------------------------

    async def availability(self, business_id: str | None) -> AvailabilityView:
        business_id, zone = await self._business(business_id)
        async with self.uow.read() as work:
            saved = await work.bookings.availability(business_id)
        return AvailabilityView(business_id, zone, _rules_of(saved), saved)

    async def save_availability(self, business_id: str | None, given: Mapping[str, Any]) -> AvailabilityView:
        """Replace the business's availability: a field left out takes its default."""
        availability = rules.availability_of(given)
        business_id, zone = await self._business(business_id)
        async with self.uow.transaction() as work:
            saved = await work.bookings.save_availability(business_id, availability.to_json(), self.clock())
        return AvailabilityView(business_id, zone, availability, saved)

    async def slots(self, business_id: str | None, on: str | None, first: str | None, last: str | None) -> Slots:
        """The free slots of one local date or of first..last."""
        days = rules.days_asked(*(rules.parse_date(d, name) if d is not None else None
                                  for d, name in ((on, "date"), (first, "from"), (last, "to"))))
        business_id, zone = await self._business(business_id)
        now = self.clock()
        async with self.uow.read() as work:
            availability = _rules_of(await work.bookings.availability(business_id))
            bookable = rules.open_days(availability, zone, *days, now)
            if bookable is None:
                return Slots(business_id, zone, [])
            taken = await self._taken(work, business_id, zone, bookable, availability)
        return Slots(business_id, zone, rules.free_slots(availability, zone, bookable, now, taken))

    async def _taken(self, work: SdrUnit, business_id: str, zone: ZoneInfo, days: tuple[date, date],
                     availability: rules.Availability) -> list[rules.Slot]:
        since, until = rules.days_span(*days, zone)
        since, until = since - availability.buffer, until + availability.buffer
        return [_slot(b) for b in await work.bookings.confirmed_between(business_id, since, until)]

    # -- bookings -------------------------------------------------------------------------------------------

    async def book(self, business_id: str | None, starts_at: datetime, given: Mapping[str, Any],
                   lead_id: str | None = None, call_id: str | None = None) -> BookingView:
        """Book the free slot starting at `starts_at` for the caller named in `given` (name, phone_number, email,
        notes), linked to the lead named, else to the business's newest lead with that number, and to the call named
        (one of the business's: 404 otherwise)."""
        values = rules.booking_values(given)
        if lead_id is not None:
            require_uuid(lead_id, "lead_id")
        if call_id is not None:
            require_uuid(call_id, "call_id")
        business_id, zone = await self._business(business_id)
        if call_id is not None and await self.calls.call_business(call_id) != business_id:
            raise not_found("call")
        now = self.clock()
        async with self.uow.transaction() as work:
            await work.bookings.lock(business_id)
            availability = _rules_of(await work.bookings.availability(business_id))
            slot = rules.slot_at(availability, zone, starts_at, now)
            await _require_free(work, business_id, slot, availability)
            if lead_id is not None:
                lead = await work.leads.owned((business_id,), lead_id)
                if lead is None:
                    raise not_found("lead")
            else:
                lead = await work.leads.newest_by_phone(business_id, values["phone_number"])
            row = await work.bookings.add({
                "id": new_id(), "business_id": business_id, "starts_at": slot.starts_at, "ends_at": slot.ends_at,
                "status": contract.CONFIRMED, **values, "lead_id": lead.id if lead is not None else None,
                "call_id": call_id, "created_at": now, "updated_at": now})
            view = BookingView(row, zone)
            work.emit(event_of(events_pb2.BookingCreated, view), business_id)
        return view

    async def get(self, booking_id: str) -> BookingView:
        row = await self._found(booking_id)
        return BookingView(row, await self._zone(row.business_id))

    async def list(self, business_id: str | None, since: datetime | None, until: datetime | None,
                   status: str | None, page: Page) -> tuple[Paged, dict[str, ZoneInfo]]:
        """The caller's bookings (of one business when named) starting in [since, until) of the status, latest
        starts_at first; and the zone of each business on the page."""
        who = tenant.require_account()
        business_ids = [tenant.require_business(who, business_id)] if business_id else list(who.business_ids)
        if status is not None and status not in contract.STATUSES:
            raise invalid(f"status must be one of {', '.join(contract.STATUSES)}")
        if since is not None and until is not None and until <= since:
            raise invalid("to must be after from")
        async with self.uow.read() as work:
            paged = await work.bookings.page(business_ids, since, until, status, page)
        businesses = sorted({row.business_id for row in paged.rows})
        zones = await asyncio.gather(*(self._zone(b) for b in businesses))
        return paged, dict(zip(businesses, zones, strict=True))

    async def change(self, booking_id: str, starts_at: datetime | None, status: str | None) -> BookingView:
        """Reschedule to `starts_at` (the checks of a new booking) or cancel (status canceled; again: no change)."""
        if (starts_at is None) == (status is None):
            raise invalid("give starts_at to reschedule or status canceled to cancel, not both")
        if status is not None and status != contract.CANCELED:
            raise invalid("status may only be set to canceled")
        found = await self._found(booking_id)
        zone = await self._zone(found.business_id)
        now = self.clock()
        async with self.uow.transaction() as work:
            await work.bookings.lock(found.business_id)
            row = await work.bookings.owned((found.business_id,), booking_id, lock=True)
            if row is None:
                raise not_found("booking")
            if starts_at is None:
                return await _cancel(work, BookingView(row, zone), now)
            rules.reschedulable(row.status)
            availability = _rules_of(await work.bookings.availability(row.business_id))
            slot = rules.slot_at(availability, zone, starts_at, now)
            if slot.starts_at == row.starts_at:
                return BookingView(row, zone)
            await _require_free(work, row.business_id, slot, availability, but=row.id)
            before = BookingView(row, zone)
            view = BookingView(await work.bookings.change(row.id, {
                "starts_at": slot.starts_at, "ends_at": slot.ends_at, "updated_at": now}), zone)
            work.emit(event_of(events_pb2.BookingRescheduled, view,
                               previous_starts_at=rules.local_text(before.row.starts_at, zone),
                               previous_ends_at=rules.local_text(before.row.ends_at, zone)), row.business_id)
        return view

    async def _found(self, booking_id: str) -> Booking:
        """The caller's booking with this id, or 404."""
        require_uuid(booking_id, "id")
        async with self.uow.read() as work:
            row = await work.bookings.owned(tenant.require_account().business_ids, booking_id)
        if row is None:
            raise not_found("booking")
        return row


async def _cancel(work: SdrUnit, view: BookingView, now: datetime) -> BookingView:
    if view.row.status == contract.CANCELED:
        return view
    canceled = BookingView(await work.bookings.change(view.row.id, {"status": contract.CANCELED,
                                                                    "updated_at": now}), view.zone)
    work.emit(event_of(events_pb2.BookingCanceled, canceled), view.row.business_id)
    return canceled


async def _require_free(work: SdrUnit, business_id: str, slot: rules.Slot, availability: rules.Availability,
                        but: str | None = None) -> None:
    """409 conflict when a confirmed booking of the business (other than `but`) is within the buffer of the slot;
    called under the business's booking lock."""
    taken = await work.bookings.confirmed_between(business_id, slot.starts_at - availability.buffer,
                                                  slot.ends_at + availability.buffer, but)
    if rules.clashes(slot, [_slot(b) for b in taken], availability.buffer):
        raise ServiceError("conflict", "that slot is already booked: pick another free slot "
                                       "(GET /api/v1/availability/slots)")


def _rules_of(saved: SavedAvailability | None) -> rules.Availability:
    """The availability a business saved (checked again: the rules may have tightened since), else the defaults."""
    if saved is None:
        return rules.DEFAULT
    return rules.availability_of({"weekly_hours": saved.weekly_hours, "slot_minutes": saved.slot_minutes,
                                  "buffer_minutes": saved.buffer_minutes, "blackout_dates": saved.blackout_dates,
                                  "horizon_days": saved.horizon_days})


def _slot(booking: Booking) -> rules.Slot:
    return rules.Slot(booking.starts_at, booking.ends_at)
