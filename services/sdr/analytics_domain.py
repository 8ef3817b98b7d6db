"""Analytics reports' rules as plain functions: counted groups (core.aggregates, as common_pb2.AggregateRow) into
the spec's figures. No I/O: services.sdr.analytics_service fetches the groups and composes the reports.

The rules a reader of a report can rely on:
- rates and `change` are percentages with two decimals; a rate over nothing (no calls, no leads) is 0.0;
- `change` compares this week with last week: (this - last) / last; when last week had none it is null if this
  week has some (growth from nothing has no percentage) and 0.0 if it has none either;
- averages are over the rows counted (two decimals), 0.0 when there are none;
- the period is whole local days, today included (`days` of them), in each business's time zone; a timeline has
  every day (or week) of the period, with zeros where nothing happened, so a chart has no gaps; weeks start on
  Monday and a week is named by the date of its Monday;
- when the key's businesses use different time zones, each business's rows are cut in its own zone and the
  dates shown are those of every zone (a timeline covers the union of their periods), `period.since` is the
  earliest first day.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from contracts.analytics import BUCKETS
from contracts.leads import FUNNEL_STAGES
from core.errors import invalid
from core.localdates import local_today, week_start

if TYPE_CHECKING:
    from switchboard.v1.common_pb2 import AggregateRow

TOP = 5  # agents in top_by_calls and top_agents; leads in dashboard.recent
# The connector's get_business_info: each call count it shows and the local days it counts, today included.
INFO_WINDOWS = {"calls_last_7_days": 7, "calls_last_30_days": 30}


def check_bucket(group_by: str) -> str:
    if group_by not in BUCKETS:
        raise invalid(f"group_by must be one of {', '.join(BUCKETS)}")
    return group_by


def rate(part: int, whole: int) -> float:
    return round(part * 100 / whole, 2) if whole else 0.0


def average(total: int, count: int) -> float:
    return round(total / count, 2) if count else 0.0


def change(this: int, last: int) -> float | None:
    if last == 0:
        return None if this else 0.0
    return round((this - last) * 100 / last, 2)


def period_days(zones: list[str], days: int, now: datetime | None = None) -> list[date]:
    """Every local date of the last `days` days in any of the zones, oldest first."""
    found: set[date] = set()
    for tz in set(zones):
        today = local_today(tz, now)
        found.update(today - timedelta(days=n) for n in range(days))
    return sorted(found)


def period(zones: list[str], days: int, now: datetime, **extra: Any) -> dict[str, Any]:
    """{days, since (its first day, None without a zone), **extra}."""
    dates = period_days(zones, days, now)
    return {"days": days, "since": dates[0].isoformat() if dates else None, **extra}


def buckets(zones: list[str], days: int, group_by: str, now: datetime | None = None) -> list[date]:
    """The timeline's buckets: each day of the period, or the Monday of each week it touches."""
    dates = period_days(zones, days, now)
    return dates if group_by == "day" else sorted({week_start(d) for d in dates})


def totals(rows: Sequence[AggregateRow]) -> dict[str, Any]:
    count = sum(r.count for r in rows)
    duration = sum(r.duration for r in rows)
    return {"total": count, "completed": sum(r.completed for r in rows), "total_duration_seconds": duration,
            "avg_duration_seconds": average(duration, count)}


def lead_figures(rows: Sequence[AggregateRow]) -> dict[str, Any]:
    total, converted = sum(r.count for r in rows), sum(r.converted for r in rows)
    return {"total": total, "converted": converted, "conversion_rate": rate(converted, total)}


def timeline(rows: Sequence[AggregateRow], dates: list[date], group_by: str) -> list[dict[str, Any]]:
    """One entry per bucket: its calls, completed calls, duration, average and counts by status."""
    by_bucket: dict[str, list[AggregateRow]] = defaultdict(list)
    for row in rows:
        by_bucket[getattr(row, group_by)].append(row)
    entries = []
    for day in dates:
        found = by_bucket.get(day.isoformat(), [])
        t = totals(found)
        statuses: dict[str, int] = defaultdict(int)
        for row in found:
            statuses[row.status] += row.count
        entries.append({"date": day.isoformat(), "total": t["total"], "completed": t["completed"],
                        "total_duration": t["total_duration_seconds"],
                        "avg_duration_seconds": t["avg_duration_seconds"], "statuses": dict(sorted(statuses.items()))})
    return entries


