"""Bookings: a business's availability (weekly hours in its time zone, slot length, buffer, blackout dates, how far
ahead) and the appointments booked on it. The limits and defaults the gateway's schemas publish and the sdr
service's rules (services.sdr.bookings_domain) enforce."""
from __future__ import annotations

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # in date.weekday() order
# With none saved: Monday to Friday 09:00-17:00, 30-minute slots, no buffer, 60 days ahead.
DEFAULT_HOURS = {day: [("09:00", "17:00")] if day not in ("sat", "sun") else [] for day in DAYS}
DEFAULT_SLOT_MINUTES, SLOT_MINUTES = 30, (5, 240)
DEFAULT_BUFFER_MINUTES, BUFFER_MINUTES = 0, (0, 120)
DEFAULT_HORIZON_DAYS, HORIZON_DAYS = 60, (1, 365)
BLACKOUT_DATES_MAX = 366
WINDOWS_PER_DAY_MAX = 12
TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"

CONFIRMED, CANCELED = "confirmed", "canceled"
STATUSES = (CONFIRMED, CANCELED)
NAME_MAX, NOTES_MAX, EMAIL_MAX = 200, 1000, 320
SLOTS_DAYS_MAX = 14  # the longest from..to range of GET /api/v1/availability/slots, in days
BOOKINGS_PAGE = (50, 100)  # default, maximum
