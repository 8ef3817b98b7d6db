"""What the platform's health (services.sdr.health_service) needs of the other services, as a port: each one's
readiness (the standard gRPC health check) and the status of the provider each of three of them uses: the voice
provider (agents), the messaging provider (messaging) and the payment providers (accounts). `GrpcHealthSources` is
the adapter over those; a test gives the use case an in-memory one."""
from __future__ import annotations

from typing import Protocol

import grpc

from core import rpc
from core.errors import ServiceError
from core.rpc import Client
from switchboard.v1 import accounts_pb2, agents_pb2, messaging_pb2

PROVIDERS = ("voice", "messaging", "payments")


class HealthSources(Protocol):
    async def readiness(self, service: str) -> str:
        """The registered service's health with its dependencies: ok, not_serving (it cannot reach its database or
        NATS, or it is shutting down) or unreachable."""

    async def provider(self, kind: str) -> str:
        """The status of the `kind` provider (PROVIDERS) as the service that uses it reports it: ok, unreachable,
        rejected_credentials or refused; unknown when that service cannot be asked."""


class GrpcHealthSources:
    """`HealthSources` over a channel to each service (`channels`, by name) and the clients of the three services
    that check a provider (each check within its rpc's deadline, which GetHealth's leaves room for)."""

    def __init__(self, channels: dict[str, grpc.aio.Channel], agents: Client, messaging: Client, accounts: Client):
        self._channels = channels
        self._checks = {
            "voice": lambda: agents.CheckVoiceProvider(agents_pb2.CheckVoiceProviderRequest()),
            "messaging": lambda: messaging.CheckProvider(messaging_pb2.CheckProviderRequest()),
            "payments": lambda: accounts.CheckPaymentsProvider(accounts_pb2.CheckPaymentsProviderRequest())}

    async def readiness(self, service: str) -> str:
        return await rpc.health(self._channels[service], rpc.DEPENDENCIES)

    async def provider(self, kind: str) -> str:
        try:
            status: str = (await self._checks[kind]()).status
            return status
        except ServiceError:
            return "unknown"  # the checking service itself failed: its readiness says so under services
