"""What the privacy jobs need of the services holding personal data (core.registry.PERSONAL_DATA_SERVICES,
TEARDOWN_SERVICES): each one's ErasePerson (the erasure of a person, and a torn-down business's deletion) and
ApplyRetention (the retention job), as ports. `GrpcPersonalData` and `GrpcRetention` are the adapters over their RPCs
(which only the accounts service may make); the orchestrations' tests against the real database give the runners
scripted ones (tests/service), never in an end-to-end test."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from core.messages import set_timestamp
from services.accounts.data_retention_rules import Cutoffs
from services.accounts.privacy.domain import StepReport, StepRequest
from switchboard.v1 import common_pb2


class PersonalData(Protocol):
    async def erase(self, service: str, request: StepRequest) -> StepReport:
        """What `service` removed of the person; a refusal or an outage raises (core.errors.ServiceError for a
        service's answer)."""

    async def erase_business(self, service: str, business_id: str) -> StepReport:
        """What `service` removed of a torn-down business's personal data in one call (ErasePerson with
        whole_business, core.registry.TEARDOWN_SERVICES), `more` when it has more to remove; raises as `erase`."""


def request_message(request: StepRequest) -> common_pb2.ErasureRequest:
    return common_pb2.ErasureRequest(
        business_id=request.business_id, erasure_id=request.erasure_id, phones=request.phones, emails=request.emails,
        lead_ids=request.lead_ids, call_ids=request.call_ids, message_ids=request.message_ids,
        suppress=request.suppress)


def step_report(reply: common_pb2.ErasureReport) -> StepReport:
    return StepReport(tuple({"what": i.what, "action": i.action, "count": i.count} for i in reply.items),
                      tuple(reply.lead_ids), tuple(reply.call_ids), tuple(reply.message_ids), reply.more)


def business_request(business_id: str) -> common_pb2.ErasureRequest:
    """A whole business's deletion: the business names it (erasure_id too: the services' markers and logs)."""
    return common_pb2.ErasureRequest(business_id=business_id, erasure_id=business_id, whole_business=True)


class GrpcPersonalData:
    """`PersonalData` over the services' ErasePerson (clients acting for the current caller: the job's business)."""

    def __init__(self, clients: dict[str, Any]):
        self.clients = clients

    async def erase(self, service: str, request: StepRequest) -> StepReport:
        return step_report(await self.clients[service].ErasePerson(request_message(request)))

    async def erase_business(self, service: str, business_id: str) -> StepReport:
        return step_report(await self.clients[service].ErasePerson(business_request(business_id)))


@dataclass(frozen=True)
class RetentionReport:
    """What a service deleted or redacted in one ApplyRetention (common.proto RetentionReport): its lines {what,
    action, count}, and whether more is past retention than the call's batch took."""

    items: tuple[dict[str, Any], ...]
    more: bool


class RetentionPort(Protocol):
    async def apply(self, service: str, business_id: str, run_id: str, cutoffs: Cutoffs,
                    batch: int) -> RetentionReport:
        """What `service` deleted or redacted of the business's data made before the cutoffs; a refusal or an outage
        raises."""


def retention_message(business_id: str, run_id: str, cutoffs: Cutoffs, batch: int) -> common_pb2.RetentionRequest:
    message = common_pb2.RetentionRequest(business_id=business_id, run_id=run_id, batch=batch)
    for field, at in vars(cutoffs).items():
        set_timestamp(message, field, at)
    return message


class GrpcRetention:
    """`RetentionPort` over the services' ApplyRetention (clients acting for the current caller: the business)."""

    def __init__(self, clients: dict[str, Any]):
        self.clients = clients

    async def apply(self, service: str, business_id: str, run_id: str, cutoffs: Cutoffs,
                    batch: int) -> RetentionReport:
        reply = await self.clients[service].ApplyRetention(retention_message(business_id, run_id, cutoffs, batch))
        return RetentionReport(tuple({"what": i.what, "action": i.action, "count": i.count} for i in reply.items),
                               reply.more)
