"""Leads: create, read, list with filters, partial update, and the pipeline health audit."""
from __future__ import annotations

from typing import Any

from contracts import leads
from gateway.convert import to_json
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import E164, LEAD_CREATE, LEAD_STATUSES, LEAD_UPDATE, UUID
from gateway.timeparse import set_time
from switchboard.v1 import sdr_pb2

SDR = "switchboard.v1.Sdr"
V1 = "/api/v1"
FIELDS = tuple(sdr_pb2.LeadFields.DESCRIPTOR.fields_by_name)
TIME = {"type": "string", "format": "date-time"}
LIST_QUERY = page_query(
    50, 100, id=UUID,
    status={"type": "array", "items": {"type": "string", "enum": LEAD_STATUSES},
            "description": "one or several statuses, comma-separated or repeated"},
    source={"type": "string"}, agent_id=UUID,
    phone={**E164, "description": "exact, E.164 (e.g. +14155550123)"}, email={"type": "string", "description": "exact"},
    created_after=TIME, created_before={**TIME, "description": "also the cursor: pass the created_at of the last "
                                        "lead of a page to get the next one"},
    updated_after=TIME, updated_before=TIME,
    score_gte={"type": "integer", "minimum": 0, "maximum": 100},
    score_lte={"type": "integer", "minimum": 0, "maximum": 100})
LIST_QUERY["properties"]["after"]["description"] = "deprecated cursor: use created_before"
LIST_QUERY["properties"]["after"]["deprecated"] = True
AUDIT_QUERY = {"type": "object", "properties": {
    **{name: {"type": "integer", "minimum": low, "maximum": high, "default": leads.AUDIT_DEFAULTS[name]}
       for name, (low, high) in leads.AUDIT_BOUNDS.items()},
    "as_of": {**TIME, "description": "the moment the snapshot describes; default now"}}}
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request")


def _fields(body: dict[str, Any]) -> sdr_pb2.LeadFields:
    return set_fields(sdr_pb2.LeadFields(), body, *FIELDS)


async def list_leads(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(sdr_pb2.ListLeadsRequest(page=ctx.page_request()), q, "source", "agent_id", "phone", "email",
                     "score_gte", "score_lte")
    req.statuses.extend(q.get("status", []))
    for field in ("created_after", "created_before", "updated_after", "updated_before"):
        if field in q:
            set_time(getattr(req, field), q[field], field)
    reply = await ctx.rpc("sdr").ListLeads(req)
    return ctx.listing("leads", [to_json(lead) for lead in reply.leads], reply.page)


async def get_lead(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").GetLead(sdr_pb2.GetLeadRequest(id=ctx.query["id"])))


async def create_lead(ctx: RequestContext) -> Reply:
    req = sdr_pb2.CreateLeadRequest(business_id=ctx.body["business_id"], fields=_fields(ctx.body))
    return to_json(await ctx.rpc("sdr").CreateLead(req))


async def update_lead(ctx: RequestContext) -> Reply:
    req = sdr_pb2.UpdateLeadRequest(id=ctx.body["id"], fields=_fields(ctx.body))
    return to_json(await ctx.rpc("sdr").UpdateLead(req))


async def audit(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(sdr_pb2.AuditLeadsRequest(), q, "window_hours", "stalled_days", "hot_score")
    if "as_of" in q:
        set_time(req.as_of, q["as_of"], "as_of")
    return to_json(await ctx.rpc("sdr").AuditLeads(req))


ROUTES = [
    Route("GET", f"{V1}/leads", list_leads, "List leads newest first, or read one with ?id=", "leads",
          scope="leads:read", query=LIST_QUERY, response=("LeadList", "Lead"), read_one=get_lead,
          errors=ERRORS,
          rpcs=(f"{SDR}/ListLeads", f"{SDR}/GetLead"),
          description="Across the key's businesses. Every filter combines with the others; phone and email match "
          "exactly after normalization (E.164, lower-cased email). Pages: while has_more is true, pass the "
          "created_at of the last lead as created_before (after is the deprecated name of the same cursor). With "
          "?id=: the lead itself (schema Lead); a lead of another business is 404."),
    Route("POST", f"{V1}/leads", create_lead, "Create a lead", "leads", scope="leads:write", body=LEAD_CREATE,
          response="Lead", status=201, creates=Creates("lead_id"), errors=ERRORS, rpcs=(f"{SDR}/CreateLead",),
          description="status defaults to new and source to api. business_id must be one of the key's businesses "
          "(403). The lead is scored at once (see GET /api/v1/leads/audit for the rules) and lead.created and "
          "lead.scored are emitted. Phone numbers must be E.164 and emails valid: 400 naming the field."),
    Route("PATCH", f"{V1}/leads", update_lead, "Change some fields of a lead", "leads", scope="leads:write",
          body=LEAD_UPDATE, response="Lead", errors=ERRORS, rpcs=(f"{SDR}/UpdateLead",),
          description="Only the fields sent change (updated_at moves only when a value changes). status may be "
          "new, contacted, qualified, converted or lost; other values are 400 invalid_request. A change that "
          "moves the score emits lead.scored."),
    Route("GET", f"{V1}/leads/audit", audit, "Pipeline health snapshot", "leads", scope="leads:read",
          query=AUDIT_QUERY, response="LeadAudit", errors=("unauthorized", "forbidden", "invalid_request"),
          rpcs=(f"{SDR}/AuditLeads",),
          description="As of as_of (default now), across the key's businesses, each group as {count, first 50}: "
          "hot_leads (open leads, i.e. new, contacted or qualified, scoring at least hot_score; hottest first), "
          "stalled_leads (open leads neither updated nor active for stalled_days; oldest first), signups_today "
          "(leads created in the window_hours before as_of; newest first), voicemails_unhandled (voicemails "
          "nobody has called or texted back since). Scores: " + leads.rules_in_words()),
]
