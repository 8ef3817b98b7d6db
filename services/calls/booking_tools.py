"""The agent's booking tools during a call, check_availability and book_appointment, over the business's availability
and bookings in sdr (services.calls.ports.Bookings), acting for the call's business.

The arguments are the ones published to the model (contracts.agents.BUILTIN_PARAMETERS). Times are the business's,
in its zone: each free slot is told to the model in words it can say and with the start to book it by (RFC 3339 with
the business's offset); a start the model gives without an offset is read in the business's zone. A booking is for
the caller's name and number (services.calls.domain.other_party, or the phone_number they give), linked to the call
and to its lead (sdr links the business's newest lead with the number when the call has none). A time that cannot be booked (past, closed,
taken) is a refusal the model can say, with the nearest free times of the days around it.

An instant (a start with its offset, as check_availability gives it) still to come is booked at once, sdr deciding
whether it is free; the free slots are listed first only for a local time (read in the business's zone, which they
name) or a past one, and after a refusal, to say why and offer the nearest free times instead.

A booking is made once per tool call: the calls service claims each tool call id once (services.calls.tools_service)
and no RPC in between is retried, so a provider's repeated delivery answers the first result and books nothing."""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from core.errors import ServiceError
from core.ids import utcnow
from services.calls.domain import other_party
from services.calls.ports import Bookings, FreeSlots, Leads, NewBooking
from services.calls.records import Call

log = logging.getLogger(__name__)

SLOTS_SAID = 5  # free slots told at most
NEAR_SAID = 3  # free slots offered instead of a time that cannot be booked
DAYS_AHEAD = 7  # the days looked at when no date is given
DAYS_MAX = 14  # sdr's longest listing (contracts.bookings.SLOTS_DAYS_MAX)
# The years a date or start may be in: days and offsets around them stay within datetime's range (no past or
# horizon rule is decided here: sdr's slots do).
YEARS = (2, 9998)
DATE_FORMAT = "Give the date as YYYY-MM-DD, for example 2026-12-05."
START_FORMAT = "Give starts_at as check_availability gave it, for example 2026-12-05T10:00:00-06:00."
UNREACHABLE = ("The calendar cannot be reached right now. Please tell the caller that booking isn't possible at the "
               "moment and offer to take their details instead.")
NO_NUMBER = ("The caller's number is unknown, so nothing can be booked on this call. Please tell the caller "
             "that this can't be done right now.")
NO_NAME = "The booking needs the caller's name. Please ask the caller for their name, then book again."

Outcome = tuple[str, str]  # (ok, failed or refused; the words for the model)


def spoken(at: datetime) -> str:
    """A time as it is said: Saturday 5 December at 10:00 AM."""
    return f"{at:%A} {at.day} {at:%B} at {at.hour % 12 or 12}:{at:%M %p}"


def slot_text(at: datetime) -> str:
    """A free slot for the model: in words, then the start to book it by."""
    return f"{spoken(at)} ({at.isoformat()})"


def _listed(starts: list[datetime], limit: int) -> str:
    shown = ", ".join(slot_text(s) for s in starts[:limit])
    return shown + (f", and {len(starts) - limit} more" if len(starts) > limit else "")


def _date(value: Any) -> date:
    if not isinstance(value, str):
        raise ValueError(DATE_FORMAT)
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(DATE_FORMAT) from None
    if not YEARS[0] <= day.year <= YEARS[1]:
        raise ValueError(DATE_FORMAT)
    return day


def days_asked(arguments: Mapping[str, Any], today: date) -> tuple[date, date]:
    """The local days check_availability looks at: `date`, or `from`..`to` (at most DAYS_MAX days; `to` left out:
    a week), or, with neither, the next DAYS_AHEAD days from `today` (UTC: the day before too, which may still be
    the business's today). ValueError with the words for the model."""
    if arguments.get("date"):
        day = _date(arguments["date"])
        return day, day
    if arguments.get("from") or arguments.get("to"):
        first = _date(arguments.get("from") or arguments.get("to"))
        last = _date(arguments["to"]) if arguments.get("to") else first + timedelta(days=DAYS_AHEAD - 1)
        if last < first:
            raise ValueError("to must not be before from. " + DATE_FORMAT)
        return first, min(last, first + timedelta(days=DAYS_MAX - 1))
    return today - timedelta(days=1), today + timedelta(days=DAYS_AHEAD - 1)


def availability_words(found: FreeSlots, days: tuple[date, date], asked: bool) -> str:
    """What check_availability answers: up to SLOTS_SAID free slots, or that none is free."""
    first, last = days
    when = ("in the coming week" if not asked else f"on {first:%A} {first.day} {first:%B}" if first == last
            else f"from {first:%A} {first.day} {first:%B} to {last:%A} {last.day} {last:%B}")
    if not found.starts:
        return f"No time is free {when}. Please offer the caller another day."
    return (f"Free times {when} (the business's local time, {found.timezone}): "
            f"{_listed(list(found.starts), SLOTS_SAID)}. To book one, call book_appointment with its starts_at "
            "as given in brackets.")


