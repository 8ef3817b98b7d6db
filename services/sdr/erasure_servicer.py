"""The privacy RPCs of the Sdr gRPC service (the accounts service's jobs alone may ask, core.registry.RPC_CALLERS):
ErasePerson into services.sdr.erasure, ApplyRetention into services.sdr.data_retention."""
from __future__ import annotations

from core import data_retention
from core.interceptors import Context
from services.sdr.data_retention import DataRetention
from services.sdr.erasure import Erased, Erasure
from switchboard.v1 import common_pb2, sdr_pb2_grpc


class ErasureServicer(sdr_pb2_grpc.SdrServicer):
    """Erasing one person of a business from this service, over `erasure`, and the retention the business set, over
    `retention`."""

    def __init__(self, erasure: Erasure, retention: DataRetention):
        self.erasure, self.retention = erasure, retention

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        if request.whole_business:  # the steps after take the business whole: no ids
            erased, more = await self.erasure.erase_business(request.business_id, request.erasure_id)
            return common_pb2.ErasureReport(items=self._items(erased), more=more)
        erased = await self.erasure.erase(request.business_id, request.erasure_id, request.phones, request.emails,
                                          request.lead_ids)
        return common_pb2.ErasureReport(
            items=self._items(erased),
            lead_ids=erased.lead_ids, call_ids=list(erased.call_ids), message_ids=list(erased.message_ids))

    async def ApplyRetention(self, request: common_pb2.RetentionRequest,
                             context: Context) -> common_pb2.RetentionReport:
        applied = await self.retention.apply(data_retention.asked(request))
        return data_retention.report(applied.items(), applied.more)
    @staticmethod
    def _items(erased: Erased) -> list[common_pb2.ErasedItem]:
        return [common_pb2.ErasedItem(what=what, action=action, count=count) for what, action, count in erased.items()]
