"""Readiness: NATS and every backing service (whose health check probes its database); and the providers' status
that /api/v1/health adds, asked at most every PROVIDERS_TTL_SECONDS per gateway process."""
from __future__ import annotations

import asyncio
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from switchboard.v1 import accounts_pb2, agents_pb2, messaging_pb2

# Any key may call /api/v1/health, and each check of the providers costs a call to each of them.
PROVIDERS_TTL_SECONDS = 10.0


async def _service_status(channel) -> str:
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=3.0)
    except Exception:  # noqa: BLE001 - unreachable is a status, not an error
        return "unreachable"
    return "ok" if reply.status == health_pb2.HealthCheckResponse.SERVING else "not_serving"


async def check_ready(deps) -> dict:
    names = list(deps.channels)
    statuses = await asyncio.gather(*(_service_status(deps.channels[n]) for n in names))
    services = dict(zip(names, statuses, strict=True))
    # NATS counts as up once this replica also listens for key invalidations.
    nats = "ok" if deps.bus.is_connected and deps.auth.nc is not None else "unreachable"
    # A service reports SERVING only when its own database and NATS probes pass.
    database = "ok" if all(s == "ok" for s in statuses) else "unknown"
    ready = nats == "ok" and all(s == "ok" for s in statuses)
    return {"ready": ready, "nats": nats, "database": database, "services": services}


async def _provider_status(check) -> str:
    """A provider's status as the service that checks it reports it."""
    try:
        return (await check).status
    except grpc.aio.AioRpcError:
        return "unknown"  # the checking service itself is down: readiness says so under services


async def check_providers(deps) -> dict[str, str]:
    """The voice, messaging and payments providers, each asked by the service that uses it."""
    clients = deps.clients
    voice, messaging, payments = await asyncio.gather(
        _provider_status(clients["agents"].CheckVoiceProvider(agents_pb2.CheckVoiceProviderRequest(), timeout=10)),
        _provider_status(clients["messaging"].CheckProvider(messaging_pb2.CheckProviderRequest(), timeout=10)),
        _provider_status(clients["accounts"].CheckPaymentsProvider(accounts_pb2.CheckPaymentsProviderRequest(),
                                                                   timeout=10)))
    return {"voice": voice, "messaging": messaging, "payments": payments}


class CachedProviders:
    """The latest check of the providers for `ttl` seconds; callers that come while a check runs share it."""

    def __init__(self, check=check_providers, ttl: float = PROVIDERS_TTL_SECONDS, clock=time.monotonic):
        self.check, self.ttl, self.clock = check, ttl, clock
        self._task: asyncio.Future | None = None
        self._started = 0.0

    async def statuses(self, deps) -> dict[str, str]:
        if self._task is None or (self._task.done() and self.clock() - self._started >= self.ttl):
            self._started = self.clock()
            self._task = asyncio.ensure_future(self.check(deps))
        task = self._task
        try:
            return dict(await asyncio.shield(task))
        except Exception:
            if self._task is task:
                self._task = None  # a failed check is not kept
            raise


PROVIDERS = CachedProviders()  # this gateway process's
