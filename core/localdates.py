"""Local dates of an instant in an IANA time zone: what the analytics windows (core.aggregates, in the services)
and the reports' periods (services.sdr.analytics_domain) both cut days and weeks by. No I/O."""
from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo


def local_today(tz: str, now: datetime | None = None) -> date:
    return (now or datetime.now(UTC)).astimezone(ZoneInfo(tz)).date()


def week_start(day: date) -> date:
    """The Monday of `day`'s week (ISO 8601)."""
    return day - timedelta(days=day.weekday())
