"""The erasure's RPC of the Sdr gRPC service: ErasePerson (the accounts service's privacy job alone may ask,
core.registry.RPC_CALLERS) into services.sdr.erasure."""
from __future__ import annotations

from core.interceptors import Context
from services.sdr.erasure import Erased, Erasure
from switchboard.v1 import common_pb2, sdr_pb2_grpc


class ErasureServicer(sdr_pb2_grpc.SdrServicer):
    """Erasing one person of a business from this service, over `erasure`."""

    def __init__(self, erasure: Erasure):
        self.erasure = erasure

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        if request.whole_business:  # the steps after take the business whole: no ids
            erased, more = await self.erasure.erase_business(request.business_id, request.erasure_id)
            return common_pb2.ErasureReport(items=self._items(erased), more=more)
        erased = await self.erasure.erase(request.business_id, request.erasure_id, request.phones, request.emails,
                                          request.lead_ids)
        return common_pb2.ErasureReport(
            items=self._items(erased),
            lead_ids=erased.lead_ids, call_ids=list(erased.call_ids), message_ids=list(erased.message_ids))

    @staticmethod
    def _items(erased: Erased) -> list[common_pb2.ErasedItem]:
        return [common_pb2.ErasedItem(what=what, action=action, count=count) for what, action, count in erased.items()]
