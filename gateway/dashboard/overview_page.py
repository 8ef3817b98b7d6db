"""The dashboard's overview (`/dashboard`): the chosen business's subscription, trial and provisioning; the figures
of the API's analytics dashboard report over the owner's businesses, with the calls per day and the lead funnel drawn
as SVG on the server (gateway.dashboard.charts); and this session's end, with signing out. Every figure comes from
the RPC the API's report makes, as the signed-in owner; and the business's daily spend limits with today's use (as
GET /api/v1/balance shows them)."""
from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from contracts.accounts import SESSION_IDLE
from gateway.context import deps
from gateway.dashboard import charts, pages
from gateway.dashboard.forms import form_token
from gateway.dashboard.layout import html
from gateway.dashboard.pages import HOME, signed_in
from gateway.dashboard.session_cookie import session_token
from gateway.dashboard.templates import page, when
from switchboard.v1 import accounts_pb2, messaging_pb2, sdr_pb2

PERIODS = (7, 30, 90)  # the periods offered, in days (the reports' own limit is 90)

# Where the card checkout sends the owner back (services.accounts.billing.payments_service.open_checkout).
CHECKOUT_RETURNS = {
    "complete": "Checkout complete: your trial has started and your intake agent and phone number are being set "
                "up; this page shows how far.",
    "canceled": "Checkout canceled: nothing was charged. Open the checkout_url from your signup again to start "
                "your trial.",
}
SIGNED_OUT_RETURN = " Open the magic link from your signup to sign in."
# What signup's set-up of the intake agent and number is doing, by its status (accounts.proto Provisioning).
SET_UP = {"waiting_payment": "waiting for the card checkout to complete", "pending": "about to start",
          "running": "under way", "retrying": "will try again", "canceled": "canceled"}


def period(asked: str) -> int:
    """The period asked for if offered, else 30 days."""
    return int(asked) if asked.isdigit() and int(asked) in PERIODS else 30


def minutes_and_seconds(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


def trial(workspace: accounts_pb2.Workspace, now: datetime) -> str:
    """When the workspace's trial ends, or that it has ended."""
    if not workspace.HasField("trial_ends_at"):
        return ""
    ends = workspace.trial_ends_at.ToDatetime(tzinfo=UTC)
    return f"{'ended' if ends <= now else 'ends'} {when(workspace.trial_ends_at)}"


def calls_chart(report: sdr_pb2.CallsReport) -> dict[str, Any]:
    points = [(b.date, float(b.total)) for b in report.timeline]
    top = charts.scale_top(max((v for _, v in points), default=0))
    completed = charts.columns([(b.date, float(b.completed)) for b in report.timeline], top)
    return {"bars": charts.columns(points, top), "completed": completed, "top": top, "timeline": report.timeline}


def funnel_chart(report: sdr_pb2.FunnelReport) -> dict[str, Any]:
    points = [(s.stage, float(s.count)) for s in report.funnel]
    top = charts.scale_top(max((v for _, v in points), default=0))
    return {"bars": charts.rows(points, top), "stages": report.funnel, "lost": report.lost}


async def overview(request: web.Request) -> web.StreamResponse:
    returned = CHECKOUT_RETURNS.get(request.query.get("checkout", ""))
    if returned and not session_token(request, deps(request).settings):
        return html(returned + (SIGNED_OUT_RETURN if request.query["checkout"] == "complete" else ""))
    session, principal = await signed_in(request)
    days = period(request.query.get("days", ""))
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(request.query.get("business_id", ""), businesses)
    accounts = deps(request).clients["accounts"].as_caller(principal.tenant)
    sdr = deps(request).clients["sdr"].as_caller(principal.tenant)
    messaging = deps(request).clients["messaging"].as_caller(principal.tenant)
    workspace, dashboard, calls, funnel, spent = await asyncio.gather(
        accounts.GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=business_id)) if business_id else asyncio.sleep(0),
        sdr.GetDashboardReport(sdr_pb2.DashboardReportRequest(days=days, recent_leads=True)),
        sdr.GetCallsReport(sdr_pb2.CallsReportRequest(days=days)),
        sdr.GetFunnelReport(sdr_pb2.FunnelReportRequest(days=days)),
        messaging.GetDailySpend(messaging_pb2.GetDailySpendRequest()))
    now = datetime.now(UTC)
    return page("overview.html", title="Overview", active="home", form_token=form_token(session),
                businesses=businesses, business_id=business_id, notice=returned, error=None, days=days,
                periods=PERIODS, workspace=workspace, trial=trial(workspace, now) if workspace else "",
                report=dashboard, duration=minutes_and_seconds, calls=calls_chart(calls),
                funnel=funnel_chart(funnel), chart=charts,
                spend=next((s for s in spent.businesses if s.business_id == business_id), None), set_up=SET_UP, idle_hours=int(SESSION_IDLE.total_seconds() // 3600),
                session_ends=f"{principal.expires_at:%Y-%m-%d %H:%M} UTC" if principal.expires_at else "")


def add_routes(app: web.Application) -> None:
    app.router.add_get(HOME, overview)
