"""Analytics area: six reports over the key's businesses. Each service counts its own rows in SQL (calls:
AggregateCalls, sdr: AggregateLeads, grouped per business, agent, day, week or status in each business's time
zone); this module asks them in parallel and composes the spec's shapes with the names from accounts and agents
(gateway.reports has the rules: rates, averages, change, empty days)."""
from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone

from core.errors import not_found
from gateway import reports
from gateway.convert import to_json
from gateway.routes import RequestContext, Route
from switchboard.v1 import accounts_pb2, agents_pb2, common_pb2, sdr_pb2

V1 = "/api/v1/analytics"
DAYS = (30, 90)  # SPEC: default 30, max 90
TOP = 5  # agents in top_by_calls and top_agents; leads in dashboard.recent
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request")


@dataclass(frozen=True)
class Reach:
    """The key's businesses (a key bound to one business: that one), with names and time zones, and the instant
    the report is as of: the period shown and the windows the services count end at the same `now`."""

    businesses: list
    now: datetime

    @property
    def zones(self) -> list[str]:
        return [b.timezone for b in self.businesses]


async def reach_of(ctx: RequestContext) -> Reach:
    reply = await ctx.rpc("accounts").BusinessZones(accounts_pb2.BusinessZonesRequest())
    return Reach(list(reply.businesses), datetime.now(timezone.utc))


def _request(reach: Reach, *, days: int = 0, weeks: int = 0, group_by=(), **given) -> common_pb2.AggregateRequest:
    request = common_pb2.AggregateRequest(
        zones=[common_pb2.BusinessZone(business_id=b.business_id, timezone=b.timezone) for b in reach.businesses],
        days=days, weeks=weeks, group_by=list(group_by), **{k: v for k, v in given.items() if v is not None})
    request.as_of.FromDatetime(reach.now)
    return request


async def call_counts(ctx: RequestContext, reach: Reach, **query) -> list:
    return list((await ctx.rpc("calls").AggregateCalls(_request(reach, **query))).rows)


async def lead_counts(ctx: RequestContext, reach: Reach, **query) -> list:
    return list((await ctx.rpc("sdr").AggregateLeads(_request(reach, **query))).rows)


async def agents_of(ctx: RequestContext, agent_id: str | None = None) -> list:
    """Every agent of the key's businesses, or only the one asked for (404 when it is not one of them)."""
    if agent_id is None:
        return list((await ctx.rpc("agents").AgentDirectory(agents_pb2.AgentDirectoryRequest())).agents)
    found = list((await ctx.rpc("agents").LookupAgents(agents_pb2.LookupAgentsRequest(ids=[agent_id]))).agents)
    if not found:
        raise not_found("agent")
    return found


async def _recent_leads(ctx: RequestContext) -> list[dict]:
    """The newest leads, for a key that may read leads (else none)."""
    if not ctx.principal.has_scope("leads:read"):
        return []
    reply = await ctx.rpc("sdr").ListLeads(sdr_pb2.ListLeadsRequest(page=common_pb2.PageRequest(limit=TOP)))
    return [to_json(lead) for lead in reply.leads]


def _days(ctx: RequestContext) -> int:
    return int(ctx.query.get("days", DAYS[0]))


def _period(reach: Reach, days: int, **extra) -> dict:
    dates = reports.period_days(reach.zones, days, reach.now)
    return {"days": days, "since": dates[0].isoformat() if dates else None, **extra}


def _one(row) -> list:
    """A report row looked up by its group, as the list of rows the totals read (none when the group is empty)."""
    return [row] if row is not None else []


def _leads_totals(rows) -> dict:
    total, converted = sum(r.count for r in rows), sum(r.converted for r in rows)
    return {"total": total, "converted": converted, "conversion_rate": reports.rate(converted, total)}


async def dashboard(ctx: RequestContext):
    days = _days(ctx)
    reach = await reach_of(ctx)
    calls, top, leads, agents, recent = await asyncio.gather(
        call_counts(ctx, reach, days=days), call_counts(ctx, reach, days=days, group_by=("agent",), limit=TOP),
        lead_counts(ctx, reach, days=days, group_by=("status",)), agents_of(ctx), _recent_leads(ctx))
    names = {a.id: a.name for a in agents}
    period = _period(reach, days)
    by_status = {r.status: r.count for r in sorted(leads, key=lambda r: r.status)}
    lead_totals = _leads_totals(leads)
    call_totals = reports.totals(calls)
    return {
        "period": period,
        "leads": {"total": lead_totals["total"], "by_status": by_status,
                  "conversion_rate": lead_totals["conversion_rate"],
                  "recent": [lead for lead in recent if period["since"] and lead["created_at"][:10] >= period["since"]]},
        "calls": {k: call_totals[k] for k in ("total", "completed", "total_duration_seconds", "avg_duration_seconds")},
        "agents": {"total": len(agents), "top_by_calls": [
            {"agent_id": r.agent_id, "name": names.get(r.agent_id), "count": r.count, "total_duration": r.duration,
             "avg_duration": reports.average(r.duration, r.count)} for r in top]},
    }


