"""The Sdr gRPC service: one servicer per capability, composed.

Each capability of sdr answers its own RPCs in its own module and servicer class, over its own use cases: the leads
(leads_servicer), communication runs (runs_servicer), the sales pipeline (pipeline_servicer), the analytics reports
(analytics_servicer, over the port analytics_port), the platform's health (health_servicer, over health_port) and
the bookings (bookings_servicer: a business's availability, its free slots and its appointments), erasing a person
(erasure_servicer, the accounts service's privacy job's step, and the retention the business set) and a business's
export (export_pages, a step of the accounts service's export job).
They stay one `Sdr` gRPC service with one proto: the gateway, the MCP tools and the other services call these RPCs
through one client, deadline table and caller rules (core.registry), and a separate gRPC service per capability would
change the proto and each of those callers without changing what any of them does. `SdrServicer` is the composition
gRPC registers: each RPC resolves to the one capability class that defines it (the generated base, last in the
order, answers UNIMPLEMENTED for none), each class initialised with its own use cases."""
from __future__ import annotations

from core import registry
from core.grpc_server import Runtime
from core.uow import UnitOfWork
from services.sdr import calls_consumer, held_businesses, sms_consumer
from services.sdr.analytics_port import GrpcAnalyticsSources
from services.sdr.analytics_service import Reports
from services.sdr.analytics_servicer import AnalyticsServicer
from services.sdr.bookings_service import Bookings
from services.sdr.bookings_servicer import BookingsServicer
from services.sdr.data_retention import DataRetention
from services.sdr.erasure import Erasure
from services.sdr.erasure_servicer import ErasureServicer
from services.sdr.export_pages import ExportServicer, SdrExport
from services.sdr.health_port import GrpcHealthSources
from services.sdr.health_service import Health
from services.sdr.health_servicer import HealthServicer
from services.sdr.leads_servicer import LeadsServicer
from services.sdr.pipeline_runner import PipelineParts
from services.sdr.pipeline_servicer import PipelineServicer
from services.sdr.ports import grpc_neighbours
from services.sdr.repository import sql_unit
from services.sdr.runs_service import Runs
from services.sdr.runs_servicer import RunsServicer
from services.sdr.schema import outbox
from services.sdr.service import Leads
from services.sdr.voicemails import VOICEMAIL_SUBJECT, VoicemailRecorder
from switchboard.v1 import sdr_pb2_grpc


class SdrServicer(LeadsServicer, RunsServicer, PipelineServicer, AnalyticsServicer, HealthServicer, BookingsServicer,
                  ErasureServicer, ExportServicer, sdr_pb2_grpc.SdrServicer):
    """The capabilities' servicers as the one Sdr service, each given its own use cases."""

    def __init__(self, leads: Leads, runs: Runs, parts: PipelineParts, reports: Reports, health: Health,
                 bookings: Bookings, erasure: Erasure, retention: DataRetention, export: SdrExport):
        LeadsServicer.__init__(self, leads)
        RunsServicer.__init__(self, runs)
        PipelineServicer.__init__(self, parts)
        AnalyticsServicer.__init__(self, reports)
        HealthServicer.__init__(self, health)
        BookingsServicer.__init__(self, bookings)
        ErasureServicer.__init__(self, erasure, retention)
        ExportServicer.__init__(self, export)


def build(runtime: Runtime) -> SdrServicer:
    clients = {name: runtime.client(name) for name in ("agents", "accounts", "messaging", "calls")}
    others = grpc_neighbours(clients.__getitem__)  # one client of each service, shared by every use case
    uow = UnitOfWork(runtime.db, sql_unit(runtime.db), events=outbox)
    leads = Leads(uow, others.agents)
    runtime.consume("sdr-voicemails", VoicemailRecorder(uow).handle,
                    filter_subject=VOICEMAIL_SUBJECT)
    runtime.consume(calls_consumer.CONSUMER, calls_consumer.CallRecorder(leads).handle,
                    filter_subject=calls_consumer.CALLS_SUBJECT, batch=250, batched=True)
    runtime.consume(sms_consumer.CONSUMER, sms_consumer.TextRecorder(leads).handle,
                    filter_subject=sms_consumer.SMS_SUBJECT, batch=250, batched=True)
    runtime.consume(held_businesses.CONSUMER,
                    held_businesses.StandingRecorder(uow).handle,
                    filter_subject=held_businesses.SUBJECT)
    runs = Runs(uow, others, runtime.settings.compliance_policy())
    reports = Reports(GrpcAnalyticsSources(clients["accounts"], clients["agents"], clients["calls"]), leads)
    names = tuple(s.name for s in registry.SERVICES)
    health = Health(GrpcHealthSources({name: runtime.channel(name) for name in names}, clients["agents"],
                                      clients["messaging"], clients["accounts"]), names)
    bookings = Bookings(uow, others.accounts, others.calls)
    return SdrServicer(leads, runs, PipelineParts.of(runtime, others), reports, health, bookings, Erasure(uow),
                       DataRetention(uow), SdrExport(uow, leads, runs, bookings))
