"""Local dates of an instant in an IANA time zone: what the analytics windows (core.aggregates, in the services)
and the reports' periods (gateway.reports) both cut days and weeks by. No I/O."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo


def local_today(tz: str, now: datetime | None = None) -> date:
    return (now or datetime.now(timezone.utc)).astimezone(ZoneInfo(tz)).date()


def week_start(day: date) -> date:
    """The Monday of `day`'s week (ISO 8601)."""
    return day - timedelta(days=day.weekday())