async def calls_report(ctx: RequestContext):
    days, group_by, agent_id = _days(ctx), ctx.query.get("group_by", "day"), ctx.query.get("agent_id")
    reach = await reach_of(ctx)
    if agent_id is not None:
        await agents_of(ctx, agent_id)  # one of the key's agents, else 404
    rows = await call_counts(ctx, reach, days=days, group_by=(group_by, "status"), agent_id=agent_id)
    t = reports.totals(rows)
    dates = reports.buckets(reach.zones, days, group_by, reach.now)
    return {"period": _period(reach, days, group_by=group_by),
            "summary": {"total_calls": t["total"], "total_duration_seconds": t["total_duration_seconds"],
                        "avg_duration_seconds": t["avg_duration_seconds"]},
            "timeline": reports.timeline(rows, dates, group_by)}


async def funnel(ctx: RequestContext):
    days = _days(ctx)
    reach = await reach_of(ctx)
    rows = await lead_counts(ctx, reach, days=days, group_by=("status",), source=ctx.query.get("source"))
    total, lost, stages = reports.funnel({r.status: r.count for r in rows})
    return {"period": _period(reach, days), "total_leads": total, "lost": lost, "funnel": stages}


async def agents_report(ctx: RequestContext):
    days, agent_id = _days(ctx), ctx.query.get("agent_id")
    reach, agents = await asyncio.gather(reach_of(ctx), agents_of(ctx, agent_id))
    calls, leads = await asyncio.gather(
        call_counts(ctx, reach, days=days, group_by=("agent",), agent_id=agent_id),
        lead_counts(ctx, reach, days=days, group_by=("agent",), agent_id=agent_id))
    calls_of, leads_of = {r.agent_id: r for r in calls}, {r.agent_id: r for r in leads}
    entries = []
    for agent in agents:
        c = reports.totals(_one(calls_of.get(agent.id)))
        entries.append({"agent_id": agent.id, "agent_name": agent.name,
                        "calls": {k: c[k] for k in ("total", "completed", "avg_duration_seconds",
                                                    "total_duration_seconds")},
                        "leads": _leads_totals(_one(leads_of.get(agent.id)))})
    entries.sort(key=lambda e: (-e["calls"]["total"], e["agent_name"] or "", e["agent_id"]))
    return {"period": _period(reach, days), "agents": entries}


async def weekly(ctx: RequestContext):
    reach, agents = await asyncio.gather(reach_of(ctx), agents_of(ctx))
    now = reach.now
    zone_of = {b.business_id: b.timezone for b in reach.businesses}
    calls, leads = await asyncio.gather(
        call_counts(ctx, reach, weeks=2, group_by=("business", "agent", "week")),
        lead_counts(ctx, reach, weeks=2, group_by=("business", "week")))
    this_calls, last_calls = reports.this_and_last_week(zone_of, calls, now)
    this_leads, last_leads = reports.this_and_last_week(zone_of, leads, now)
    per_agent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in calls:
        if reports.weeks_ago(zone_of, row, now) == 0:
            per_agent[row.agent_id][0] += row.count
            per_agent[row.agent_id][1] += row.duration
    names = {a.id: a.name for a in agents}
    top = sorted(per_agent.items(), key=lambda item: (-item[1][0], item[0]))[:TOP]
    return {"period": reports.week_period(list(zone_of.values()), now),
            "calls": {"this_week": this_calls, "last_week": last_calls, "change": reports.change(this_calls, last_calls)},
            "leads": {"this_week": this_leads, "last_week": last_leads, "change": reports.change(this_leads, last_leads)},
            "top_agents": [{"agent_id": agent_id, "agent_name": names.get(agent_id), "total_calls": count,
                            "total_duration_seconds": duration} for agent_id, (count, duration) in top]}


async def businesses_report(ctx: RequestContext):
    days = _days(ctx)
    reach = await reach_of(ctx)
    calls, leads = await asyncio.gather(call_counts(ctx, reach, days=days, group_by=("business",)),
                                        lead_counts(ctx, reach, days=days, group_by=("business",)))
    calls_of, leads_of = {r.business_id: r for r in calls}, {r.business_id: r for r in leads}
    entries = []
    for b in reach.businesses:
        c = reports.totals(_one(calls_of.get(b.business_id)))
        entries.append({"business_id": b.business_id, "business_name": b.name,
                        "calls": {k: c[k] for k in ("total", "completed", "avg_duration_seconds")},
                        "leads": _leads_totals(_one(leads_of.get(b.business_id)))})
    return {"period": _period(reach, days), "businesses": entries}


