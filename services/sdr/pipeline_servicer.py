"""The sales pipeline's RPCs of the Sdr gRPC service: requests into services.sdr.pipeline_service, views into replies."""
from __future__ import annotations

from contracts.pipeline import ACTIVITY_LIMIT
from core.ids import utcnow
from core.interceptors import Context
from core.messages import optional, set_timestamp
from services.sdr import pipeline_domain as rules
from services.sdr.pipeline_records import Activity
from services.sdr.pipeline_run import RunOutcome
from services.sdr.pipeline_runner import PipelineParts
from services.sdr.pipeline_service import ConfigView, PipelineLead
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc

LEAD_TEXT = ("name", "email", "phone")


def config_message(view: ConfigView) -> sdr_pb2.SdrConfig:
    c = view.config
    msg = sdr_pb2.SdrConfig(business_id=view.business_id, saved=view.saved, enabled=c.enabled,
                            min_touch_gap_hours=c.min_touch_gap_hours, max_touches=c.max_touches,
                            auto_call=c.auto_call, auto_email=c.auto_email, auto_sms=c.auto_sms,
                            sdr_agent_id=c.sdr_agent_id, business_hours_start=c.business_hours_start,
                            business_hours_end=c.business_hours_end, email_from_account_id=c.email_from_account_id)
    set_timestamp(msg, "updated_at", view.updated_at)
    return msg


def pipeline_lead_message(lead: PipelineLead) -> sdr_pb2.PipelineLead:
    row = lead.row
    msg = sdr_pb2.PipelineLead(
        id=str(row.id), status=row.status, source=row.source, segment=lead.segment, score=row.score,
        touch_count=row.touch_count, next_action=lead.next.action, next_action_reason=lead.next.reason,
        paused=row.paused, **{f: getattr(row, f) for f in LEAD_TEXT if getattr(row, f) is not None})
    for name, value in (("last_touch", row.last_touch_at), ("next_action_at", lead.next.not_before),
                        ("created_at", row.created_at), ("updated_at", row.updated_at)):
        set_timestamp(msg, name, value)
    return msg


def activity_message(row: Activity) -> sdr_pb2.PipelineActivity:
    msg = sdr_pb2.PipelineActivity(id=str(row.id), lead_id=str(row.lead_id), action=row.action, status=row.status,
                                   detail=row.detail, touch_number=row.touch_number, reference=row.reference,
                                   origin=row.origin)
    set_timestamp(msg, "created_at", row.created_at)
    set_timestamp(msg, "updated_at", row.updated_at)
    return msg


class PipelineServicer(sdr_pb2_grpc.SdrServicer):
    """The sales pipeline's config, view, actions, runs and report, over its parts: the pipeline's use cases
    (services.sdr.pipeline_service), the actions on a lead (pipeline_actions), a run now (pipeline_run) and the
    scheduled runner (pipeline_runner)."""

    def __init__(self, parts: PipelineParts):
        self.pipeline, self.actions, self.runner, self.scheduled = parts.pipeline, parts.actions, parts.run, \
            parts.runner

    async def GetSdrConfig(self, request: sdr_pb2.GetSdrConfigRequest, context: Context) -> sdr_pb2.SdrConfig:
        return config_message(await self.pipeline.config(request.business_id))

    async def PutSdrConfig(self, request: sdr_pb2.PutSdrConfigRequest, context: Context) -> sdr_pb2.SdrConfig:
        changes = {name: optional(request, name) for name in rules.CONFIG_FIELDS}
        return config_message(await self.pipeline.put_config(request.business_id, changes))

    async def GetPipeline(self, request: sdr_pb2.GetPipelineRequest, context: Context) -> sdr_pb2.Pipeline:
        view = await self.pipeline.pipeline(request.business_id, optional(request, "segment"), request.limit)
        return sdr_pb2.Pipeline(business_id=view.business_id, enabled=view.enabled, summary=sdr_pb2.PipelineSummary(
            total_leads=view.total, actionable=view.actionable, needs_manual=view.needs_manual),
            leads=[pipeline_lead_message(lead) for lead in view.leads])

    async def ActOnLead(self, request: sdr_pb2.LeadActionRequest, context: Context) -> sdr_pb2.LeadActionReply:
        done = await self.actions.act(request.business_id, request.lead_id, request.action)
        return sdr_pb2.LeadActionReply(success=done.success, action=done.action, lead_id=done.lead_id,
                                       detail=done.detail, replayed=done.replayed)

    async def ListPipelineActivity(self, request: sdr_pb2.ListPipelineActivityRequest,
                                   context: Context) -> sdr_pb2.PipelineActivityList:
        rows = await self.pipeline.activity(request.business_id, optional(request, "lead_id"),
                                            request.limit or ACTIVITY_LIMIT[0])
        return sdr_pb2.PipelineActivityList(activity=[activity_message(r) for r in rows])

    async def RunPipeline(self, request: sdr_pb2.RunPipelineRequest, context: Context) -> sdr_pb2.PipelineRunReply:
        outcome = await self.runner.run(request.business_id, request.dry_run)
        return run_reply(outcome)

    async def RunScheduled(self, request: sdr_pb2.RunScheduledRequest, context: Context) -> sdr_pb2.RunScheduledReply:
        window_start, runs = await self.scheduled.run_window(utcnow(), optional(request, "business_id"))
        reply = sdr_pb2.RunScheduledReply(runs=[sdr_pb2.ScheduledBusinessRun(
            business_id=r.business_id, status=r.status, briefing_id=r.briefing_id,
            summary=sdr_pb2.PipelineRunSummary(**r.outcome.summary) if r.outcome else None,
            skipped=r.outcome.skipped if r.outcome else 0) for r in runs])
        set_timestamp(reply, "window_start", window_start)
        return reply

    async def GetPipelineReport(self, request: sdr_pb2.GetPipelineReportRequest,
                                context: Context) -> sdr_pb2.PipelineReport:
        report = await self.pipeline.report(request.business_id, optional(request, "period"))
        reply = sdr_pb2.PipelineReport(
            business_id=report.business_id, period=report.period, actions=report.actions, outcomes=report.outcomes,
            new_leads=report.new_leads, hot_leads=[pipeline_lead_message(p) for p in report.hot],
            stale_leads=[pipeline_lead_message(p) for p in report.stale])
        set_timestamp(reply, "since", report.since)
        set_timestamp(reply, "until", report.until)
        return reply


def run_reply(outcome: RunOutcome) -> sdr_pb2.PipelineRunReply:
    return sdr_pb2.PipelineRunReply(
        success=not outcome.errors, dry_run=outcome.dry_run, summary=sdr_pb2.PipelineRunSummary(**outcome.summary),
        skipped=outcome.skipped, results=[sdr_pb2.PipelineRunResult(
            success=r.success, action=r.action, lead_id=r.lead_id, detail=r.detail, code=r.code)
            for r in outcome.results])
