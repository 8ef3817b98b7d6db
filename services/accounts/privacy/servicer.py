"""privacy's RPCs: creating, reading and listing erasures of a person (the job: service.py) and exports of a
business's data (the job: exports.py), and reading an export's archive a part at a time."""
from __future__ import annotations

from core.interceptors import Context
from core.messages import optional, set_timestamp
from core.pagination import Page
from services.accounts.privacy import domain
from services.accounts.privacy import export_domain as export_rules
from services.accounts.privacy.exports import Exports
from services.accounts.privacy.service import Erasures
from services.accounts.records import ErasureRecord, ExportRecord
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc

ERASURES_PAGE = EXPORTS_PAGE = (50, 100)


def erasure_message(job: ErasureRecord) -> accounts_pb2.Erasure:
    """An erasure as answered: the subject masked, the report in step order."""
    message = accounts_pb2.Erasure(
        id=job.id, business_id=job.business_id, status=job.status, suppress=job.suppress, attempts=job.attempts,
        report=[accounts_pb2.ErasureStep(**line) for line in domain.report_lines(job.reports)],
        steps_done=domain.steps_done(job.reports))
    for field in ("phone_masked", "email_masked", "error"):
        if (value := getattr(job, field)) is not None:
            setattr(message, field, value)
    set_timestamp(message, "created_at", job.created_at)
    set_timestamp(message, "completed_at", job.completed_at)
    if job.status in domain.ACTIVE:
        set_timestamp(message, "next_attempt_at", job.next_attempt_at)
    return message


def export_message(job: ExportRecord, exports: Exports) -> accounts_pb2.Export:
    """An export as answered: each kind's progress, and a freshly signed link once completed."""
    message = accounts_pb2.Export(
        id=job.id, business_id=job.business_id, status=job.status, records=job.records, bytes=job.bytes,
        kinds=[accounts_pb2.ExportKind(kind=k["kind"], records=k["records"], done=k["done"]) for k in job.kinds])
    for field in ("error", "sha256"):
        if (value := getattr(job, field)) is not None:
            setattr(message, field, value)
    set_timestamp(message, "created_at", job.created_at)
    set_timestamp(message, "completed_at", job.completed_at)
    if job.status in (export_rules.COMPLETED, export_rules.EXPIRED):
        set_timestamp(message, "expires_at", job.expires_at)
    if (link := exports.link(job)) is not None:
        message.download_query = link.query
        set_timestamp(message, "download_expires_at", link.expires_at)
    return message


class PrivacyServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, erasures: Erasures, exports: Exports):
        self.erasures = erasures
        self.exports = exports

    async def CreateErasure(self, request: accounts_pb2.CreateErasureRequest, context: Context) -> accounts_pb2.CreatedErasure:
        job, existing = await self.erasures.create(optional(request, "business_id"), optional(request, "phone"),
                                                   optional(request, "email"), request.suppress,
                                                   request.idempotency_key or None)
        return accounts_pb2.CreatedErasure(erasure=erasure_message(job), existing=existing)

    async def GetErasure(self, request: accounts_pb2.GetErasureRequest, context: Context) -> accounts_pb2.Erasure:
        return erasure_message(await self.erasures.get(request.id))

    async def ListErasures(self, request: accounts_pb2.ListErasuresRequest, context: Context) -> accounts_pb2.ListErasuresReply:
        paged = await self.erasures.list(optional(request, "business_id"), Page.of(request.page, *ERASURES_PAGE))
        return accounts_pb2.ListErasuresReply(erasures=[erasure_message(j) for j in paged.rows], page=paged.info())

    async def CreateExport(self, request: accounts_pb2.CreateExportRequest, context: Context) -> accounts_pb2.Export:
        job = await self.exports.create(optional(request, "business_id"), request.idempotency_key or None)
        return export_message(job, self.exports)

    async def GetExport(self, request: accounts_pb2.GetExportRequest, context: Context) -> accounts_pb2.Export:
        return export_message(await self.exports.get(request.id), self.exports)

    async def ListExports(self, request: accounts_pb2.ListExportsRequest, context: Context) -> accounts_pb2.ListExportsReply:
        paged = await self.exports.list(optional(request, "business_id"), Page.of(request.page, *EXPORTS_PAGE))
        return accounts_pb2.ListExportsReply(exports=[export_message(j, self.exports) for j in paged.rows],
                                             page=paged.info())

    async def ReadExportPart(self, request: accounts_pb2.ReadExportPartRequest, context: Context) -> accounts_pb2.ExportPart:
        data, job = await self.exports.read_part(request.id, request.expires, request.signature, request.part)
        return accounts_pb2.ExportPart(data=data, parts=job.parts, bytes=job.bytes,
                                       filename=export_rules.archive_name(job.business_id, job.created_at))
