"""Report aggregates over a window of whole local days or weeks, each business cut in its own time zone: the SQL
the calls and leads reports share (the analytics area).

A report counts the rows of the caller's businesses whose time falls in the window: the last `days` local days
(today included), or the current local week and the `weeks - 1` before it (weeks start on Monday, ISO 8601). Each
business's days and weeks are those of its IANA time zone, so a call at 23:30 in New York counts on that New York
day. Rows are grouped by any of the DIMENSIONS; a day or week is the local date it starts on. PostgreSQL does all
the counting: the caller gets one row per group, never the rows themselves.

Speed: each business's window start is worked out here, once, so PostgreSQL reads each business's rows as one
range of the covering index (business_id, created_at) INCLUDE (the measured columns), never the whole table; the
time zone is applied per row only to cut days and weeks.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.sql.selectable import TableValuedAlias

from core import tenant
from core.errors import invalid
from core.ids import utcnow
from core.localdates import local_today, week_start
from core.tenant import require_business
from switchboard.v1 import common_pb2

DIMENSIONS = ("business", "agent", "day", "week", "status")
DAYS_MAX = 90  # SPEC: analytics `days` at most 90
WEEKS_MAX = 13


@dataclass(frozen=True)
class Window:
    """Whole local days (`days`) or whole local weeks (`weeks`), ending now; exactly one is set."""

    days: int = 0
    weeks: int = 0


@dataclass(frozen=True)
class Query:
    """What a report asks of a service: its businesses with their time zones, the window, the grouping, and an
    optional top-N by count."""

    zones: list[tuple[str, str]]  # (business_id, IANA time zone)
    window: Window
    group_by: tuple[str, ...] = ()
    limit: int = 0
    as_of: datetime | None = None  # the window ends at this instant (now when None)


def check_group_by(group_by: Iterable[str]) -> tuple[str, ...]:
    unknown = [d for d in group_by if d not in DIMENSIONS]
    if unknown:
        raise invalid(f"group_by accepts {', '.join(DIMENSIONS)} (got {', '.join(unknown)})")
    return tuple(group_by)


def window_start(tz: str, window: Window, now: datetime) -> datetime:
    """The instant the window starts in zone `tz`: local midnight `days - 1` days before today, or the local
    Monday `weeks - 1` weeks before this week's."""
    today = local_today(tz, now)
    first = (week_start(today) - timedelta(weeks=window.weeks - 1) if window.weeks
             else today - timedelta(days=window.days - 1))
    return datetime.combine(first, time(), ZoneInfo(tz)).astimezone(UTC)


def _zones(query: Query) -> TableValuedAlias:
    """The businesses, their zones and where their windows start, as a table `zones(business_id, tz, since)`."""
    now = query.as_of or utcnow()
    ids = sa.cast(sa.bindparam("zone_ids", [z[0] for z in query.zones], type_=ARRAY(sa.Text)),
                  ARRAY(UUID(as_uuid=False)))
    tzs = sa.bindparam("zone_tzs", [z[1] for z in query.zones], type_=ARRAY(sa.Text))
    since = sa.bindparam("zone_since", [window_start(z[1], query.window, now) for z in query.zones],
                         type_=ARRAY(sa.DateTime(timezone=True)))
    return sa.func.unnest(ids, tzs, since).table_valued("business_id", "tz", "since").render_derived(name="zones")


def aggregate(table: sa.Table, at: sa.Column[Any], query: Query, measures: dict[str, sa.ColumnElement[Any]],
              where: tuple[sa.ColumnElement[bool], ...] = ()) -> sa.Select[Any]:
    """One row per group of `query.group_by` with the `measures` (aggregate expressions over `table`), for the rows
    of the query's businesses in its window; with a limit, the groups with the most rows first."""
    zones = _zones(query)
    local = sa.func.timezone(zones.c.tz, at)
    columns = {"business": table.c.business_id, "agent": table.c.agent_id, "status": table.c.status,
               "day": sa.cast(sa.func.date_trunc("day", local), sa.Date),
               "week": sa.cast(sa.func.date_trunc("week", local), sa.Date)}
    dims = [columns[d] for d in query.group_by]
    select = (sa.select(*(c.label(d) for d, c in zip(query.group_by, dims, strict=True)),
                        *(m.label(n) for n, m in measures.items()))
              .select_from(table.join(zones, table.c.business_id == zones.c.business_id))
              .where(at >= zones.c.since, *where))
    if dims:
        select = select.group_by(*dims)
    if query.limit:
        select = select.order_by(sa.func.count().desc(), *dims).limit(query.limit)
    return select


def checked_query(zones: list[tuple[str, str]], window: Window, group_by: Iterable[str] = (), limit: int = 0,
                  as_of: datetime | None = None) -> Query:
    """A Query once each business is checked to be the caller's and the window is sane."""
    who = tenant.require_account()
    zones = [(require_business(who, business_id), tz) for business_id, tz in zones]
    if bool(window.days) == bool(window.weeks):
        raise invalid("send exactly one of days and weeks")
    if not 0 <= window.days <= DAYS_MAX or not 0 <= window.weeks <= WEEKS_MAX:
        raise invalid(f"days must be 1 to {DAYS_MAX} and weeks 1 to {WEEKS_MAX}")
    if limit < 0:
        raise invalid("limit must not be negative")
    return Query(zones, window, check_group_by(group_by), limit, as_of)


# -- the AggregateRequest RPCs: the caller's side and the service's ------------------------------------------------

def request_of(query: Query, agent_id: str | None = None) -> common_pb2.AggregateRequest:
    """The Query as the request that asks another service for it (of one agent when named)."""
    request = common_pb2.AggregateRequest(
        zones=[common_pb2.BusinessZone(business_id=business_id, timezone=tz) for business_id, tz in query.zones],
        days=query.window.days, weeks=query.window.weeks, group_by=list(query.group_by), limit=query.limit,
        agent_id=agent_id)
    if query.as_of is not None:
        request.as_of.FromDatetime(query.as_of)
    return request


def query_of(request: common_pb2.AggregateRequest) -> Query:
    """The request as a checked Query."""
    as_of = request.as_of.ToDatetime(UTC) if request.HasField("as_of") else None
    return checked_query([(z.business_id, z.timezone) for z in request.zones], Window(request.days, request.weeks),
                         request.group_by, request.limit, as_of)


def reply_of(rows: Iterable[sa.Row[Any]], group_by: tuple[str, ...]) -> common_pb2.Aggregates:
    """Rows of `aggregate` (their dimensions, and the measures count, completed, duration, converted as the
    service asked for them) as the RPC's reply."""
    fields = {"business": "business_id", "agent": "agent_id", "day": "day", "week": "week", "status": "status"}
    out = common_pb2.Aggregates()
    for row in rows:
        mapping = row._mapping
        item = out.rows.add(**{m: mapping[m] for m in ("count", "completed", "duration", "converted") if m in mapping})
        for dim in group_by:
            value = mapping[dim]
            if value is not None:
                setattr(item, fields[dim], value.isoformat() if dim in ("day", "week") else str(value))
    return out


def rows_of(rows: Iterable[sa.Row[Any]], group_by: tuple[str, ...]) -> list[common_pb2.AggregateRow]:
    """Rows of `aggregate` as AggregateRows, for a report of the service's own (the shape its groups fetched from
    other services come in)."""
    return list(reply_of(rows, group_by).rows)
