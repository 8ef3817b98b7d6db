"""What an export needs of the services holding a business's records (core.registry.EXPORT_SERVICES): each one's
ExportPage, as a port. `GrpcExportSources` is the adapter over their RPCs (which only the accounts service may make);
the job's tests against the real database give it a scripted one (tests/service), never in an end-to-end test."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from switchboard.v1 import common_pb2


@dataclass(frozen=True)
class PageRequest:
    """What a service is asked (common.proto ExportPageRequest)."""

    business_id: str
    export_id: str
    kind: str
    after: str
    limit: int


@dataclass(frozen=True)
class RecordsPage:
    """A page of records, each a JSON document, and the cursor after it ("" when the kind has no more)."""

    lines: list[str]
    next_after: str


class ExportSources(Protocol):
    async def page(self, service: str, request: PageRequest) -> RecordsPage:
        """A page of `request.kind` from `service`; a refusal or an outage raises (core.errors.ServiceError for a
        service's answer)."""


class GrpcExportSources:
    """`ExportSources` over the services' ExportPage (clients acting for the current caller: the job's business)."""

    def __init__(self, clients: dict[str, Any]):
        self.clients = clients

    async def page(self, service: str, request: PageRequest) -> RecordsPage:
        reply = await self.clients[service].ExportPage(common_pb2.ExportPageRequest(
            business_id=request.business_id, export_id=request.export_id, kind=request.kind, after=request.after,
            limit=request.limit))
        return RecordsPage(list(reply.lines), reply.next_after)
