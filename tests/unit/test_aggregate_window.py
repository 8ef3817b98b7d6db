"""Where an analytics window starts: the first instant of a local day or a local Monday, worked out once per
business (core.aggregates.window_start), including across daylight-saving changes."""
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.aggregates import Window, window_start

UTC = UTC


def local_date(instant: datetime, tz: str):
    return instant.astimezone(ZoneInfo(tz)).date()


@pytest.mark.parametrize("tz, now, window, expected", [
    # 30 days, today included: 29 days before today's midnight.
    ("UTC", datetime(2026, 11, 23, 16, 0, tzinfo=UTC), Window(days=30), datetime(2026, 10, 25, tzinfo=UTC)),
    # Late evening in Los Angeles is already tomorrow in UTC: the local day counts.
    ("America/Los_Angeles", datetime(2026, 11, 24, 5, 0, tzinfo=UTC), Window(days=1),
     datetime(2026, 11, 23, 8, 0, tzinfo=UTC)),
    # Across the November change in New York the offset of the first day (-4) is not today's (-5).
    ("America/New_York", datetime(2026, 11, 23, 16, 0, tzinfo=UTC), Window(days=30),
     datetime(2026, 10, 25, 4, 0, tzinfo=UTC)),
    # Weeks: this week's Monday in Kolkata (+5:30), and the one before for two weeks.
    ("Asia/Kolkata", datetime(2026, 11, 23, 20, 0, tzinfo=UTC), Window(weeks=1),
     datetime(2026, 11, 22, 18, 30, tzinfo=UTC)),
    ("Asia/Kolkata", datetime(2026, 11, 23, 20, 0, tzinfo=UTC), Window(weeks=2),
     datetime(2026, 11, 15, 18, 30, tzinfo=UTC)),
    # Santiago skips midnight when summer time starts (2026-09-06): the day starts at its first instant, 01:00.
    ("America/Santiago", datetime(2026, 9, 6, 12, 0, tzinfo=UTC), Window(days=1),
     datetime(2026, 9, 6, 4, 0, tzinfo=UTC)),
])
def test_the_window_starts_at_the_first_instant_of_its_first_local_day(tz, now, window, expected):
    start = window_start(tz, window, now)
    assert start == expected
    # The instant before belongs to the day before: nothing of the first day is left out, nothing earlier counted.
    assert local_date(start - timedelta(microseconds=1), tz) < local_date(start, tz)
