"""The sales pipeline (`/api/sdr`, camelCase businessId as the spec writes it): the pipeline of a business's leads
with their segments and next actions, and its SDR config. Every route takes a key (sdr:read for reads, sdr:write
for writes) or the dashboard session (no scope check)."""
from __future__ import annotations

from typing import Any

from contracts import pipeline
from contracts.pipeline import ACTIVITY_LIMIT, PERIODS, PIPELINE_LIMIT
from core.constant_time import same_secret
from core.errors import ServiceError
from gateway.convert import to_json
from gateway.dashboard.session_cookie import session_token
from gateway.route import PUBLIC, Reply, RequestContext, Route
from gateway.schemas import SDR_ACTION, SDR_CONFIG_PUT, SDR_RUN, SDR_RUNNER, UUID
from switchboard.v1 import sdr_pb2

SDR = "switchboard.v1.Sdr"
BASE = "/api/sdr"
READ, WRITE = "sdr:read", "sdr:write"
ERRORS = ("unauthorized", "forbidden", "invalid_request")
# The config's fields, as the request that saves them names them.
CONFIG_FIELDS = tuple(f.name for f in sdr_pb2.PutSdrConfigRequest.DESCRIPTOR.fields if f.name != "business_id")
BUSINESS_ID = {**UUID, "description": "the business whose pipeline this is (one of the caller's)"}


def _query(**properties: Any) -> dict[str, Any]:
    """The query schema of a route about one business's pipeline: businessId and these."""
    return {"type": "object", "required": ["businessId"], "properties": {"businessId": BUSINESS_ID, **properties}}


def _limit(bounds: tuple[int, int]) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": bounds[1], "default": bounds[0]}


def _config_json(config: sdr_pb2.SdrConfig) -> dict[str, Any]:
    return {"businessId": config.business_id, **to_json(config, omit=("business_id",))}


async def get_pipeline(ctx: RequestContext) -> Reply:
    req = sdr_pb2.GetPipelineRequest(business_id=ctx.query["businessId"], limit=ctx.query.get("limit", 0))
    if "segment" in ctx.query:
        req.segment = ctx.query["segment"]
    reply = await ctx.rpc("sdr").GetPipeline(req)
    return {"businessId": reply.business_id, "enabled": reply.enabled, "summary": to_json(reply.summary),
            "leads": [to_json(lead) for lead in reply.leads]}


async def get_config(ctx: RequestContext) -> Reply:
    return _config_json(await ctx.rpc("sdr").GetSdrConfig(sdr_pb2.GetSdrConfigRequest(
        business_id=ctx.query["businessId"])))


async def put_config(ctx: RequestContext) -> Reply:
    req = sdr_pb2.PutSdrConfigRequest(business_id=ctx.body["businessId"])
    for name in CONFIG_FIELDS:
        if ctx.body.get(name) is not None:
            setattr(req, name, ctx.body[name])
    return _config_json(await ctx.rpc("sdr").PutSdrConfig(req))


