"""The rules of a business's availability and its bookings, plain functions with no I/O (the clock is passed in).

Slots: each day's opening windows (weekly hours, wall-clock times in the business's IANA zone) are cut from their
opening into slots of `slot_minutes`, `buffer_minutes` apart; a slot whose end would pass the window's close is not
offered. Slots are wall-clock times: on the day clocks go forward a slot starting in the skipped hour does not exist,
and on the day they go back the repeated hour is offered once (its first pass). A slot lasts `slot_minutes` of real
time. A slot is free when it is in the future, no later than `horizon_days` after the business's today, not on a
blackout date, and no confirmed booking is within `buffer_minutes` of it."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from contracts import bookings as contract
from core.contact import normalize_e164, normalize_email
from core.errors import ServiceError, invalid

Window = tuple[time, time]


@dataclass(frozen=True)
class Availability:
    """A business's availability; `hours` holds each weekday's windows, Monday first (date.weekday())."""

    hours: tuple[tuple[Window, ...], ...]
    slot_minutes: int = contract.DEFAULT_SLOT_MINUTES
    buffer_minutes: int = contract.DEFAULT_BUFFER_MINUTES
    blackout_dates: tuple[date, ...] = ()
    horizon_days: int = contract.DEFAULT_HORIZON_DAYS

    @property
    def slot(self) -> timedelta:
        return timedelta(minutes=self.slot_minutes)

    @property
    def buffer(self) -> timedelta:
        return timedelta(minutes=self.buffer_minutes)

    def to_json(self) -> dict[str, Any]:
        """As stored and shown: {weekly_hours: {"mon": [["09:00", "17:00"]], ...}, slot_minutes, buffer_minutes,
        blackout_dates: ["YYYY-MM-DD"], horizon_days}."""
        return {"weekly_hours": {day: [[_hhmm(a), _hhmm(b)] for a, b in windows]
                                 for day, windows in zip(contract.DAYS, self.hours, strict=True)},
                "slot_minutes": self.slot_minutes, "buffer_minutes": self.buffer_minutes,
                "blackout_dates": [d.isoformat() for d in self.blackout_dates], "horizon_days": self.horizon_days}


@dataclass(frozen=True)
class Slot:
    starts_at: datetime  # aware, UTC
    ends_at: datetime


def _hhmm(t: time) -> str:
    return t.strftime("%H:%M")


def _time(value: Any, where: str) -> time:
    if not isinstance(value, str) or not re.fullmatch(contract.TIME_PATTERN, value):
        raise invalid(f"{where} must be a time HH:MM from 00:00 to 23:59 (got {value!r})")
    return time.fromisoformat(value)


def _bounded(given: Mapping[str, Any], name: str, default: int, bounds: tuple[int, int]) -> int:
    value = given.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise invalid(f"{name} must be a whole number from {bounds[0]} to {bounds[1]}")
    return value


def _windows(day: str, value: Any) -> tuple[Window, ...]:
    if not isinstance(value, list) or len(value) > contract.WINDOWS_PER_DAY_MAX:
        raise invalid(f"weekly_hours.{day} must be a list of at most {contract.WINDOWS_PER_DAY_MAX} "
                      "[opens, closes] pairs")
    windows = []
    for i, pair in enumerate(value):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise invalid(f"weekly_hours.{day}[{i}] must be a pair [opens, closes] such as [\"09:00\", \"17:00\"]")
        opens, closes = _time(pair[0], f"weekly_hours.{day}[{i}][0]"), _time(pair[1], f"weekly_hours.{day}[{i}][1]")
        if opens >= closes:
            raise invalid(f"weekly_hours.{day}[{i}] must open before it closes")
        windows.append((opens, closes))
    windows.sort()
    for (_, closes), (opens, _) in pairwise(windows):
        if opens < closes:
            raise invalid(f"weekly_hours.{day} has overlapping windows")
    return tuple(windows)


def _weekly_hours(value: Any) -> tuple[tuple[Window, ...], ...]:
    if value is None:
        value = contract.DEFAULT_HOURS
    if not isinstance(value, Mapping):
        raise invalid("weekly_hours must be an object by day: mon, tue, wed, thu, fri, sat, sun")
    unknown = sorted(set(value) - set(contract.DAYS))
    if unknown:
        raise invalid(f"weekly_hours has no day {unknown[0]!r}: the days are {', '.join(contract.DAYS)}")
    return tuple(_windows(day, value.get(day, [])) for day in contract.DAYS)  # a day left out is closed


def _blackout_dates(value: Any) -> tuple[date, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > contract.BLACKOUT_DATES_MAX:
        raise invalid(f"blackout_dates must be a list of at most {contract.BLACKOUT_DATES_MAX} dates")
    days = set()
    for item in value:
        days.add(parse_date(item, "blackout_dates"))
    return tuple(sorted(days))


def parse_date(value: Any, field: str) -> date:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise invalid(f"{field} must hold dates YYYY-MM-DD (got {value!r})")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise invalid(f"{field} must hold real dates YYYY-MM-DD (got {value!r})") from None


def availability_of(given: Mapping[str, Any]) -> Availability:
    """A saved availability, from the PUT body or what was stored (Availability.to_json): a field left out takes its
    default; 400 invalid_request naming the first field that is wrong."""
    return Availability(
        hours=_weekly_hours(given.get("weekly_hours")),
        slot_minutes=_bounded(given, "slot_minutes", contract.DEFAULT_SLOT_MINUTES, contract.SLOT_MINUTES),
        buffer_minutes=_bounded(given, "buffer_minutes", contract.DEFAULT_BUFFER_MINUTES, contract.BUFFER_MINUTES),
        blackout_dates=_blackout_dates(given.get("blackout_dates")),
        horizon_days=_bounded(given, "horizon_days", contract.DEFAULT_HORIZON_DAYS, contract.HORIZON_DAYS))


DEFAULT = availability_of({})


# -- slots ------------------------------------------------------------------------------------------------------


def _instant(day: date, at: time, zone: ZoneInfo) -> datetime | None:
    """The instant of a wall-clock time on a day in the zone (the first of a repeated one), or None when the clocks
    skip it."""
    local = datetime.combine(day, at, tzinfo=zone)
    instant = local.astimezone(UTC)
    return instant if instant.astimezone(zone).replace(tzinfo=None) == local.replace(tzinfo=None) else None


def day_slots(availability: Availability, zone: ZoneInfo, day: date) -> list[Slot]:
    """Every slot of the local day by the weekly hours (blackouts, the clock and bookings aside), in order."""
    found = []
    step = availability.slot + availability.buffer
    for opens, closes in availability.hours[day.weekday()]:
        close = datetime.combine(day, closes)
        wall = datetime.combine(day, opens)
        while wall + availability.slot <= close:
            start = _instant(day, wall.time(), zone)
            if start is not None:
                end = start + availability.slot
                if end.astimezone(zone).replace(tzinfo=None) <= close:
                    found.append(Slot(start, end))
            wall += step
    return found


def last_day(availability: Availability, zone: ZoneInfo, now: datetime) -> date:
    """The last local day that may be booked: horizon_days after the business's today."""
    return now.astimezone(zone).date() + timedelta(days=availability.horizon_days)


