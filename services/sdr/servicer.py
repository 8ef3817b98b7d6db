"""Sdr gRPC servicer: requests into the lead use cases (services.sdr.service), the analytics reports
(services.sdr.analytics_service) and the platform's health (services.sdr.health_service), rows and reports into
replies."""
from __future__ import annotations

from core import registry
from core.grpc_server import Runtime
from core.messages import optional, set_timestamp
from core.pagination import Page, opt_datetime
from services.sdr import calls_consumer, domain, held_businesses, sms_consumer
from services.sdr.analytics_port import GrpcAnalyticsSources
from services.sdr.analytics_service import Reports
from services.sdr.health_port import GrpcHealthSources
from services.sdr.health_service import Health
from services.sdr.pipeline_runner import PipelineParts
from services.sdr.pipeline_servicer import PipelineServicer
from services.sdr.ports import grpc_neighbours
from services.sdr.runs_service import Runs
from services.sdr.runs_servicer import RunsServicer
from services.sdr.service import Audit, LeadFilters, Leads
from services.sdr.voicemails import VOICEMAIL_SUBJECT, VoicemailRecorder
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc

# The LeadFields a create or update may carry.
FIELDS = tuple(sdr_pb2.LeadFields.DESCRIPTOR.fields_by_name)
VOICEMAIL_OUT = ("lead_id", "call_id", "from_number", "transcript", "recording_url")


def lead_message(row) -> sdr_pb2.Lead:
    """From a SQLAlchemy row or an asyncpg record."""
    row = getattr(row, "_mapping", row)
    lead = sdr_pb2.Lead(id=str(row["id"]), business_id=str(row["business_id"]), status=row["status"],
                        source=row["source"], score=row["score"], interaction_count=row["interaction_count"],
                        score_confidence=row["score_confidence"], score_explanation=row["score_explanation"],
                        score_factors=row["score_factors"])
    for name in domain.LEAD_OUT:
        if row[name] is not None:
            setattr(lead, name, str(row[name]))
    set_timestamp(lead, "created_at", row["created_at"])
    for name in ("updated_at", "converted_at", "last_inbound_at", "email_known_at"):
        set_timestamp(lead, name, row[name])
    return lead


def voicemail_message(row) -> sdr_pb2.Voicemail:
    v = sdr_pb2.Voicemail(id=str(row.id), business_id=str(row.business_id))
    for name in VOICEMAIL_OUT:
        if getattr(row, name) is not None:
            setattr(v, name, str(getattr(row, name)))
    set_timestamp(v, "received_at", row.received_at)
    return v


def audit_message(audit: Audit) -> sdr_pb2.LeadAudit:
    reply = sdr_pb2.LeadAudit(window_hours=audit.window_hours, stalled_days=audit.stalled_days,
                              hot_score=audit.hot_score)
    set_timestamp(reply, "as_of", audit.as_of)
    for name, group in audit.groups.items():
        getattr(reply, name).CopyFrom(sdr_pb2.LeadGroup(count=group.count, leads=[lead_message(r) for r in group.rows]))
    reply.voicemails_unhandled.count = audit.voicemails.count
    reply.voicemails_unhandled.voicemails.extend(voicemail_message(r) for r in audit.voicemails.rows)
    return reply


def _given(fields: sdr_pb2.LeadFields) -> dict[str, str]:
    return {f: getattr(fields, f) for f in FIELDS if fields.HasField(f)}