async def act(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("sdr").ActOnLead(sdr_pb2.LeadActionRequest(
        business_id=ctx.body["businessId"], lead_id=ctx.body["leadId"], action=ctx.body["action"]))
    return {"success": reply.success, "action": reply.action, "leadId": reply.lead_id, "detail": reply.detail,
            "replayed": reply.replayed}


async def run(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("sdr").RunPipeline(sdr_pb2.RunPipelineRequest(
        business_id=ctx.body["businessId"], dry_run=bool(ctx.body.get("dryRun", False))))
    results = [{"success": r.success, "action": r.action, "leadId": r.lead_id, "detail": r.detail}
               for r in reply.results]
    errors = [{"leadId": r.lead_id, "action": r.action, "code": r.code, "message": r.detail}
              for r in reply.results if not r.success]
    return {"success": reply.success, "dryRun": reply.dry_run, "summary": to_json(reply.summary),
            "results": results, "skipped": reply.skipped, "errors": errors}


def _check_runner_secret(ctx: RequestContext) -> None:
    """The scheduled runner takes the server secret alone: a key or a dashboard session is 403, anything else 401."""
    header = ctx.request.headers.get("Authorization", "")
    credential = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    if credential.startswith("svc_live_"):
        raise ServiceError("forbidden", "the scheduled runner is not callable with an API key; it takes the server "
                           "secret (SDR_RUNNER_SECRET)")
    if not credential and session_token(ctx.request, ctx.deps.settings):
        raise ServiceError("forbidden", "the scheduled runner is not callable with a dashboard session; it takes the "
                           "server secret (SDR_RUNNER_SECRET)")
    expected = ctx.deps.settings.sdr_runner_secret.reveal()
    if not credential or not same_secret(credential, expected):
        raise ServiceError("unauthorized", "send the server secret: 'Authorization: Bearer <SDR_RUNNER_SECRET>'")


async def runner(ctx: RequestContext) -> Reply:
    _check_runner_secret(ctx)
    req = sdr_pb2.RunScheduledRequest()
    if ctx.body.get("businessId"):
        req.business_id = ctx.body["businessId"]
    reply = await ctx.rpc("sdr").RunScheduled(req)
    return {"window_start": to_json(reply)["window_start"], "runs": [
        {"businessId": r.business_id, "status": r.status, "briefing_id": r.briefing_id or None,
         "summary": to_json(r.summary) if r.HasField("summary") else None, "skipped": r.skipped}
        for r in reply.runs]}


async def report(ctx: RequestContext) -> Reply:
    req = sdr_pb2.GetPipelineReportRequest(business_id=ctx.query["businessId"])
    if "period" in ctx.query:
        req.period = ctx.query["period"]
    return {"businessId": ctx.query["businessId"],
            **to_json(await ctx.rpc("sdr").GetPipelineReport(req), omit=("business_id",))}


async def activity(ctx: RequestContext) -> Reply:
    req = sdr_pb2.ListPipelineActivityRequest(business_id=ctx.query["businessId"], limit=ctx.query.get("limit", 0))
    if "leadId" in ctx.query:
        req.lead_id = ctx.query["leadId"]
    reply = await ctx.rpc("sdr").ListPipelineActivity(req)
    return {"businessId": ctx.query["businessId"], "activity": [to_json(entry) for entry in reply.activity]}


SEGMENTS = ("Segments (the first rule that matches): churned_recent (lost within 30 days); cold for any other "
            "closed lead (converted, lost, unqualified, spam, do_not_contact: never worked); exhausted (touch_count "
            "reached max_touches: the next touch would exceed it); fresh_demo_caller (called the business within "
            "24 h); speed_to_lead (new, created within 24 h, never touched); trial_ending (a lead of source trial "
            "whose 14-day trial ends within 3 days); new_trial_stuck (a trial lead in its first 3 days that never "
            "answered); trial_going_dark (a trial lead that answered before, not in the last 5 days); "
            "warm_demo_caller (called 1-7 days ago); cooling_demo (called 7-30 days ago); contacted_no_reply "
            "(touched, no inbound since the last touch); cold (anything else). ")
NEXT = ("next_action is call, sms, email, skip or escalate, with next_action_reason saying why and, for a touch that "
        "waits, next_action_at (the cadence's next allowed instant, or the compliance decision's next legal "
        "moment in the lead's own time zone within the business hours). Each segment is worked through its "
        "channels in order (speed_to_lead and fresh_demo_caller: call, sms, email; warm_demo_caller: sms, call, "
        "email; cooling_demo: email, sms; new_trial_stuck: email, call; trial_going_dark: email, sms; "
        "trial_ending: call, email; contacted_no_reply: sms, email), skipping a channel the lead has no contact for "
        "or whose auto toggle is off; escalate (the owner acts) when none is left, or when every touch is used. A "
        "call or text is never proposed against do-not-call, a missing consent, or outside the legal window. ")
CONFIG = ("The config: enabled (the master toggle, default false), min_touch_gap_hours (default 48, 0-2160), "
          "max_touches (default 6, 1-100), auto_call, auto_email, auto_sms (default false), sdr_agent_id (the agent "
          "that places the pipeline's calls: one of the business's, with a phone number; default the business's "
          "agent), business_hours_start and business_hours_end (whole hours 0-23 in the lead's local time, start "
          "before end; default 9 and 17), email_from_account_id (the verified sender of the pipeline's email: the "
          "id of the business owner's account; default the owner's address). saved is false while the business "
          "has saved none: the defaults stand. Once saved, the business hours bind every touch the platform "
          "checks for the business, not only the pipeline's: communication runs' calls and texts and calls placed "
          "with compliance enforce wait for them (rule business_hours in the decision log). ")

ACTION = ("call places a call with compliance enforce through the calls service (the config's sdr_agent_id, else "
          "the business's one agent with a number; the lead's enrichment); sms sends the pipeline's follow-up text "
          "through messaging with its checks (consent, do-not-call, quiet hours); email queues the follow-up email "
          "through the email queue, approved, to the lead's address; skip records that the lead was passed over; "
          "pause and resume flip the lead's paused. A touch (call, sms, email) of a closed lead (converted, lost, "
          "unqualified, spam, do_not_contact) or a paused one is 409 conflict; of a lead without the phone or email "
          "it needs, 400. The cadence: a touch within min_touch_gap_hours of the lead's last one, or beyond "
          "max_touches, is 429 rate_limited with error.nextAllowedAt (RFC 3339, the exact instant; null when the "
          "cap is reached) and Retry-After. A compliance refusal or deferral of a call or text answers the "
          "compliance code (number_on_dnc, dnc_registry_stale, number_opted_out, tcpa_violation). Each action writes one activity "
          "entry, and a touch counts towards touch_count and last_touch in the same transaction as its entry. The "
          "same lead and touch repeated within the touch gap answers the first result again with replayed true: "
          "a retried request never touches twice. ")

ROUTES = [
    Route("GET", f"{BASE}/pipeline", get_pipeline, "The sales pipeline: leads with segments and next actions", "sdr",
          scope=READ, sessions=True, query=_query(segment={"type": "string", "enum": list(pipeline.SEGMENTS)},
                                                  limit=_limit(PIPELINE_LIMIT)),
          response="SdrPipeline", errors=ERRORS, rpcs=(f"{SDR}/GetPipeline",),
          description="The business's leads (all of a segment with ?segment=) ordered by segment (in the order of "
          "the enum), then score and newest first, at most limit. summary counts every lead of the business: "
          "total_leads, actionable (its next action is a touch by segment, auto toggles and cadence; each listed "
          "lead's next_action also asks the compliance decision now) and needs_manual (next action escalate). "
          "Segments are kept per lead and brought up to date on read (a lead's change and the passing of time "
          "show at once); the first read after a config change that moves next actions (max_touches, "
          "min_touch_gap_hours, an auto toggle) works every lead again and takes longer for a large business. "
          + SEGMENTS + NEXT),
    Route("GET", f"{BASE}/config", get_config, "The business's SDR config", "sdr", scope=READ, sessions=True,
          query=_query(),
          response="SdrConfig", errors=ERRORS, rpcs=(f"{SDR}/GetSdrConfig",), description=CONFIG),
    Route("PUT", f"{BASE}/config", put_config, "Save the business's SDR config", "sdr", scope=WRITE, sessions=True,
          body=SDR_CONFIG_PUT, response="SdrConfig", errors=ERRORS, rpcs=(f"{SDR}/PutSdrConfig",),
          description="An upsert: the fields given change, the others keep their saved (or default) values; the "
          "whole result is checked (400 invalid_request naming the field). An empty string clears sdr_agent_id "
          "or email_from_account_id. " + CONFIG),
    Route("POST", f"{BASE}/action", act, "Act on one lead: call, email, sms, skip, pause or resume", "sdr",
          scope=WRITE, sessions=True, body=SDR_ACTION, response="SdrActionResult",
          errors=(*ERRORS, "not_found", "conflict", "rate_limited", "number_on_dnc", "dnc_registry_stale",
                  "number_opted_out", "tcpa_violation", "call_failed", "sms_send_failed", "content_blocked"),
          rpcs=(f"{SDR}/ActOnLead",), description=ACTION),
    Route("POST", f"{BASE}/run", run, "Work the business's pipeline now (or preview it with dryRun)", "sdr",
          scope=WRITE, sessions=True, body=SDR_RUN, response="SdrRun", errors=ERRORS, rpcs=(f"{SDR}/RunPipeline",),
          description="400 invalid_request when SDR is not enabled for the business. Every lead whose next action "
          "(see GET /api/sdr/pipeline) is a touch gets it, exactly as POST /api/sdr/action makes it (cadence, "
          "compliance decision, activity entry, origin api); a lead whose next action is escalate is counted in "
          "summary.escalated and listed with why. summary counts calls_queued, emails_queued, sms_sent, escalated "
          "and failed; results lists each lead worked ({success, action, leadId, detail}); skipped counts the "
          "leads left alone (closed, paused, waiting for the cadence or the legal window, nothing to do in their "
          "segment); errors lists the touches that failed ({leadId, action, code, message}); success is false when "
          "any failed. dryRun true computes the same, says what would be done, and dispatches nothing. "
          + SEGMENTS + NEXT),
    Route("POST", f"{BASE}/runner", runner, "The scheduled runner: work every enabled business's window now", "sdr",
          auth=PUBLIC, body=SDR_RUNNER, response="SdrRunner", errors=("unauthorized", "forbidden"),
          rpcs=(f"{SDR}/RunScheduled",),
          description="Takes the server secret only (Authorization: Bearer <SDR_RUNNER_SECRET>, by default derived "
          "from SWITCHBOARD_SECRET_KEY); an API key or a dashboard session is 403, no or a wrong secret 401. The "
          "sdr-runner worker does the same every SDR_RUNNER_POLL_SECONDS (default 60), so this route is for a "
          "Kubernetes CronJob or an operator. Every business with SDR enabled (or only businessId) whose run of the "
          "current two-hour window (of UTC, from midnight) has not completed gets one: its pipeline worked as POST "
          "/api/sdr/run does (as its owner, origin runner), then a briefing stored, e-mailed to the owner through "
          "the email queue and sent as dispatcher.briefing_created. One run per business and window, whatever the "
          "number of runners or calls (status taken: another runner holds it; held: the business is not in good "
          "standing, or the accounts service could not confirm it, and nothing was done); a runner that dies halfway is taken "
          "over after ten minutes without touching the leads already worked."),
    Route("GET", f"{BASE}/report", report, "What the pipeline did in a period and where it stands", "sdr",
          scope=READ, sessions=True,
          query=_query(period={"type": "string", "enum": list(PERIODS), "default": "week"}),
          response="SdrReport", errors=ERRORS, rpcs=(f"{SDR}/GetPipelineReport",),
          description="period: today (since midnight UTC), week (the last 7 days) or month (the last 30 days); "
          "since and until bound it. actions: the actions done in it by kind; outcomes: its activity entries by "
          "status (done, failed, pending); new_leads: leads created in it. hot_leads: the leads now in segment "
          "speed_to_lead, fresh_demo_caller or new_trial_stuck, hottest first; stale_leads: the leads now on "
          "manual review (next action escalate: the owner must act), oldest first; at most 50 each, as "
          "GET /api/sdr/pipeline shows a lead."),
    Route("GET", f"{BASE}/activity", activity, "The pipeline's activity log", "sdr", scope=READ, sessions=True,
          query=_query(leadId=UUID, limit=_limit(ACTIVITY_LIMIT)),
          response="SdrActivity", errors=ERRORS, rpcs=(f"{SDR}/ListPipelineActivity",),
          description="Newest first, of the business or of one lead (leadId): each action with its status (pending "
          "while a touch is being made, done, failed), what it did or why it failed (detail), the touch number, "
          "the call, text or email it made (reference) and its origin (api: a key or the dashboard session; "
          "runner: the scheduled runner; call: the agent's update_lead tool during the call its reference names, "
          "action update_lead)."),
]
