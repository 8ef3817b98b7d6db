"""The availability and booking rules (services/sdr/bookings_domain.py): slots on the business's wall clock through
the DST changes of a US zone, the buffer, blackout dates, the horizon, slot boundaries and the checks of what is
saved. The clock is always passed in: nothing here depends on today."""
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.errors import ServiceError
from services.sdr import bookings_domain as rules
from services.sdr.bookings_domain import Slot

NEW_YORK = ZoneInfo("America/New_York")
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)  # a Sunday; DST starts 2026-03-08 and ends 2026-11-01 in New York
MONDAY = date(2026, 3, 9)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def starts(slots: list[Slot]) -> list[str]:
    return [s.starts_at.astimezone(NEW_YORK).strftime("%H:%M") for s in slots]


def availability(**given) -> rules.Availability:
    return rules.availability_of(given)


def refused(message: str):
    return pytest.raises(ServiceError, match=message)


def test_the_defaults_are_weekdays_nine_to_five_in_half_hours():
    slots = rules.day_slots(rules.DEFAULT, NEW_YORK, MONDAY)
    assert len(slots) == 16 and starts(slots)[0] == "09:00" and starts(slots)[-1] == "16:30"
    assert all(s.ends_at - s.starts_at == timedelta(minutes=30) for s in slots)
    assert rules.day_slots(rules.DEFAULT, NEW_YORK, date(2026, 3, 7)) == []  # a Saturday
    assert rules.DEFAULT.to_json()["weekly_hours"]["sat"] == [] and rules.DEFAULT.slot_minutes == 30
    assert rules.availability_of(rules.DEFAULT.to_json()) == rules.DEFAULT


def test_slots_keep_the_wall_clock_across_the_spring_change():
    # 09:00 in New York is 14:00Z in EST (Friday before the change) and 13:00Z in EDT (Monday after).
    assert rules.day_slots(rules.DEFAULT, NEW_YORK, date(2026, 3, 6))[0].starts_at == utc(2026, 3, 6, 14)
    assert rules.day_slots(rules.DEFAULT, NEW_YORK, MONDAY)[0].starts_at == utc(2026, 3, 9, 13)
    # On the day itself 02:00-03:00 does not exist: no slot starts in it, and each slot lasts an hour of real time.
    night = availability(weekly_hours={"sun": [["00:00", "04:00"]]}, slot_minutes=60)
    slots = rules.day_slots(night, NEW_YORK, date(2026, 3, 8))
    assert starts(slots) == ["00:00", "01:00", "03:00"]
    assert [s.starts_at for s in slots] == [utc(2026, 3, 8, 5), utc(2026, 3, 8, 6), utc(2026, 3, 8, 7)]
    assert rules.local_text(slots[2].starts_at, NEW_YORK) == "2026-03-08T03:00:00-04:00"
    assert rules.local_text(slots[0].starts_at, NEW_YORK) == "2026-03-08T00:00:00-05:00"


def test_the_repeated_hour_of_the_autumn_change_is_offered_once():
    night = availability(weekly_hours={"sun": [["00:00", "04:00"]]}, slot_minutes=60)
    slots = rules.day_slots(night, NEW_YORK, date(2026, 11, 1))
    assert [s.starts_at for s in slots] == [utc(2026, 11, 1, 4), utc(2026, 11, 1, 5), utc(2026, 11, 1, 7),
                                            utc(2026, 11, 1, 8)]
    assert [rules.local_text(s.starts_at, NEW_YORK)[11:] for s in slots] == [
        "00:00:00-04:00", "01:00:00-04:00", "02:00:00-05:00", "03:00:00-05:00"]


def test_the_buffer_spaces_slots_and_a_slot_must_end_by_the_close():
    spaced = availability(weekly_hours={"mon": [["09:00", "11:00"], ["13:00", "13:50"]]}, slot_minutes=30,
                          buffer_minutes=15)
    assert starts(rules.day_slots(spaced, NEW_YORK, MONDAY)) == ["09:00", "09:45", "10:30", "13:00"]


