"""Analytics area: six reports over the key's businesses, each composed by the sdr service
(services.sdr.analytics_service: it asks accounts, agents and calls for what it needs as the caller and counts the
leads itself; services.sdr.analytics_domain has the rules). A route checks the query, makes one RPC and writes its
reply as JSON."""
from __future__ import annotations

from typing import Any

from contracts import analytics
from contracts.leads import FUNNEL_STAGES, STATUSES
from gateway.convert import to_json
from gateway.route import Reply, RequestContext, Route
from switchboard.v1 import sdr_pb2

V1 = "/api/v1/analytics"
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request")


def _days(ctx: RequestContext) -> int:
    """The `days` asked for; 0 (unset) when none, for the report's default."""
    return int(ctx.query.get("days", 0))


async def dashboard(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetDashboardReport(sdr_pb2.DashboardReportRequest(
        days=_days(ctx), recent_leads=ctx.principal.has_scope("leads:read"))))


async def calls_report(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetCallsReport(sdr_pb2.CallsReportRequest(
        days=_days(ctx), group_by=ctx.query.get("group_by", ""), agent_id=ctx.query.get("agent_id"))))


async def funnel(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetFunnelReport(sdr_pb2.FunnelReportRequest(
        days=_days(ctx), source=ctx.query.get("source"))))


async def agents_report(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetAgentsReport(sdr_pb2.AgentsReportRequest(
        days=_days(ctx), agent_id=ctx.query.get("agent_id"))))


async def weekly(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetWeeklyReport(sdr_pb2.WeeklyReportRequest()))


async def businesses_report(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetBusinessesReport(sdr_pb2.BusinessesReportRequest(days=_days(ctx))))


DAYS_QUERY = {"type": "integer", "minimum": 1, "maximum": analytics.DAYS[1], "default": analytics.DAYS[0],
              "description": "the last `days` local days, today included, in each business's time zone"}
AGENT_ID = {"type": "string", "format": "uuid", "description": "one of the key's agents (404 otherwise)"}
PERIOD = ("The period is the last `days` whole local days, today included, each business's calls and leads cut "
          "in its own time zone (the workspace's timezone, UTC unless set); period.since is its first day. Rates "
          "are percentages with two decimals, 0.0 over nothing; averages have two decimals, 0.0 over nothing. ")


# The statuses of leads that left the pipeline: they count in the funnel's first stage only.
LEFT_FUNNEL = tuple(s for s in STATUSES if s not in FUNNEL_STAGES)


def _query(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"days": DAYS_QUERY, **props}}


ROUTES = [
    Route("GET", f"{V1}/dashboard", dashboard, "Leads, calls and agents at a glance", "analytics",
          scope="calls:read", query=_query(), response="AnalyticsDashboard", errors=ERRORS,
          rpcs=("switchboard.v1.Sdr/GetDashboardReport",),
          description=PERIOD + "leads.by_status counts the period's leads by their current status and "
          "conversion_rate is converted / total; leads.recent lists the 5 newest leads of the period (Lead objects) "
          "only for a key that also has leads:read (else []). agents.total counts every agent of the key's "
          "businesses; top_by_calls the 5 with the most calls in the period."),
    Route("GET", f"{V1}/calls", calls_report, "Calls over time", "analytics", scope="calls:read",
          query=_query(group_by={"type": "string", "enum": list(analytics.BUCKETS), "default": analytics.BUCKETS[0]},
                       agent_id=AGENT_ID),
          response="AnalyticsCalls", errors=ERRORS, rpcs=("switchboard.v1.Sdr/GetCallsReport",),
          description=PERIOD + "The timeline has one entry per day of the period (or per week it touches, named by "
          "its Monday), oldest first, with zeros for a day without calls; statuses counts the calls by their "
          "current status."),
    Route("GET", f"{V1}/funnel", funnel, "The lead funnel", "analytics", scope="leads:read",
          query=_query(source={"type": "string", "pattern": r"^[A-Za-z0-9_.:-]{1,100}$",
                               "description": "only leads of this source"}),
          response="AnalyticsFunnel", errors=ERRORS, rpcs=("switchboard.v1.Sdr/GetFunnelReport",),
          description=PERIOD + f"Stages {', '.join(FUNNEL_STAGES)} over the period's leads: a stage counts the "
          f"leads at it or past it (by current status); a lead that left the pipeline ({', '.join(LEFT_FUNNEL)}) "
          "counts in new only. rate_from_top = count / total_leads; dropoff_rate = the share of the "
          "previous stage that did not reach this one (0.0 for new). lost counts the leads whose status is lost."),
    Route("GET", f"{V1}/agents", agents_report, "Calls and leads per agent", "analytics", scope="calls:read",
          query=_query(agent_id=AGENT_ID), response="AnalyticsAgents", errors=ERRORS,
          rpcs=("switchboard.v1.Sdr/GetAgentsReport",),
          description=PERIOD + "Every agent of the key's businesses (or the one asked for), zeros included, the most "
          "calls first; leads are those the agent created (lead.agent_id)."),
    Route("GET", f"{V1}/weekly", weekly, "This week against last week", "analytics", scope="calls:read",
          query={"type": "object", "properties": {}}, response="AnalyticsWeekly", errors=ERRORS,
          rpcs=("switchboard.v1.Sdr/GetWeeklyReport",),
          description="Weeks run Monday to Sunday in each business's time zone; this week is the current one so "
          "far. change = (this_week - last_week) / last_week as a percentage with two decimals; when last week had "
          "none it is null if this week has some, 0.0 if not. period shows the weeks' dates in the businesses' "
          "time zone (UTC when they use several). top_agents: the 5 with the most calls this week."),
    Route("GET", f"{V1}/businesses", businesses_report, "Calls and leads per business", "analytics",
          scope="calls:read", query=_query(), response="AnalyticsBusinesses", errors=ERRORS,
          rpcs=("switchboard.v1.Sdr/GetBusinessesReport",),
          description=PERIOD + "Every business of the key (a key bound to one business: that one), zeros included, "
          "in the order they were created."),
]
