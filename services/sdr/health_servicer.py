"""The platform health's RPC of the Sdr gRPC service: GetHealth into services.sdr.health_service."""
from __future__ import annotations

from core.interceptors import Context
from services.sdr.health_service import Health
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc


class HealthServicer(sdr_pb2_grpc.SdrServicer):
    """Every service's readiness and the providers' status, over `health`."""

    def __init__(self, health: Health):
        self.health = health

    async def GetHealth(self, request: sdr_pb2.GetHealthRequest, context: Context) -> sdr_pb2.PlatformHealth:
        return sdr_pb2.PlatformHealth(**await self.health.report())
