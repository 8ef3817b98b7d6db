"""The analytics rules (services.sdr.analytics_domain): rates, averages, change, the funnel, and the days and
weeks of a period across time zones."""
from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest

from core.errors import ServiceError
from services.sdr import analytics_domain as rules

# A Monday 02:30 UTC: still Sunday in Los Angeles, already Monday afternoon in Tokyo.
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)


@pytest.mark.parametrize("this, last, expected", [(12, 10, 20.0), (5, 10, -50.0), (1, 3, -66.67), (0, 0, 0.0),
                                                  (4, 0, None), (0, 4, -100.0)])
def test_change_is_a_percentage_and_null_from_nothing(this, last, expected):
    assert rules.change(this, last) == expected


def test_rates_and_averages_over_nothing_are_zero():
    assert rules.rate(1, 3) == 33.33 and rules.rate(0, 0) == 0.0
    assert rules.average(10, 4) == 2.5 and rules.average(0, 0) == 0.0


def test_the_funnel_counts_each_lead_at_its_stage_and_before():
    total, lost, stages = rules.funnel({"new": 4, "contacted": 3, "qualified": 2, "converted": 1, "lost": 2,
                                          "spam": 1})
    assert (total, lost) == (13, 2)
    assert [s["count"] for s in stages] == [13, 6, 3, 1]
    assert [s["rate_from_top"] for s in stages] == [100.0, 46.15, 23.08, 7.69]
    assert [s["dropoff_rate"] for s in stages] == [0.0, 53.85, 50.0, 66.67]
    assert [s["count"] for s in rules.funnel({})[2]] == [0, 0, 0, 0]


def test_a_period_has_the_local_days_of_every_zone():
    assert rules.period_days(["UTC"], 3, NOW) == [date(2026, 11, 21), date(2026, 11, 22), date(2026, 11, 23)]
    # Los Angeles is a day behind: its period starts a day earlier.
    both = rules.period_days(["UTC", "America/Los_Angeles"], 3, NOW)
    assert both == [date(2026, 11, 20), date(2026, 11, 21), date(2026, 11, 22), date(2026, 11, 23)]
    assert rules.buckets(["America/Los_Angeles"], 3, "week", NOW) == [date(2026, 11, 16)]
    assert rules.buckets(["Asia/Tokyo"], 3, "week", NOW) == [date(2026, 11, 16), date(2026, 11, 23)]


def test_this_and_last_week_are_each_businesses_own():
    zones = {"la": "America/Los_Angeles", "tokyo": "Asia/Tokyo"}
    rows = [SimpleNamespace(business_id="la", week="2026-11-16", count=3),  # LA's current week
            SimpleNamespace(business_id="tokyo", week="2026-11-16", count=5),  # Tokyo's last week
            SimpleNamespace(business_id="tokyo", week="2026-11-23", count=2),
            SimpleNamespace(business_id="la", week="2026-11-02", count=9)]  # older: neither
    assert rules.this_and_last_week(zones, rows, NOW) == (5, 5)
    assert rules.week_period(["Asia/Tokyo"], NOW)["this_week"] == {"start": "2026-11-23", "end": "2026-11-29"}
    assert rules.week_period(list(zones.values()), NOW)["last_week"] == {"start": "2026-11-16",
                                                                             "end": "2026-11-22"}


def test_a_period_starts_on_its_earliest_day_and_recent_leads_are_of_it():
    assert rules.period(["UTC", "America/Los_Angeles"], 3, NOW, group_by="day") == {
        "days": 3, "since": "2026-11-20", "group_by": "day"}
    assert rules.period([], 3, NOW) == {"days": 3, "since": None}  # no business: no day
    # Created in the evening of the 19th in Los Angeles: the 20th in UTC, as the API shows created_at.
    assert rules.created_in_period(datetime(2026, 11, 20, 3, 0, tzinfo=UTC), "2026-11-20")
    assert not rules.created_in_period(datetime(2026, 11, 19, 23, 59, tzinfo=UTC), "2026-11-20")
    assert not rules.created_in_period(NOW, None)


def test_lead_figures_and_the_timeline_buckets_asked_for():
    rows = [SimpleNamespace(count=3, converted=1), SimpleNamespace(count=0, converted=0)]
    assert rules.lead_figures(rows) == {"total": 3, "converted": 1, "conversion_rate": 33.33}
    assert rules.lead_figures([]) == {"total": 0, "converted": 0, "conversion_rate": 0.0}
    assert rules.check_bucket("week") == "week"
    with pytest.raises(ServiceError) as refused:
        rules.check_bucket("month")
    assert refused.value.code == "invalid_request"
