"""The sales pipeline page of one business: its leads by segment with counts, the leads it works next and those
waiting for the owner, its SDR config (saved here, checked by the service as `PUT /api/sdr/config` is), and what it
did lately (the report of a period and the activity log, the scheduled runner's runs among it). Every read and the
save are the RPCs the `/api/sdr` routes make, as the signed-in owner."""
from __future__ import annotations

from collections import Counter
from typing import Any

from aiohttp import web

from contracts import pipeline as pipeline_contract
from contracts.pipeline import PERIODS, PIPELINE_LIMIT
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import PIPELINE_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import sdr_pb2

ACTIVITY_SHOWN = 20
TOUCHES = ("call", "sms", "email")
NUMBERS = ("min_touch_gap_hours", "max_touches", "business_hours_start", "business_hours_end")
TOGGLES = ("enabled", "auto_call", "auto_email", "auto_sms")
TEXTS = ("sdr_agent_id", "email_from_account_id")


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None, period: str = "week") -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    period = period if period in PERIODS else "week"
    context = {"title": "Sales pipeline", "active": "pipeline", "businesses": businesses, "business_id": business_id,
               "notice": notice, "error": error, "period": period, "periods": PERIODS}
    if not business_id:
        return page("pipeline.html", status, pipeline=None, **context)
    sdr = deps(request).clients["sdr"].as_caller(principal.tenant)
    pipeline = await sdr.GetPipeline(sdr_pb2.GetPipelineRequest(business_id=business_id, limit=PIPELINE_LIMIT[1]))
    config = await sdr.GetSdrConfig(sdr_pb2.GetSdrConfigRequest(business_id=business_id))
    report = await sdr.GetPipelineReport(sdr_pb2.GetPipelineReportRequest(business_id=business_id, period=period))
    activity = await sdr.ListPipelineActivity(sdr_pb2.ListPipelineActivityRequest(business_id=business_id,
                                                                                  limit=ACTIVITY_SHOWN))
    counts = Counter(lead.segment for lead in pipeline.leads)
    return page("pipeline.html", status, form_token=form_token(session), pipeline=pipeline, config=config,
                report=report, activity=activity.activity, limit=PIPELINE_LIMIT[1],
                segments=[(s, counts[s]) for s in pipeline_contract.SEGMENTS if counts[s]],
                actionable=[lead for lead in pipeline.leads if lead.next_action in TOUCHES and not lead.paused],
                manual=[lead for lead in pipeline.leads if lead.next_action == "escalate"], **context)


async def pipeline(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""),
                         period=request.query.get("period", "week"))


def _config(business_id: str, form: Form) -> sdr_pb2.PutSdrConfigRequest:
    """The form's config, every field of it (an unticked box is false, an empty id clears it); ValueError naming a
    number field that is not a whole number."""
    req = sdr_pb2.PutSdrConfigRequest(business_id=business_id)
    for name in NUMBERS:
        text = str(form.get(name, "")).strip()
        if not text.lstrip("-").isdigit():
            raise ValueError(f"{name} must be a whole number")
        setattr(req, name, int(text))
    for name in TOGGLES:
        setattr(req, name, form.get(name) == "on")
    for name in TEXTS:
        setattr(req, name, str(form.get(name, "")).strip())
    return req


async def save_config(request: web.Request) -> web.StreamResponse:
    async def act(principal: Principal, form: Form) -> dict[str, Any]:
        try:
            req = _config(str(form.get("business_id", "")), form)
        except ValueError as exc:
            return {"status": 400, "error": f"Nothing was saved: {exc}."}
        await deps(request).clients["sdr"].as_caller(principal.tenant).PutSdrConfig(req)
        return {"notice": "The SDR config is saved."}
    return await pages.business_form(request, _render, "saved", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(PIPELINE_PATH, pipeline)
    app.router.add_post(f"{PIPELINE_PATH}/config", same_site_form(save_config))
