"""The analytics reports' RPCs of the Sdr gRPC service: requests into services.sdr.analytics_service, each report's
dict into its reply (a report's keys are its reply's fields)."""
from __future__ import annotations

from core.interceptors import Context
from core.messages import optional
from services.sdr.analytics_service import Reports
from services.sdr.leads_servicer import lead_message
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc


class AnalyticsServicer(sdr_pb2_grpc.SdrServicer):
    """The six reports and the connector's business info, over `reports`."""

    def __init__(self, reports: Reports):
        self.reports = reports

    async def GetDashboardReport(self, request: sdr_pb2.DashboardReportRequest,
                                 context: Context) -> sdr_pb2.DashboardReport:
        report = await self.reports.dashboard(request.days, request.recent_leads)
        report["leads"]["recent"] = [lead_message(r) for r in report["leads"]["recent"]]
        return sdr_pb2.DashboardReport(**report)

    async def GetCallsReport(self, request: sdr_pb2.CallsReportRequest, context: Context) -> sdr_pb2.CallsReport:
        return sdr_pb2.CallsReport(**await self.reports.calls(request.days, request.group_by,
                                                              optional(request, "agent_id")))

    async def GetFunnelReport(self, request: sdr_pb2.FunnelReportRequest, context: Context) -> sdr_pb2.FunnelReport:
        return sdr_pb2.FunnelReport(**await self.reports.funnel(request.days, optional(request, "source")))

    async def GetAgentsReport(self, request: sdr_pb2.AgentsReportRequest, context: Context) -> sdr_pb2.AgentsReport:
        return sdr_pb2.AgentsReport(**await self.reports.agents(request.days, optional(request, "agent_id")))

    async def GetWeeklyReport(self, request: sdr_pb2.WeeklyReportRequest, context: Context) -> sdr_pb2.WeeklyReport:
        return sdr_pb2.WeeklyReport(**await self.reports.weekly())

    async def GetBusinessesReport(self, request: sdr_pb2.BusinessesReportRequest,
                                  context: Context) -> sdr_pb2.BusinessesReport:
        return sdr_pb2.BusinessesReport(**await self.reports.businesses(request.days))

    async def GetBusinessInfo(self, request: sdr_pb2.BusinessInfoRequest, context: Context) -> sdr_pb2.BusinessInfo:
        return sdr_pb2.BusinessInfo(**await self.reports.business_info(optional(request, "business_id"),
                                                                       request.call_counts))
