"""Analytics use cases: the six reports over the caller's businesses (a key bound to one business: that one), and
what the assistant connector's get_business_info shows of them.

The businesses with their time zones, their agents and their calls counted come from the other services through
the port (services.sdr.analytics_port), each asked as the caller and in parallel where one does not need another's
answer; the leads are counted here. The rules (rates, averages, change, empty days, the funnel) are
services.sdr.analytics_domain; a report comes back as the spec's shape, a dict the servicer turns into its reply.
"""
from __future__ import annotations

import asyncio
import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from contracts import analytics
from core import aggregates
from core.errors import not_found
from core.ids import require_uuid, utcnow
from core.pagination import Page, Paged
from services.sdr import analytics_domain as rules
from services.sdr.analytics_port import Agent, AnalyticsSources, Business
from services.sdr.records import ListedLead
from services.sdr.service import LeadFilters
from switchboard.v1 import common_pb2


class LeadCounts(Protocol):
    """What the reports read of this service's leads (services.sdr.service.Leads)."""

    async def aggregate(self, query: aggregates.Query, agent_id: str | None,
                        source: str | None) -> list[common_pb2.AggregateRow]: ...

    async def list(self, filters: LeadFilters, page: Page) -> Paged: ...


@dataclass(frozen=True)
class Reach:
    """The caller's businesses, with names and time zones, and the instant the report is as of: the period shown
    and the windows counted end at the same `now`."""

    businesses: list[Business]
    now: datetime

    @property
    def zones(self) -> list[str]:
        return [b.timezone for b in self.businesses]

    def query(self, *, days: int = 0, weeks: int = 0, group_by: tuple[str, ...] = (),
              limit: int = 0) -> aggregates.Query:
        """A count over each business's window ending at `now`, the businesses checked to be the caller's."""
        return aggregates.checked_query([(b.business_id, b.timezone) for b in self.businesses],
                                        aggregates.Window(days, weeks), group_by, limit, self.now)


def _days(days: int) -> int:
    """The period's length: as asked, or the default when unset (0)."""
    return days or analytics.DAYS[0]


def _one(row: common_pb2.AggregateRow | None) -> list[common_pb2.AggregateRow]:
    """A report row looked up by its group, as the list of rows the totals read (none when the group is empty)."""
    return [row] if row is not None else []