def clashes(slot: Slot, taken: Iterable[Slot], buffer: timedelta) -> bool:
    """Whether the slot is within `buffer` of a booked one (adjacent slots of one grid are exactly a buffer apart)."""
    return any(slot.starts_at < other.ends_at + buffer and other.starts_at < slot.ends_at + buffer
               for other in taken)


def open_days(availability: Availability, zone: ZoneInfo, first: date, last: date,
              now: datetime) -> tuple[date, date] | None:
    """The part of the local days first..last that may have a bookable slot (from the business's today to the
    horizon's last day), or None when none of them may."""
    first, last = max(first, now.astimezone(zone).date()), min(last, last_day(availability, zone, now))
    return (first, last) if first <= last else None


def free_slots(availability: Availability, zone: ZoneInfo, days: tuple[date, date], now: datetime,
               taken: list[Slot]) -> list[Slot]:
    """The slots of the local days `days` (first, last: open_days') that may be booked now, given the confirmed
    bookings `taken`."""
    found: list[Slot] = []
    day, final = days
    while day <= final:
        if day not in availability.blackout_dates:
            found.extend(s for s in day_slots(availability, zone, day)
                         if s.starts_at > now and not clashes(s, taken, availability.buffer))
        day += timedelta(days=1)
    return found


def slot_at(availability: Availability, zone: ZoneInfo, starts_at: datetime, now: datetime) -> Slot:
    """The bookable slot starting at `starts_at` (the bookings aside), or 400 invalid_request saying why not."""
    if starts_at <= now:
        raise invalid("starts_at is in the past")
    # far beyond it is refused before a local time is computed (near year 9999 there may be none)
    if starts_at - now > timedelta(days=availability.horizon_days + 2) or (
            starts_at.astimezone(zone).date() > last_day(availability, zone, now)):
        raise invalid(f"starts_at is beyond the booking horizon: at most {availability.horizon_days} days ahead")
    local = starts_at.astimezone(zone)
    if local.date() in availability.blackout_dates:
        raise invalid(f"{local.date().isoformat()} is a blackout date: nothing can be booked that day")
    slot = next((s for s in day_slots(availability, zone, local.date()) if s.starts_at == starts_at), None)
    if slot is None:
        raise invalid(f"starts_at {local.isoformat()} is not a slot of the business's availability: outside its "
                      f"hours or not on a slot boundary (slots of {availability.slot_minutes} minutes; see GET "
                      "/api/v1/availability/slots)")
    return slot