def funnel(by_status: dict[str, int]) -> tuple[int, int, list[dict[str, Any]]]:
    """(total leads, lost, stages): a stage counts the leads at it or past it (a converted lead was new,
    contacted and qualified); a lead that left the pipeline (lost, unqualified, spam, do not contact) counts in
    the first stage only. rate_from_top is the share of the first stage; dropoff_rate the share of the previous
    stage that did not reach this one (0.0 for the first)."""
    total = sum(by_status.values())
    reached = [total] + [sum(by_status.get(s, 0) for s in FUNNEL_STAGES[i:]) for i in range(1, len(FUNNEL_STAGES))]
    stages = []
    for i, (stage, count) in enumerate(zip(FUNNEL_STAGES, reached, strict=True)):
        previous = reached[i - 1] if i else count
        stages.append({"stage": stage, "count": count, "rate_from_top": rate(count, total),
                       "dropoff_rate": rate(previous - count, previous) if i else 0.0})
    return total, by_status.get("lost", 0), stages


def created_in_period(created_at: datetime, since: str | None) -> bool:
    """Whether a lead shows among the dashboard's recent ones: created on or after the period's first day (its
    date in UTC, as the API writes created_at)."""
    return since is not None and created_at.astimezone(UTC).date().isoformat() >= since


def weeks_ago(zone_of: dict[str, str], row: AggregateRow, now: datetime | None = None) -> int:
    """How many weeks before its business's current local week a row's week is (0: this week)."""
    current = week_start(local_today(zone_of[row.business_id], now))
    return (current - date.fromisoformat(row.week)).days // 7


def this_and_last_week(zone_of: dict[str, str], rows: Sequence[AggregateRow],
                       now: datetime | None = None) -> tuple[int, int]:
    """Rows grouped by business and week: (this week's count, last week's), each business's weeks in its zone."""
    ago = [weeks_ago(zone_of, row, now) for row in rows]
    return (sum(r.count for r, n in zip(rows, ago, strict=True) if n == 0),
            sum(r.count for r, n in zip(rows, ago, strict=True) if n == 1))


def week_period(zones: list[str], now: datetime | None = None) -> dict[str, Any]:
    """{this_week, last_week: {start, end}} as Monday-to-Sunday dates, in the businesses' zone when they share
    one, else in UTC."""
    shared = set(zones)
    tz = shared.pop() if len(shared) == 1 else "UTC"
    monday = week_start(local_today(tz, now))
    last = monday - timedelta(weeks=1)
    return {"this_week": {"start": monday.isoformat(), "end": (monday + timedelta(days=6)).isoformat()},
            "last_week": {"start": last.isoformat(), "end": (last + timedelta(days=6)).isoformat()}}


def business_info(workspaces: Sequence[dict[str, Any]], agents: Iterable[tuple[str, str | None]],
                  counted: dict[str, Sequence[AggregateRow]]) -> list[dict[str, Any]]:
    """Each workspace (its fields as given, `id` among them) with its agents counted (each agent a (business, number
    or None) pair), their numbers sorted, and its calls in each window of INFO_WINDOWS: `counted` holds a window's
    rows grouped by business under its field; a window not counted shows 0."""
    agent_count: Counter[str] = Counter()
    numbers: dict[str, list[str]] = defaultdict(list)
    for business_id, number in agents:
        agent_count[business_id] += 1
        if number is not None:
            numbers[business_id].append(number)
    calls = {field: {r.business_id: r.count for r in rows} for field, rows in counted.items()}
    return [{**w, "agent_count": agent_count[w["id"]], "phone_numbers": sorted(numbers[w["id"]]),
             **{field: calls.get(field, {}).get(w["id"], 0) for field in INFO_WINDOWS}} for w in workspaces]
