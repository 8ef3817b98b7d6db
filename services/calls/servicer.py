"""Calls gRPC servicer: requests into the call use cases (services.calls.service), rows into replies."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from core import aggregates, standings
from core.bus import PROVIDER_STREAM
from core.grpc_server import Runtime
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.metrics import Sample
from core.pagination import Page
from providers import configured
from providers.voice.vapi.server_messages import QUEUED_SUBJECT
from services.calls import domain, lifecycle_service
from services.calls.booking_tools import BookingTools
from services.calls.data_retention import DataRetention
from services.calls.domain import CallFilter
from services.calls.erasure import Erasure
from services.calls.export_pages import CallsExport
from services.calls.inbound_reconciliation import InboundReconciliation
from services.calls.inbound_service import Inbound
from services.calls.lead_tools import LeadTools
from services.calls.lifecycle_service import Lifecycle
from services.calls.ports import GrpcOwners, grpc_neighbours
from services.calls.reaper import Reaper
from services.calls.records import ToolCallRecord
from services.calls.repository import calls_units
from services.calls.service import Calls, NewCall
from services.calls.tool_sweep import ToolCallSweep
from services.calls.tools_service import ToolCalls
from services.calls.transfer_service import Transfers
from switchboard.v1 import calls_pb2, calls_pb2_grpc, common_pb2

CALLS_PAGE = (50, 100)
TRANSCRIPTS_PAGE = (20, 50)
COMPLIANCE = {calls_pb2.COMPLIANCE_MODE_UNSPECIFIED: "skip", calls_pb2.COMPLIANCE_MODE_SKIP: "skip",
              calls_pb2.COMPLIANCE_MODE_ENFORCE: "enforce"}
OPTIONAL_OUT = {"agent_name": "agent_name", "lead_id": "lead_id", "name": "name", "summary": "summary",
                "recording_url": "recording_url", "from": "from_number", "ended_reason": "ended_reason",
                "context": "context", "forwarded_to": "forwarded_to"}


def call_message(row: Any) -> calls_pb2.Call:
    call = calls_pb2.Call(id=str(row.id), conversation_id=row.provider_call_id or "", status=row.status,
                          direction=row.direction, duration=row.duration, agent_id=str(row.agent_id),
                          business_id=str(row.business_id), to=row.to_number, max_duration=row.max_duration,
                          variables=struct(row.variables))
    for field, column in OPTIONAL_OUT.items():
        if getattr(row, column) is not None:
            setattr(call, field, str(getattr(row, column)))
    if row.quality_dimensions is not None:
        call.quality_dimensions.CopyFrom(calls_pb2.QualityDimensions(**row.quality_dimensions))
    set_timestamp(call, "created_at", row.created_at)
    set_timestamp(call, "updated_at", row.updated_at)
    set_timestamp(call, "started_at", row.started_at)
    set_timestamp(call, "ended_at", row.ended_at)
    if row.structured_data is not None:
        call.structured_data.CopyFrom(struct(row.structured_data))
    if row.recording_disclosure is not None:
        call.recording_disclosure.CopyFrom(disclosure_message(row.recording_disclosure, row.recording_consent))
    return call


def call_detail(row: Any, tool_calls: list[ToolCallRecord]) -> calls_pb2.Call:
    """A call with its tool calls, as GetCall answers (and a business's export holds) it."""
    call = call_message(row)
    call.tool_calls.extend(tool_call_message(t) for t in tool_calls)
    return call


def tool_call_message(row: ToolCallRecord) -> calls_pb2.CallToolCall:
    out = calls_pb2.CallToolCall(id=row.tool_call_id, name=row.name, arguments=struct(row.arguments),
                                 result=row.result, outcome=row.outcome, duration_ms=row.duration_ms)
    set_timestamp(out, "created_at", row.created_at)
    return out


def disclosure_message(kept: dict[str, Any], consent: dict[str, Any] | None) -> calls_pb2.CallRecordingDisclosure:
    """A call's recording disclosure (domain.recording_disclosure) with the answer its report gave, if any."""
    out = calls_pb2.CallRecordingDisclosure(
        spoken=kept["spoken"], reason=kept["reason"], states=kept["states"],
        rules=[calls_pb2.RecordingConsentRule(**rule) for rule in kept["rules"]],
        consent_type=kept.get("consent_type"))
    if kept["spoken"] and consent is not None:
        granted = consent.get("granted_at")
        out.consent = "granted" if granted else "not_granted"
        set_timestamp(out, "consent_granted_at", datetime.fromisoformat(granted) if granted else None)
    return out


def _time(request: calls_pb2.ListCallsRequest, field: str) -> datetime | None:
    """A Timestamp of the request, or None when it is unset."""
    return getattr(request, field).ToDatetime(tzinfo=UTC) if request.HasField(field) else None


def transcript_message(row: Any) -> calls_pb2.Transcript:
    item = calls_pb2.Transcript(call_id=str(row.id), conversation_id=row.provider_call_id or "",
                                agent_id=str(row.agent_id), agent_name=row.agent_name, status=row.status,
                                duration=row.duration, summary=row.summary,
                                transcript=domain.agent_caller_lines(row.transcript or ""))  # "": erased
    set_timestamp(item, "created_at", row.created_at)
    return item


class CallsServicer(calls_pb2_grpc.CallsServicer):
    def __init__(self, calls: Calls, lifecycle: Lifecycle, erasure: Erasure, retention: DataRetention,
                 export: CallsExport):
        self.calls = calls
        self.lifecycle = lifecycle
        self.erasure = erasure
        self.retention = retention
        self.export = export

    async def ListTranscripts(self, request: calls_pb2.ListTranscriptsRequest,
                              context: Context) -> calls_pb2.ListTranscriptsReply:
        paged = await self.calls.transcripts(optional(request, "agent_id"), optional(request, "days"),
                                             Page.of(request.page, *TRANSCRIPTS_PAGE))
        return calls_pb2.ListTranscriptsReply(transcripts=[transcript_message(r) for r in paged.rows],
                                              page=paged.info())

    async def GetTranscript(self, request: calls_pb2.GetCallRequest, context: Context) -> calls_pb2.Transcript:
        return transcript_message(await self.calls.transcript(request.id))

    async def GetRecording(self, request: calls_pb2.GetRecordingRequest, context: Context) -> calls_pb2.Recording:
        link = await self.calls.recording(request.call_id)
        row = link.row
        reply = calls_pb2.Recording(call_id=str(row.id), duration=row.duration, recording_url=link.url,
                                    recording_status=link.recording_status, transcript_status=link.transcript_status)
        set_timestamp(reply, "recording_url_expires_at", link.expires_at)
        return reply

    async def GetRecordingSource(self, request: calls_pb2.GetRecordingSourceRequest,
                                 context: Context) -> calls_pb2.RecordingSource:
        return calls_pb2.RecordingSource(url=await self.calls.recording_source(request.call_id, request.expires,
                                                                               request.signature))

    async def HandleProviderMessage(self, request: calls_pb2.ProviderMessage,
                                    context: Context) -> calls_pb2.ProviderMessageReply:
        answer = await self.lifecycle.handle(request.body)
        return calls_pb2.ProviderMessageReply(response_json=json.dumps(answer))

    async def CreateCall(self, request: calls_pb2.CreateCallRequest, context: Context) -> calls_pb2.Call:
        return call_message(await self.calls.create(new_call(request), optional(request, "idempotency_key")))

    async def PlaceCall(self, request: calls_pb2.CreateCallRequest, context: Context) -> calls_pb2.PlaceCallReply:
        placed = await self.calls.place(new_call(request), optional(request, "idempotency_key"))
        if isinstance(placed, common_pb2.ComplianceDecision):
            return calls_pb2.PlaceCallReply(deferred=placed)
        return calls_pb2.PlaceCallReply(call=call_message(placed))

    async def GetCall(self, request: calls_pb2.GetCallRequest, context: Context) -> calls_pb2.Call:
        return call_detail(*await self.calls.detail(request.id))

    async def ListCalls(self, request: calls_pb2.ListCallsRequest, context: Context) -> calls_pb2.ListCallsReply:
        filters = CallFilter(**{f: optional(request, f) for f in ("agent_id", "status", "direction")},
                             created_from=_time(request, "created_from"),
                             created_before=_time(request, "created_before"))
        paged = await self.calls.list(filters, Page.of(request.page, *CALLS_PAGE), optional(request, "business_id"))
        return calls_pb2.ListCallsReply(calls=[call_message(r) for r in paged.rows], page=paged.info())

    async def AggregateCalls(self, request: common_pb2.AggregateRequest, context: Context) -> common_pb2.Aggregates:
        query = aggregates.query_of(request)
        return aggregates.reply_of(await self.calls.aggregate(query, optional(request, "agent_id")), query.group_by)

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        return await self.erasure.erase(request)

    async def ApplyRetention(self, request: common_pb2.RetentionRequest,
                             context: Context) -> common_pb2.RetentionReport:
        return await self.retention.apply(request)
    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)