class Reports:
    def __init__(self, sources: AnalyticsSources, leads: LeadCounts, clock: Callable[[], datetime] = utcnow):
        self.sources, self.leads, self.clock = sources, leads, clock

    async def dashboard(self, days: int, recent_leads: bool) -> dict[str, Any]:
        """Leads, calls and agents at a glance; leads.recent holds `ListedLead`s (none unless `recent_leads`)."""
        days = _days(days)
        reach = await self._reach()
        calls, top, leads, agents, newest = await asyncio.gather(
            self.sources.call_counts(reach.query(days=days)),
            self.sources.call_counts(reach.query(days=days, group_by=("agent",), limit=rules.TOP)),
            self.leads.aggregate(reach.query(days=days, group_by=("status",)), None, None),
            self.sources.agents(), self._newest_leads(recent_leads))
        names = {a.id: a.name for a in agents}
        period = rules.period(reach.zones, days, reach.now)
        figures = rules.lead_figures(leads)
        return {
            "period": period,
            "leads": {"total": figures["total"],
                      "by_status": {r.status: r.count for r in sorted(leads, key=lambda r: r.status)},
                      "conversion_rate": figures["conversion_rate"],
                      "recent": [r for r in newest if rules.created_in_period(r.created_at, period["since"])]},
            "calls": rules.totals(calls),
            "agents": {"total": len(agents), "top_by_calls": [
                {"agent_id": r.agent_id, "name": names.get(r.agent_id), "count": r.count, "total_duration": r.duration,
                 "avg_duration": rules.average(r.duration, r.count)} for r in top]},
        }

    async def calls(self, days: int, group_by: str, agent_id: str | None) -> dict[str, Any]:
        """Calls over time, of one of the caller's agents when named (else not_found)."""
        days, group_by = _days(days), rules.check_bucket(group_by or analytics.BUCKETS[0])
        if agent_id is not None:  # the agent checked to be the caller's (else not_found) alongside
            reach, _ = await asyncio.gather(self._reach(), self._agents(agent_id))
        else:
            reach = await self._reach()
        rows = await self.sources.call_counts(reach.query(days=days, group_by=(group_by, "status")), agent_id)
        t = rules.totals(rows)
        return {"period": rules.period(reach.zones, days, reach.now, group_by=group_by),
                "summary": {"total_calls": t["total"], "total_duration_seconds": t["total_duration_seconds"],
                            "avg_duration_seconds": t["avg_duration_seconds"]},
                "timeline": rules.timeline(rows, rules.buckets(reach.zones, days, group_by, reach.now), group_by)}

    async def funnel(self, days: int, source: str | None) -> dict[str, Any]:
        days = _days(days)
        reach = await self._reach()
        rows = await self.leads.aggregate(reach.query(days=days, group_by=("status",)), None, source)
        total, lost, stages = rules.funnel({r.status: r.count for r in rows})
        return {"period": rules.period(reach.zones, days, reach.now), "total_leads": total, "lost": lost,
                "funnel": stages}

    async def agents(self, days: int, agent_id: str | None) -> dict[str, Any]:
        """Every agent of the caller's businesses (or the one named, else not_found), zeros included, the most
        calls first."""
        days = _days(days)
        reach, agents = await asyncio.gather(self._reach(), self._agents(agent_id))
        calls, leads = await asyncio.gather(
            self.sources.call_counts(reach.query(days=days, group_by=("agent",)), agent_id),
            self.leads.aggregate(reach.query(days=days, group_by=("agent",)), agent_id, None))
        calls_of, leads_of = {r.agent_id: r for r in calls}, {r.agent_id: r for r in leads}
        entries: list[dict[str, Any]] = []
        for agent in agents:
            c = rules.totals(_one(calls_of.get(agent.id)))
            entries.append({"agent_id": agent.id, "agent_name": agent.name,
                            "calls": {k: c[k] for k in ("total", "completed", "avg_duration_seconds",
                                                        "total_duration_seconds")},
                            "leads": rules.lead_figures(_one(leads_of.get(agent.id)))})
        entries.sort(key=lambda e: (-e["calls"]["total"], e["agent_name"] or "", e["agent_id"]))
        return {"period": rules.period(reach.zones, days, reach.now), "agents": entries}

    async def weekly(self) -> dict[str, Any]:
        """This week against last week, each business's weeks in its own zone."""
        reach, agents = await asyncio.gather(self._reach(), self.sources.agents())
        now = reach.now
        zone_of = {b.business_id: b.timezone for b in reach.businesses}
        calls, leads = await asyncio.gather(
            self.sources.call_counts(reach.query(weeks=2, group_by=("business", "agent", "week"))),
            self.leads.aggregate(reach.query(weeks=2, group_by=("business", "week")), None, None))
        this_calls, last_calls = rules.this_and_last_week(zone_of, calls, now)
        this_leads, last_leads = rules.this_and_last_week(zone_of, leads, now)
        per_agent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for row in calls:
            if rules.weeks_ago(zone_of, row, now) == 0:
                per_agent[row.agent_id][0] += row.count
                per_agent[row.agent_id][1] += row.duration
        names = {a.id: a.name for a in agents}
        top = sorted(per_agent.items(), key=lambda item: (-item[1][0], item[0]))[:rules.TOP]
        return {"period": rules.week_period(list(zone_of.values()), now),
                "calls": {"this_week": this_calls, "last_week": last_calls,
                          "change": rules.change(this_calls, last_calls)},
                "leads": {"this_week": this_leads, "last_week": last_leads,
                          "change": rules.change(this_leads, last_leads)},
                "top_agents": [{"agent_id": agent_id, "agent_name": names.get(agent_id), "total_calls": count,
                                "total_duration_seconds": duration} for agent_id, (count, duration) in top]}

    async def businesses(self, days: int) -> dict[str, Any]:
        """Every business of the caller, zeros included, in the order they were created."""
        days = _days(days)
        reach = await self._reach()
        calls, leads = await asyncio.gather(
            self.sources.call_counts(reach.query(days=days, group_by=("business",))),
            self.leads.aggregate(reach.query(days=days, group_by=("business",)), None, None))
        calls_of, leads_of = {r.business_id: r for r in calls}, {r.business_id: r for r in leads}
        entries: list[dict[str, Any]] = []
        for b in reach.businesses:
            c = rules.totals(_one(calls_of.get(b.business_id)))
            entries.append({"business_id": b.business_id, "business_name": b.name,
                            "calls": {k: c[k] for k in ("total", "completed", "avg_duration_seconds")},
                            "leads": rules.lead_figures(_one(leads_of.get(b.business_id)))})
        return {"period": rules.period(reach.zones, days, reach.now), "businesses": entries}

    async def business_info(self, business_id: str | None, call_counts: bool) -> dict[str, Any]:
        """Each of the caller's businesses, or only `business_id` (not_found when it is not one of theirs): its
        workspace's details, its agents counted with their numbers and, when `call_counts`, its calls of each window
        of INFO_WINDOWS (else zeros, nothing counted)."""
        reach = await self._reach()
        if business_id is not None:
            reach = dataclasses.replace(reach, businesses=[b for b in reach.businesses if b.business_id == business_id])
            if not reach.businesses:
                raise not_found("business")
        windows = list(rules.INFO_WINDOWS.items()) if call_counts else []
        workspaces, agents, counts = await asyncio.gather(
            asyncio.gather(*(self.sources.workspace(b.business_id) for b in reach.businesses)),
            self.sources.agents(),
            asyncio.gather(*(self.sources.call_counts(reach.query(days=days, group_by=("business",)))
                             for _, days in windows)))
        return {"businesses": rules.business_info(
            [dataclasses.asdict(w) for w in workspaces], [(a.business_id, a.phone_number) for a in agents],
            {field: rows for (field, _), rows in zip(windows, counts, strict=True)})}

    # -- steps -----------------------------------------------------------------------------

    async def _reach(self) -> Reach:
        businesses = await self.sources.businesses()
        return Reach(businesses, self.clock())

    async def _agents(self, agent_id: str | None) -> list[Agent]:
        """Every agent of the caller's businesses, or only the one asked for (not_found when it is not theirs)."""
        if agent_id is None:
            return await self.sources.agents()
        found = await self.sources.agent(require_uuid(agent_id, "agent_id"))
        if found is None:
            raise not_found("agent")
        return [found]

    async def _newest_leads(self, wanted: bool) -> Sequence[ListedLead]:
        return (await self.leads.list(LeadFilters(), Page(rules.TOP))).rows if wanted else []
