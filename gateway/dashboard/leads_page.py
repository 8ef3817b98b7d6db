"""The leads pages of one business: the list (filtered by status, source, lowest score and pipeline segment, paged by
cursor) and one
lead's page (its details, score, calls, texts and pipeline activity), where the owner changes its status and pauses
or resumes it in the sales pipeline. Every read and action is the RPC the API route makes (`/api/v1/leads`,
`/api/sdr/action`, `/api/sdr/activity`), as the signed-in owner; a lead of another owner is 404."""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

import grpc
from aiohttp import web
from multidict import MultiMapping

from contracts import leads as leads_contract
from contracts.pipeline import PIPELINE_LIMIT, SEGMENTS
from core.grpc_errors import from_rpc_error
from core.rpc import AsCaller
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import LEADS_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import calls_pb2, common_pb2, messaging_pb2, sdr_pb2


class _Filtered(Protocol):
    """What the list's filters read of a lead (the pipeline's and the leads' own have these)."""

    status: str
    source: str
    score: int


L = TypeVar("L", bound=_Filtered)

LEADS_SHOWN, RECENT_SHOWN, ACTIVITY_SHOWN = 25, 100, 50
FILTERS = ("status", "source", "score_gte", "segment")
DETAILS = ("phone", "email", "source", "agent_name", "address", "city", "state", "zip", "event_type", "event_date",
           "message", "notes")


def _filters(query: MultiMapping[str]) -> tuple[dict[str, str], str | None]:
    """The list's filters as given (for the form and the next page's address), and what is wrong with them."""
    given = {name: query.get(name, "").strip() for name in FILTERS}
    if given["status"] and given["status"] not in leads_contract.STATUSES:
        return given, f"status is one of {', '.join(leads_contract.STATUSES)}"
    if given["score_gte"] and not (given["score_gte"].isdigit() and int(given["score_gte"]) <= 100):
        return given, "the lowest score is a whole number from 0 to 100"
    if given["segment"] and given["segment"] not in SEGMENTS:
        return given, f"segment is one of {', '.join(SEGMENTS)}"
    return given, None


def matching(leads: Iterable[L], given: dict[str, str]) -> list[L]:
    """The leads (the pipeline's, which has no other filters) that the status, source and lowest score given keep."""
    return [lead for lead in leads if (not given["status"] or lead.status == given["status"])
            and (not given["source"] or lead.source == given["source"])
            and (not given["score_gte"] or lead.score >= int(given["score_gte"]))]


async def _in_segment(request: web.Request, principal: Principal, business_id: str, given: dict[str, str]) -> list[Any]:
    """The segment's leads that match the other filters: the sales pipeline's view (GET /api/sdr/pipeline?segment=),
    its first PIPELINE_LIMIT, as ListLeads knows no segments."""
    pipeline = await deps(request).clients["sdr"].as_caller(principal.tenant).GetPipeline(
        sdr_pb2.GetPipelineRequest(business_id=business_id, segment=given["segment"], limit=PIPELINE_LIMIT[1]))
    return matching(pipeline.leads, given)


async def leads(request: web.Request) -> web.StreamResponse:
    _, principal = await signed_in(request)
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(request.query.get("business_id", ""), businesses)
    given, wrong = _filters(request.query)
    context: dict[str, Any] = {"title": "Leads", "active": "leads", "businesses": businesses, "business_id": business_id,
               "filters": given, "statuses": leads_contract.STATUSES, "segments": SEGMENTS, "leads": [], "cursor": "",
               "notice": None, "segment_limit": PIPELINE_LIMIT[1],
               "query": {"business_id": business_id, **given}}
    if wrong:
        return page("leads.html", 400, error=f"No leads shown: {wrong}.", **context)
    if given["segment"]:
        try:
            context.update(leads=await _in_segment(request, principal, business_id, given))
        except grpc.aio.AioRpcError as exc:
            err = from_rpc_error(exc)
            return page("leads.html", err.http_status, error=f"No leads shown: {err.message}", **context)
        return page("leads.html", error=None, **context)
    req = sdr_pb2.ListLeadsRequest(page=common_pb2.PageRequest(limit=LEADS_SHOWN,
                                                               cursor=request.query.get("cursor", "")))
    if given["status"]:
        req.statuses.append(given["status"])
    if given["source"]:
        req.source = given["source"]
    if given["score_gte"]:
        req.score_gte = int(given["score_gte"])
    try:
        listed = await deps(request).clients["sdr"].as_caller(pages.of_business(principal, business_id)).ListLeads(req)
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("leads.html", err.http_status, error=f"No leads shown: {err.message}", **context)
    context.update(leads=listed.leads, cursor=listed.page.next_cursor if listed.page.has_more else "")
    return page("leads.html", error=None, **context)