def days_asked(on: date | None, first: date | None, last: date | None) -> tuple[date, date]:
    """The local days a slot listing covers: one date, or from..to (both included, at most SLOTS_DAYS_MAX days)."""
    if on is not None:
        if first is not None or last is not None:
            raise invalid("give either date or from and to, not both")
        return on, on
    if first is None or last is None:
        raise invalid("give date, or from and to (YYYY-MM-DD)")
    if last < first:
        raise invalid("to must not be before from")
    if (last - first).days >= contract.SLOTS_DAYS_MAX:
        raise invalid(f"from..to covers at most {contract.SLOTS_DAYS_MAX} days")
    return first, last


def days_span(first: date, last: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The instants from the start of the local day `first` to the start of the day after `last`."""
    return (datetime.combine(first, time(), tzinfo=zone).astimezone(UTC),
            datetime.combine(last + timedelta(days=1), time(), tzinfo=zone).astimezone(UTC))


def local_text(at: datetime, zone: ZoneInfo) -> str:
    """RFC 3339 with the business's offset at that instant, e.g. 2026-03-09T09:00:00-04:00."""
    return at.astimezone(zone).isoformat()


# -- bookings ---------------------------------------------------------------------------------------------------


def booking_values(given: Mapping[str, Any]) -> dict[str, Any]:
    """A new booking's name, phone_number (E.164), email and notes as stored, or 400 naming the field."""
    name = str(given.get("name") or "").strip()
    if not name or len(name) > contract.NAME_MAX:
        raise invalid(f"name is required, at most {contract.NAME_MAX} characters")
    notes = given.get("notes")
    if notes is not None and len(notes) > contract.NOTES_MAX:
        raise invalid(f"notes must be at most {contract.NOTES_MAX} characters")
    email = given.get("email")
    if email is not None and len(email) > contract.EMAIL_MAX:
        raise invalid(f"email must be at most {contract.EMAIL_MAX} characters")
    return {"name": name, "phone_number": normalize_e164(str(given.get("phone_number") or "")),
            "email": normalize_email(email) if email else None, "notes": notes or None}


def reschedulable(status: str) -> None:
    if status != contract.CONFIRMED:
        raise ServiceError("conflict", "a canceled booking cannot be rescheduled: book a new one")
