"""The analytics rules (gateway.reports): rates, averages, change, the funnel, and the days and weeks of a period
across time zones."""
from datetime import date, datetime, timezone
from types import SimpleNamespace

import pytest

from gateway import reports

# A Monday 02:30 UTC: still Sunday in Los Angeles, already Monday afternoon in Tokyo.
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=timezone.utc)


@pytest.mark.parametrize("this, last, expected", [(12, 10, 20.0), (5, 10, -50.0), (1, 3, -66.67), (0, 0, 0.0),
                                                  (4, 0, None), (0, 4, -100.0)])
def test_change_is_a_percentage_and_null_from_nothing(this, last, expected):
    assert reports.change(this, last) == expected


def test_rates_and_averages_over_nothing_are_zero():
    assert reports.rate(1, 3) == 33.33 and reports.rate(0, 0) == 0.0
    assert reports.average(10, 4) == 2.5 and reports.average(0, 0) == 0.0


def test_the_funnel_counts_each_lead_at_its_stage_and_before():
    total, lost, stages = reports.funnel({"new": 4, "contacted": 3, "qualified": 2, "converted": 1, "lost": 2,
                                          "spam": 1})
    assert (total, lost) == (13, 2)
    assert [s["count"] for s in stages] == [13, 6, 3, 1]
    assert [s["rate_from_top"] for s in stages] == [100.0, 46.15, 23.08, 7.69]
    assert [s["dropoff_rate"] for s in stages] == [0.0, 53.85, 50.0, 66.67]
    assert [s["count"] for s in reports.funnel({})[2]] == [0, 0, 0, 0]


def test_a_period_has_the_local_days_of_every_zone():
    assert reports.period_days(["UTC"], 3, NOW) == [date(2026, 11, 21), date(2026, 11, 22), date(2026, 11, 23)]
    # Los Angeles is a day behind: its period starts a day earlier.
    both = reports.period_days(["UTC", "America/Los_Angeles"], 3, NOW)
    assert both == [date(2026, 11, 20), date(2026, 11, 21), date(2026, 11, 22), date(2026, 11, 23)]
    assert reports.buckets(["America/Los_Angeles"], 3, "week", NOW) == [date(2026, 11, 16)]
    assert reports.buckets(["Asia/Tokyo"], 3, "week", NOW) == [date(2026, 11, 16), date(2026, 11, 23)]


def test_this_and_last_week_are_each_businesses_own():
    zones = {"la": "America/Los_Angeles", "tokyo": "Asia/Tokyo"}
    rows = [SimpleNamespace(business_id="la", week="2026-11-16", count=3),  # LA's current week
            SimpleNamespace(business_id="tokyo", week="2026-11-16", count=5),  # Tokyo's last week
            SimpleNamespace(business_id="tokyo", week="2026-11-23", count=2),
            SimpleNamespace(business_id="la", week="2026-11-02", count=9)]  # older: neither
    assert reports.this_and_last_week(zones, rows, NOW) == (5, 5)
    assert reports.week_period(["Asia/Tokyo"], NOW)["this_week"] == {"start": "2026-11-23", "end": "2026-11-29"}
    assert reports.week_period(list(zones.values()), NOW)["last_week"] == {"start": "2026-11-16",
                                                                             "end": "2026-11-22"}
