"""The sdr service's records of a business for its export (issue 56): `ExportPage` (the accounts service's export
job alone may ask, core.registry.RPC_CALLERS) of the kinds
- `leads`: as GET /api/v1/leads shows them;
- `lead_audit`: the pipeline's activity log, what was done to each lead and why (GET /api/sdr/activity's entries);
- `runs`: communication runs as GET /api/v1/communication-runs shows them (with their job counts);
- `touches`: each touch of a run, its job, as GET /api/v1/communication-runs/jobs shows it;
- `bookings`: as GET /api/v1/bookings shows them (latest start first: the bookings' own order and index),
a page at a time (core.export_page), through the same use cases and messages as those routes, acting for the one
business exported."""
from __future__ import annotations

from core import export_page, tenant
from core.interceptors import Context
from core.pagination import encode_cursor
from core.uow import UnitOfWork
from services.sdr.bookings_service import Bookings, BookingView
from services.sdr.bookings_servicer import booking_message
from services.sdr.leads_servicer import lead_message
from services.sdr.pipeline_servicer import activity_message
from services.sdr.repository import SdrUnit
from services.sdr.runs_service import Runs, RunView
from services.sdr.runs_servicer import job_message, run_message
from services.sdr.service import LeadFilters, Leads
from switchboard.v1 import common_pb2, sdr_pb2_grpc

KINDS = ("leads", "lead_audit", "runs", "touches", "bookings")
ACTOR = "export"


class SdrExport:
    def __init__(self, uow: UnitOfWork[SdrUnit], leads: Leads, runs: Runs, bookings: Bookings):
        self.uow, self.leads, self.runs, self.bookings = uow, leads, runs, bookings

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        asked = export_page.asked(request, KINDS)
        with tenant.acting_as(tenant.acting_for(asked.business_id, ACTOR)):  # the lists read its business alone
            if asked.kind == "leads":
                paged = await self.leads.list(LeadFilters(), asked.page)
                return export_page.reply(paged.rows, paged, lead_message)
            if asked.kind == "lead_audit":
                async with self.uow.read() as work:
                    paged = await work.pipeline.activity_page(asked.business_id, asked.page)
                return export_page.reply(paged.rows, paged, activity_message)
            if asked.kind == "runs":
                paged, counts = await self.runs.list(None, None, None, asked.page)
                return export_page.reply(paged.rows, paged,
                                         lambda r: run_message(RunView(r, counts.get(str(r.id), {}))))
            if asked.kind == "touches":
                paged = await self.runs.jobs(None, None, None, None, asked.page)
                return export_page.reply(paged.rows, paged, job_message,
                                         lambda j: encode_cursor(j.scheduled_at, j.id))
            paged, zones = await self.bookings.list(None, None, None, None, asked.page)
            return export_page.reply(paged.rows, paged, lambda r: booking_message(BookingView(r, zones[r.business_id])),
                                     lambda r: encode_cursor(r.starts_at, r.id))


class ExportServicer(sdr_pb2_grpc.SdrServicer):
    """A page of the business's records for its export, over `export`."""

    def __init__(self, export: SdrExport):
        self.export = export

    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)