def test_a_booking_takes_its_slot_and_its_buffer_but_not_the_next_slot_of_the_grid():
    spaced = availability(weekly_hours={"mon": [["09:00", "11:00"]]}, slot_minutes=30, buffer_minutes=15)
    [first, second, third] = rules.day_slots(spaced, NEW_YORK, MONDAY)
    assert starts(rules.free_slots(spaced, NEW_YORK, (MONDAY, MONDAY), NOW, [second])) == ["09:00", "10:30"]
    assert not rules.clashes(first, [second], spaced.buffer) and rules.clashes(second, [second], spaced.buffer)
    # a booking off the grid (an older availability's) still blocks what it overlaps, with the buffer around it
    odd = Slot(first.starts_at + timedelta(minutes=40), first.starts_at + timedelta(minutes=50))
    assert starts(rules.free_slots(spaced, NEW_YORK, (MONDAY, MONDAY), NOW, [odd])) == ["10:30"]


def test_free_slots_leave_out_the_past_blackout_dates_and_what_is_past_the_horizon():
    closed = availability(blackout_dates=["2026-03-10"], horizon_days=10)
    now = datetime.combine(MONDAY, datetime.min.time(), tzinfo=NEW_YORK).replace(hour=12, minute=10)
    days = rules.open_days(closed, NEW_YORK, date(2026, 3, 1), date(2026, 3, 31), now)
    assert days == (MONDAY, date(2026, 3, 19))  # from the business's today to the horizon's last day
    free = rules.free_slots(closed, NEW_YORK, days, now, [])
    assert sorted({s.starts_at.astimezone(NEW_YORK).date() for s in free}) == [
        MONDAY, date(2026, 3, 11), date(2026, 3, 12), date(2026, 3, 13), date(2026, 3, 16), date(2026, 3, 17),
        date(2026, 3, 18), date(2026, 3, 19)]  # the 10th blacked out, 19th the last
    assert starts(free)[:2] == ["12:30", "13:00"]  # 12:00 has started


def test_no_day_is_open_before_today_or_after_the_horizon_even_at_the_ends_of_the_calendar():
    assert rules.open_days(rules.DEFAULT, NEW_YORK, date(1, 1, 1), date(2026, 2, 28), NOW) is None
    assert rules.open_days(rules.DEFAULT, NEW_YORK, date(2026, 5, 1), date(9999, 12, 31), NOW) is None
    tokyo = ZoneInfo("Asia/Tokyo")
    with refused("beyond the booking horizon"):
        rules.slot_at(rules.DEFAULT, tokyo, datetime(9999, 12, 31, 23, 30, tzinfo=UTC), NOW)


def test_a_booking_time_must_be_a_future_slot_within_the_horizon_and_off_the_blackouts():
    saved = availability(blackout_dates=["2026-03-10"], horizon_days=30)
    assert rules.slot_at(saved, NEW_YORK, utc(2026, 3, 9, 13), NOW) == Slot(utc(2026, 3, 9, 13),
                                                                           utc(2026, 3, 9, 13, 30))
    assert rules.slot_at(saved, NEW_YORK, utc(2026, 3, 9, 20, 30), NOW).ends_at == utc(2026, 3, 9, 21)  # 16:30
    for starts_at, why in ((utc(2026, 2, 27, 14), "in the past"), (NOW, "in the past"),
                           (utc(2026, 4, 1, 13), "beyond the booking horizon"),
                           (utc(2026, 3, 10, 13), "2026-03-10 is a blackout date"),
                           (utc(2026, 3, 9, 13, 10), "not on a slot boundary"),
                           (utc(2026, 3, 9, 21), "outside its hours"),  # 17:00: the close
                           (utc(2026, 3, 9, 12, 30), "outside its hours"),  # 08:30
                           (utc(2026, 3, 7, 14), "not a slot")):  # a Saturday
        with refused(why):
            rules.slot_at(saved, NEW_YORK, starts_at, NOW)
    # the horizon counts the business's days: 30 days after its today (March 1st there) is March 31st
    assert rules.last_day(saved, NEW_YORK, NOW) == date(2026, 3, 31)
    assert rules.slot_at(saved, NEW_YORK, utc(2026, 3, 31, 13), NOW).starts_at == utc(2026, 3, 31, 13)