class SdrServicer(RunsServicer, PipelineServicer, sdr_pb2_grpc.SdrServicer):
    def __init__(self, leads: Leads, runs: Runs, parts: PipelineParts, reports: Reports, health: Health):
        self.leads, self.runs, self.reports, self.health = leads, runs, reports, health
        self.pipeline, self.actions, self.runner, self.scheduled = parts.pipeline, parts.actions, parts.run, \
            parts.runner

    async def CreateLead(self, request, context):
        return lead_message(await self.leads.create(request.business_id, _given(request.fields)))

    async def UpdateLead(self, request, context):
        return lead_message(await self.leads.update(request.id, _given(request.fields)))

    async def GetLead(self, request, context):
        return lead_message(await self.leads.get(request.id))

    async def ListLeads(self, request, context):
        filters = LeadFilters(
            statuses=tuple(request.statuses),
            **{f: optional(request, f) for f in ("source", "agent_id", "phone", "email", "score_gte", "score_lte")},
            **{f: opt_datetime(request, f) for f in ("created_after", "created_before", "updated_after",
                                                    "updated_before")})
        paged = await self.leads.list(filters, Page.of(request.page, *domain.LEADS_PAGE))
        return sdr_pb2.ListLeadsReply(leads=[lead_message(r) for r in paged.rows], page=paged.info())

    async def AuditLeads(self, request, context):
        return audit_message(await self.leads.audit(
            optional(request, "window_hours"), optional(request, "stalled_days"), optional(request, "hot_score"),
            opt_datetime(request, "as_of")))

    async def FindLeadByPhone(self, request, context):
        found = await self.leads.find_by_phone(request.business_id, request.phone)
        return sdr_pb2.FoundLead(lead=lead_message(found)) if found is not None else sdr_pb2.FoundLead()

    async def UpsertContact(self, request, context):
        given = {f: getattr(request, f) for f in ("name", "email", "agent_id", "agent_name") if optional(request, f)}
        if request.source:
            given["source"] = request.source
        row, created = await self.leads.upsert_contact(request.business_id, request.phone, given)
        return sdr_pb2.UpsertContactReply(lead=lead_message(row), created=created)

    async def RecordInteraction(self, request, context):
        return lead_message(await self.leads.record_interaction(
            request.lead_id, request.channel, request.direction, request.reference, optional(request, "intent"),
            opt_datetime(request, "occurred_at")))

    # -- analytics: each report's dict is its reply's fields ----------------------------------------------------

    async def GetDashboardReport(self, request, context):
        report = await self.reports.dashboard(request.days, request.recent_leads)
        report["leads"]["recent"] = [lead_message(r) for r in report["leads"]["recent"]]
        return sdr_pb2.DashboardReport(**report)

    async def GetCallsReport(self, request, context):
        return sdr_pb2.CallsReport(**await self.reports.calls(request.days, request.group_by,
                                                              optional(request, "agent_id")))

    async def GetFunnelReport(self, request, context):
        return sdr_pb2.FunnelReport(**await self.reports.funnel(request.days, optional(request, "source")))

    async def GetAgentsReport(self, request, context):
        return sdr_pb2.AgentsReport(**await self.reports.agents(request.days, optional(request, "agent_id")))

    async def GetWeeklyReport(self, request, context):
        return sdr_pb2.WeeklyReport(**await self.reports.weekly())

    async def GetBusinessesReport(self, request, context):
        return sdr_pb2.BusinessesReport(**await self.reports.businesses(request.days))

    async def GetBusinessInfo(self, request, context):
        return sdr_pb2.BusinessInfo(**await self.reports.business_info(optional(request, "business_id"),
                                                                       request.call_counts))

    async def GetHealth(self, request, context):
        return sdr_pb2.PlatformHealth(**await self.health.report())


def build(runtime: Runtime) -> SdrServicer:
    clients = {name: runtime.client(name) for name in ("agents", "accounts", "messaging", "calls")}
    others = grpc_neighbours(clients.__getitem__)  # one client of each service, shared by every use case
    leads = Leads(runtime.db, runtime.pool, others.agents)
    runtime.consume("sdr-voicemails", VoicemailRecorder(runtime.db).handle,
                    filter_subject=VOICEMAIL_SUBJECT)
    runtime.consume(calls_consumer.CONSUMER, calls_consumer.CallRecorder(leads).handle,
                    filter_subject=calls_consumer.CALLS_SUBJECT, batch=250, batched=True)
    runtime.consume(sms_consumer.CONSUMER, sms_consumer.TextRecorder(leads).handle,
                    filter_subject=sms_consumer.SMS_SUBJECT, batch=250, batched=True)
    runtime.consume(held_businesses.CONSUMER,
                    held_businesses.StandingRecorder(runtime.db).handle,
                    filter_subject=held_businesses.SUBJECT)
    runs = Runs(runtime.db, others, runtime.settings.compliance_policy())
    reports = Reports(GrpcAnalyticsSources(clients["accounts"], clients["agents"], clients["calls"]), leads)
    names = tuple(s.name for s in registry.SERVICES)
    health = Health(GrpcHealthSources({name: runtime.channel(name) for name in names}, clients["agents"],
                                      clients["messaging"], clients["accounts"]), names)
    return SdrServicer(leads, runs, PipelineParts.of(runtime, others), reports, health)