def read_start(value: Any) -> datetime:
    """The start the model gave: ISO 8601 with an offset, or local (naive); ValueError with the words for it."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(START_FORMAT)
    try:
        at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(START_FORMAT) from None
    if not YEARS[0] <= at.year <= YEARS[1]:
        raise ValueError(START_FORMAT)
    return at


def nearest(starts: tuple[datetime, ...], asked: datetime, but: datetime | None = None) -> list[datetime]:
    """The NEAR_SAID free slots nearest to `asked` (other than `but`), in order."""
    others = [s for s in starts if s != but]
    return sorted(sorted(others, key=lambda s: abs(s - asked))[:NEAR_SAID])


def refusal(why: str, near: list[datetime]) -> str:
    offer = (f" The nearest free times are {_listed(near, NEAR_SAID)}: please offer these to the caller." if near
             else " Nothing else is free around then: please ask the caller for another day.")
    return why + offer


def _text(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    return value.strip() or None if isinstance(value, str) else None


class BookingTools:
    def __init__(self, bookings: Bookings, leads: Leads, clock: Callable[[], datetime] = utcnow):
        self.bookings = bookings  # sdr's availability and bookings, as the call's business (services.calls.ports)
        self.leads = leads  # the caller's name when the model gives none
        self.clock = clock

    async def check_availability(self, call: Call, arguments: Mapping[str, Any]) -> Outcome:
        try:
            days = days_asked(arguments, self.clock().date())
        except ValueError as exc:
            return "refused", str(exc)
        try:
            found = await self.bookings.free_slots(call.business_id, *days)
        except ServiceError as exc:
            return _failed(exc)
        asked = bool(arguments.get("date") or arguments.get("from") or arguments.get("to"))
        return "ok", availability_words(found, days, asked)

    async def book_appointment(self, call: Call, arguments: Mapping[str, Any]) -> Outcome:
        phone = _text(arguments, "phone_number") or other_party(call)
        if phone is None:
            return "refused", NO_NUMBER
        try:
            asked = read_start(arguments.get("starts_at"))
        except ValueError as exc:
            return "refused", str(exc)
        name = _text(arguments, "name") or call.name or await self._lead_name(call, phone)
        if name is None:
            return "refused", NO_NAME
        found = None
        if asked.tzinfo is None or asked <= self.clock():  # a local time is read in the zone the free slots name
            checked = await self._free_around(call, asked)
            if not isinstance(checked, FreeSlots):
                return checked
            found = checked
            asked = asked if asked.tzinfo is not None else asked.replace(tzinfo=ZoneInfo(found.timezone))
        try:
            booked = await self.bookings.book(NewBooking(call.business_id, asked, name, phone,
                                                         _text(arguments, "notes"), call.lead_id, call.id))
        except ServiceError as exc:
            if exc.code not in ("conflict", "invalid_request", "not_found"):
                return _failed(exc)
            if found is None:  # an instant is booked at once: the free slots around it say why it was not
                checked = await self._free_around(call, asked)
                if not isinstance(checked, FreeSlots):
                    return checked
                found = checked
            said = spoken(asked.astimezone(ZoneInfo(found.timezone)))
            if exc.code == "conflict":
                return "refused", refusal(f"{said} was just taken.", nearest(found.starts, asked, asked))
            return "refused", f"{said} could not be booked: {exc.message}."
        return "ok", f"Booked {spoken(booked)} for {name}. Please confirm it to the caller."

    async def _free_around(self, call: Call, asked: datetime) -> FreeSlots | Outcome:
        """The free slots around `asked`, or the outcome that refuses the booking: their listing failed, or `asked`
        is not a free slot (unbookable)."""
        try:
            found = await self._around(call, asked)
        except ServiceError as exc:
            return _failed(exc)
        why = unbookable(asked, found, self.clock())
        return found if why is None else ("refused", why)

    async def _around(self, call: Call, asked: datetime) -> FreeSlots:
        """The business's free slots of the days around `asked`, and its zone."""
        day = asked.date()
        return await self.bookings.free_slots(call.business_id, day - timedelta(days=1), day + timedelta(days=1))

    async def _lead_name(self, call: Call, phone: str) -> str | None:
        """The name on the caller's lead (the call's, else the business's newest with the number), if any."""
        try:
            lead = (await self.leads.lead(call.lead_id) if call.lead_id
                    else await self.leads.lead_with_phone(call.business_id, phone))
        except ServiceError:
            return None
        return lead.name if lead is not None else None


def unbookable(asked: datetime, found: FreeSlots, now: datetime) -> str | None:
    """Why `asked` (read in the business's zone when it is local) cannot be booked, with the nearest free times to
    offer instead; None when it is a free slot."""
    starts_at = asked if asked.tzinfo is not None else asked.replace(tzinfo=ZoneInfo(found.timezone))
    said = spoken(starts_at.astimezone(ZoneInfo(found.timezone)))
    if starts_at <= now:
        return refusal(f"{said} has already passed.", nearest(found.starts, starts_at))
    if starts_at not in found.starts:
        return refusal(f"{said} is not free: the business is closed then or it is taken.",
                       nearest(found.starts, starts_at))
    return None


def _failed(exc: ServiceError) -> Outcome:
    """A refusal the model can say for a request sdr finds wrong; otherwise sdr could not answer."""
    if exc.code == "invalid_request":
        return "refused", f"That can't be looked up: {exc.message}."
    log.warning("the bookings could not be reached: %s", exc.code)
    return "failed", UNREACHABLE