def new_call(request: calls_pb2.CreateCallRequest) -> NewCall:
    return NewCall(agent_id=request.agent_id, to=request.to, compliance=COMPLIANCE[request.compliance],
                   **{f: optional(request, f) for f in ("name", "context", "first_message", "lead_id", "webhook_url",
                                                        "max_duration", "callee_timezone", "actor", "reference",
                                                        "external_ref", "touch_id")},
                   business_hours=(request.business_hours.start_hour, request.business_hours.end_hour)
                   if request.HasField("business_hours") else None)


def build(runtime: Runtime) -> CallsServicer:
    s = runtime.settings
    voice = runtime.closing(configured.voice(s))
    others = grpc_neighbours(runtime.client)
    held = standings.heard_by(runtime)
    units = calls_units(runtime.db)
    calls = Calls(units, voice, others, recording_secret=s.recording_links_secret.reveal(), base_url=s.public_base_url,
                  standings=held, idempotency_lease=timedelta(seconds=s.idempotency_lease_seconds))
    inbound = Inbound(units, others, standings=held)
    tools = ToolCalls(units, others.agents, texts=others.texts,
                      bookings=BookingTools(others.bookings, others.leads), leads=LeadTools(others.leads))
    lifecycle = Lifecycle(units, voice, inbound, tools, Transfers(tools, GrpcOwners(runtime.client("accounts"))))
    # A stored provider message is retried until it applies (max_deliver -1: a database outage of any length loses
    # none); only one that can never apply is terminated.
    runtime.consume(lifecycle_service.CONSUMER, lifecycle.apply_stored, stream=PROVIDER_STREAM,
                    filter_subject=QUEUED_SUBJECT, batch=250, batched=True, max_deliver=-1)
    reaper = Reaper(units, voice, lifecycle, interval=s.calls_reaper_interval_seconds,
                    margin=s.calls_reaper_margin_seconds)
    runtime.run(reaper)
    runtime.run(InboundReconciliation(units, voice, lifecycle, interval=s.calls_reconcile_seconds,
                                      lookback=timedelta(minutes=s.calls_reconcile_lookback_minutes)))

    async def stuck() -> Sample:
        return [(await reaper.stuck(), {})]  # no label: nothing of a business

    runtime.gauge("switchboard.calls.stuck", "{call}", "Calls without an outcome the reaper has not closed in time",
                  stuck)
    runtime.run(ToolCallSweep(units))
    return CallsServicer(calls, lifecycle, Erasure(units, voice), DataRetention(units, voice),
                         CallsExport(units, call_detail))