@pytest.mark.parametrize(("given", "why"), [
    ({"weekly_hours": {"monday": []}}, "no day 'monday'"),
    ({"weekly_hours": {"mon": [["9:00", "17:00"]]}}, r"weekly_hours.mon\[0\]\[0\] must be a time HH:MM"),
    ({"weekly_hours": {"mon": [["09:00", "24:00"]]}}, "must be a time"),
    ({"weekly_hours": {"mon": [["17:00", "09:00"]]}}, "must open before it closes"),
    ({"weekly_hours": {"mon": [["09:00", "12:00"], ["11:00", "13:00"]]}}, "overlapping windows"),
    ({"weekly_hours": {"mon": [["09:00"]]}}, "must be a pair"),
    ({"weekly_hours": {"mon": [["09:00", "09:30"]] * 13}}, "at most 12"),
    ({"weekly_hours": ["mon"]}, "must be an object by day"),
    ({"slot_minutes": 4}, "slot_minutes must be a whole number from 5 to 240"),
    ({"slot_minutes": True}, "slot_minutes"),
    ({"buffer_minutes": 121}, "buffer_minutes must be a whole number from 0 to 120"),
    ({"horizon_days": 0}, "horizon_days must be a whole number from 1 to 365"),
    ({"blackout_dates": ["2026-02-30"]}, "real dates"),
    ({"blackout_dates": ["03/10/2026"]}, "YYYY-MM-DD"),
    ({"blackout_dates": ["2026-03-10"] * 367}, "at most 366"),
])
def test_a_wrong_availability_is_refused_naming_the_field(given, why):
    with refused(why):
        rules.availability_of(given)


def test_what_is_saved_is_normalised():
    saved = availability(weekly_hours={"tue": [["13:00", "17:00"], ["08:00", "12:00"]]},
                         blackout_dates=["2026-12-25", "2026-12-24", "2026-12-25"], slot_minutes=45)
    shown = saved.to_json()
    assert shown["weekly_hours"] == {"mon": [], "tue": [["08:00", "12:00"], ["13:00", "17:00"]], "wed": [],
                                     "thu": [], "fri": [], "sat": [], "sun": []}
    assert shown["blackout_dates"] == ["2026-12-24", "2026-12-25"] and shown["slot_minutes"] == 45
    assert (shown["buffer_minutes"], shown["horizon_days"]) == (0, 60)


def test_the_days_a_slot_listing_covers():
    assert rules.days_asked(MONDAY, None, None) == (MONDAY, MONDAY)
    assert rules.days_asked(None, MONDAY, date(2026, 3, 22)) == (MONDAY, date(2026, 3, 22))
    for asked, why in (((MONDAY, MONDAY, None), "not both"), ((None, MONDAY, None), "give date, or from and to"),
                       ((None, MONDAY, date(2026, 3, 8)), "to must not be before from"),
                       ((None, MONDAY, date(2026, 3, 23)), "at most 14 days")):
        with refused(why):
            rules.days_asked(*asked)


def test_a_bookings_caller_details():
    assert rules.booking_values({"name": " Ann Lee ", "phone_number": "+14155550123", "email": "Ann@Example.com"}) == {
        "name": "Ann Lee", "phone_number": "+14155550123", "email": "ann@example.com", "notes": None}
    for given, why in (({"name": " ", "phone_number": "+14155550123"}, "name is required"),
                       ({"name": "Ann", "phone_number": "4155550123"}, "E.164"),
                       ({"name": "Ann", "phone_number": "+14155550123", "email": "nope"}, "email is invalid"),
                       ({"name": "Ann", "phone_number": "+14155550123", "notes": "x" * 1001}, "at most 1000")):
        with refused(why):
            rules.booking_values(given)
    with pytest.raises(ServiceError) as error:
        rules.reschedulable("canceled")
    assert error.value.code == "conflict"