DAYS_QUERY = {"type": "integer", "minimum": 1, "maximum": DAYS[1], "default": DAYS[0],
              "description": "the last `days` local days, today included, in each business's time zone"}
AGENT_ID = {"type": "string", "format": "uuid", "description": "one of the key's agents (404 otherwise)"}
PERIOD = ("The period is the last `days` whole local days, today included, each business's calls and leads cut "
          "in its own time zone (the workspace's timezone, UTC unless set); period.since is its first day. Rates "
          "are percentages with two decimals, 0.0 over nothing; averages have two decimals, 0.0 over nothing. ")


def _query(**props) -> dict:
    return {"type": "object", "properties": {"days": DAYS_QUERY, **props}}


CALLS_RPC = "switchboard.v1.Calls/AggregateCalls"
LEADS_RPC = "switchboard.v1.Sdr/AggregateLeads"
ZONES_RPC = "switchboard.v1.Accounts/BusinessZones"
DIRECTORY_RPC = "switchboard.v1.Agents/AgentDirectory"
ROUTES = [
    Route("GET", f"{V1}/dashboard", dashboard, "Leads, calls and agents at a glance", "analytics",
          scope="calls:read", query=_query(), response="AnalyticsDashboard", errors=ERRORS,
          rpcs=(ZONES_RPC, CALLS_RPC, LEADS_RPC, DIRECTORY_RPC, "switchboard.v1.Sdr/ListLeads"),
          description=PERIOD + "leads.by_status counts the period's leads by their current status and "
          "conversion_rate is converted / total; leads.recent lists the 5 newest leads of the period (Lead objects) "
          "only for a key that also has leads:read (else []). agents.total counts every agent of the key's "
          "businesses; top_by_calls the 5 with the most calls in the period."),
    Route("GET", f"{V1}/calls", calls_report, "Calls over time", "analytics", scope="calls:read",
          query=_query(group_by={"type": "string", "enum": ["day", "week"], "default": "day"}, agent_id=AGENT_ID),
          response="AnalyticsCalls", errors=ERRORS,
          rpcs=(ZONES_RPC, "switchboard.v1.Agents/LookupAgents", CALLS_RPC),
          description=PERIOD + "The timeline has one entry per day of the period (or per week it touches, named by "
          "its Monday), oldest first, with zeros for a day without calls; statuses counts the calls by their "
          "current status."),
    Route("GET", f"{V1}/funnel", funnel, "The lead funnel", "analytics", scope="leads:read",
          query=_query(source={"type": "string", "pattern": r"^[A-Za-z0-9_.:-]{1,100}$",
                               "description": "only leads of this source"}),
          response="AnalyticsFunnel", errors=ERRORS, rpcs=(ZONES_RPC, LEADS_RPC),
          description=PERIOD + "Stages new, contacted, qualified, converted over the period's leads: a stage counts "
          "the leads at it or past it (by current status); a lead that left the pipeline (lost, unqualified, spam, "
          "do_not_contact) counts in new only. rate_from_top = count / total_leads; dropoff_rate = the share of the "
          "previous stage that did not reach this one (0.0 for new). lost counts the leads whose status is lost."),
    Route("GET", f"{V1}/agents", agents_report, "Calls and leads per agent", "analytics", scope="calls:read",
          query=_query(agent_id=AGENT_ID), response="AnalyticsAgents", errors=ERRORS,
          rpcs=(ZONES_RPC, DIRECTORY_RPC, "switchboard.v1.Agents/LookupAgents", CALLS_RPC, LEADS_RPC),
          description=PERIOD + "Every agent of the key's businesses (or the one asked for), zeros included, the most "
          "calls first; leads are those the agent created (lead.agent_id)."),
    Route("GET", f"{V1}/weekly", weekly, "This week against last week", "analytics", scope="calls:read",
          query={"type": "object", "properties": {}}, response="AnalyticsWeekly", errors=ERRORS,
          rpcs=(ZONES_RPC, DIRECTORY_RPC, CALLS_RPC, LEADS_RPC),
          description="Weeks run Monday to Sunday in each business's time zone; this week is the current one so "
          "far. change = (this_week - last_week) / last_week as a percentage with two decimals; when last week had "
          "none it is null if this week has some, 0.0 if not. period shows the weeks' dates in the businesses' "
          "time zone (UTC when they use several). top_agents: the 5 with the most calls this week."),
    Route("GET", f"{V1}/businesses", businesses_report, "Calls and leads per business", "analytics",
          scope="calls:read", query=_query(), response="AnalyticsBusinesses", errors=ERRORS,
          rpcs=(ZONES_RPC, CALLS_RPC, LEADS_RPC),
          description=PERIOD + "Every business of the key (a key bound to one business: that one), zeros included, "
          "in the order they were created."),
]