def _paused(activity: Iterable[sdr_pb2.PipelineActivity]) -> bool:
    """Whether the pipeline leaves the lead alone: its latest pause or resume (newest first) was a pause."""
    return next((a.action == "pause" for a in activity if a.action in ("pause", "resume") and a.status == "done"),
                False)


async def _render(request: web.Request, session: str, principal: Principal, lead_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None) -> web.Response:
    sdr = deps(request).clients["sdr"].as_caller(principal.tenant)
    try:
        lead = await sdr.GetLead(sdr_pb2.GetLeadRequest(id=lead_id))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("lead.html", err.http_status, title="Lead", active="leads", lead=None, error=err.message,
                    notice=None)
    narrowed = pages.of_business(principal, lead.business_id)
    recent = common_pb2.PageRequest(limit=RECENT_SHOWN)
    calls = await deps(request).clients["calls"].as_caller(narrowed).ListCalls(calls_pb2.ListCallsRequest(page=recent))
    texts = await deps(request).clients["messaging"].as_caller(narrowed).ListMessages(
        messaging_pb2.ListMessagesRequest(page=recent))
    activity = (await sdr.ListPipelineActivity(sdr_pb2.ListPipelineActivityRequest(
        business_id=lead.business_id, lead_id=lead.id, limit=ACTIVITY_SHOWN))).activity
    details = {name.replace("_", " "): getattr(lead, name) for name in DETAILS if getattr(lead, name)}
    return page("lead.html", status, title=lead.name or lead.phone or lead.email or "Lead", active="leads",
                form_token=form_token(session), lead=lead, details=details, statuses=leads_contract.PATCH_STATUSES,
                rules=leads_contract.rules_in_words(), paused=_paused(activity), activity=activity,
                calls=[c for c in calls.calls if c.lead_id == lead.id],
                texts=[m for m in texts.messages if m.lead_id == lead.id], notice=notice, error=error)


async def lead_page(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.match_info["id"])


async def _act(request: web.Request, undone: str,
               act: Callable[[AsCaller, sdr_pb2.Lead, Form], Awaitable[str]]) -> web.StreamResponse:
    """A form of the lead's page: `act(sdr, lead, form)` does it and says what was done; a refusal is said on the
    page with its status (a lead of another owner: 404)."""
    lead_id = request.match_info["id"]
    posted = await pages.posted(request, _render, undone, lead_id)
    if isinstance(posted, web.Response):
        return posted
    session, principal, form = posted
    sdr = deps(request).clients["sdr"].as_caller(principal.tenant)
    try:
        notice = await act(sdr, await sdr.GetLead(sdr_pb2.GetLeadRequest(id=lead_id)), form)
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await _render(request, session, principal, lead_id, status=err.http_status,
                             error=f"Nothing was {undone}: {err.message}")
    return await _render(request, session, principal, lead_id, notice=notice)


async def change_status(request: web.Request) -> web.StreamResponse:
    async def act(sdr: AsCaller, lead: sdr_pb2.Lead, form: Form) -> str:
        changed = await sdr.UpdateLead(sdr_pb2.UpdateLeadRequest(
            id=lead.id, fields=sdr_pb2.LeadFields(status=str(form.get("status", "")))))
        return f"Status is now {changed.status}; score {changed.score}."
    return await _act(request, "changed", act)


async def pause_or_resume(request: web.Request) -> web.StreamResponse:
    async def act(sdr: AsCaller, lead: sdr_pb2.Lead, form: Form) -> str:
        action = "resume" if form.get("action") == "resume" else "pause"  # this form's actions alone
        done = await sdr.ActOnLead(sdr_pb2.LeadActionRequest(business_id=lead.business_id, lead_id=lead.id,
                                                             action=action))
        return f"{done.action.capitalize()}: {done.detail}."
    return await _act(request, "changed", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(LEADS_PATH, leads)
    app.router.add_get(f"{LEADS_PATH}/{{id}}", lead_page)
    app.router.add_post(f"{LEADS_PATH}/{{id}}/status", same_site_form(change_status))
    app.router.add_post(f"{LEADS_PATH}/{{id}}/pipeline", same_site_form(pause_or_resume))
