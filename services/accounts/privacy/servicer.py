"""privacy's RPCs: creating, reading and listing erasures of a person (the job: service.py)."""
from __future__ import annotations

from core.interceptors import Context
from core.messages import optional, set_timestamp
from core.pagination import Page
from services.accounts.privacy import domain
from services.accounts.privacy.service import Erasures
from services.accounts.records import ErasureRecord
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc

ERASURES_PAGE = (50, 100)


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


class PrivacyServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, erasures: Erasures):
        self.erasures = erasures

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
