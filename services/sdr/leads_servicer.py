"""The leads' RPCs of the Sdr gRPC service: requests into the lead use cases (services.sdr.service), records into
replies."""
from __future__ import annotations

from core.interceptors import Context
from core.messages import optional, set_timestamp
from core.pagination import Page, opt_datetime
from services.sdr import domain
from services.sdr.records import ListedLead, Voicemail
from services.sdr.service import Audit, LeadFilters, Leads
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc

# The LeadFields a create or update may carry.
FIELDS = tuple(sdr_pb2.LeadFields.DESCRIPTOR.fields_by_name)
VOICEMAIL_OUT = ("lead_id", "call_id", "from_number", "transcript", "recording_url")


def lead_message(row: ListedLead) -> sdr_pb2.Lead:
    """A listed lead or a whole one (services.sdr.records.Lead)."""
    lead = sdr_pb2.Lead(id=str(row.id), business_id=str(row.business_id), status=row.status, source=row.source,
                        score=row.score, interaction_count=row.interaction_count,
                        score_confidence=row.score_confidence, score_explanation=row.score_explanation,
                        score_factors=row.score_factors)
    for name in domain.LEAD_OUT:
        if getattr(row, name) is not None:
            setattr(lead, name, str(getattr(row, name)))
    set_timestamp(lead, "created_at", row.created_at)
    for name in ("updated_at", "converted_at", "last_inbound_at", "email_known_at"):
        set_timestamp(lead, name, getattr(row, name))
    return lead


def voicemail_message(row: Voicemail) -> sdr_pb2.Voicemail:
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


class LeadsServicer(sdr_pb2_grpc.SdrServicer):
    """Creating, changing, finding and auditing leads, over `leads`."""

    def __init__(self, leads: Leads):
        self.leads = leads

    async def CreateLead(self, request: sdr_pb2.CreateLeadRequest, context: Context) -> sdr_pb2.Lead:
        return lead_message(await self.leads.create(request.business_id, _given(request.fields)))

    async def UpdateLead(self, request: sdr_pb2.UpdateLeadRequest, context: Context) -> sdr_pb2.Lead:
        return lead_message(await self.leads.update(request.id, _given(request.fields)))

    async def GetLead(self, request: sdr_pb2.GetLeadRequest, context: Context) -> sdr_pb2.Lead:
        return lead_message(await self.leads.get(request.id))

    async def ListLeads(self, request: sdr_pb2.ListLeadsRequest, context: Context) -> sdr_pb2.ListLeadsReply:
        filters = LeadFilters(
            statuses=tuple(request.statuses),
            **{f: optional(request, f) for f in ("source", "agent_id", "phone", "email", "score_gte", "score_lte")},
            created_after=opt_datetime(request, "created_after"), created_before=opt_datetime(request, "created_before"),
            updated_after=opt_datetime(request, "updated_after"), updated_before=opt_datetime(request, "updated_before"))
        paged = await self.leads.list(filters, Page.of(request.page, *domain.LEADS_PAGE))
        return sdr_pb2.ListLeadsReply(leads=[lead_message(r) for r in paged.rows], page=paged.info())

    async def AuditLeads(self, request: sdr_pb2.AuditLeadsRequest, context: Context) -> sdr_pb2.LeadAudit:
        return audit_message(await self.leads.audit(
            optional(request, "window_hours"), optional(request, "stalled_days"), optional(request, "hot_score"),
            opt_datetime(request, "as_of")))

    async def FindLeadByPhone(self, request: sdr_pb2.FindLeadByPhoneRequest, context: Context) -> sdr_pb2.FoundLead:
        found = await self.leads.find_by_phone(request.business_id, request.phone)
        return sdr_pb2.FoundLead(lead=lead_message(found)) if found is not None else sdr_pb2.FoundLead()

    async def UpsertContact(self, request: sdr_pb2.UpsertContactRequest,
                            context: Context) -> sdr_pb2.UpsertContactReply:
        given = {f: getattr(request, f) for f in ("name", "email", "agent_id", "agent_name") if optional(request, f)}
        if request.source:
            given["source"] = request.source
        row, created = await self.leads.upsert_contact(request.business_id, request.phone, given)
        return sdr_pb2.UpsertContactReply(lead=lead_message(row), created=created)

    async def RecordCallerLead(self, request: sdr_pb2.RecordCallerLeadRequest,
                               context: Context) -> sdr_pb2.RecordCallerLeadReply:
        row, created, changed = await self.leads.record_caller(
            request.business_id, request.phone, request.call_id, request.direction, optional(request, "lead_id"),
            _given(request.fields), optional(request, "intent"))
        return sdr_pb2.RecordCallerLeadReply(lead=lead_message(row), created=created, changed=changed)

    async def RecordInteraction(self, request: sdr_pb2.RecordInteractionRequest, context: Context) -> sdr_pb2.Lead:
        return lead_message(await self.leads.record_interaction(
            request.lead_id, request.channel, request.direction, request.reference, optional(request, "intent"),
            opt_datetime(request, "occurred_at")))
