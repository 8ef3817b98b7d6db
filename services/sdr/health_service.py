"""The platform's health (GetHealth, what GET /api/v1/health shows beside the gateway's own queue): every registered
service's readiness, asked at each call, and the providers' status, asked of the services that use them through the
port (services.sdr.health_port) at most every PROVIDERS_TTL_SECONDS per process: any key may ask for the health,
and each check of the providers costs a call to each of them."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from services.sdr.health_port import PROVIDERS, HealthSources

PROVIDERS_TTL_SECONDS = 10.0


class CachedProviders:
    """The latest check of the providers for `ttl` seconds; callers that come while a check runs share it."""

    def __init__(self, check: Callable[[], Awaitable[dict[str, str]]], ttl: float = PROVIDERS_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.check, self.ttl, self.clock = check, ttl, clock
        self._task: asyncio.Future[dict[str, str]] | None = None
        self._started = 0.0

    async def statuses(self) -> dict[str, str]:
        if self._task is None or (self._task.done() and self.clock() - self._started >= self.ttl):
            self._started = self.clock()
            self._task = asyncio.ensure_future(self.check())
        task = self._task
        try:
            return dict(await asyncio.shield(task))
        except Exception:
            if self._task is task:
                self._task = None  # a failed check is not kept
            raise


class Health:
    def __init__(self, sources: HealthSources, services: tuple[str, ...], ttl: float = PROVIDERS_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.sources, self.services = sources, services
        self.providers = CachedProviders(self.check_providers, ttl, clock)

    async def check_providers(self) -> dict[str, str]:
        """Each provider's status, asked now (in parallel)."""
        statuses = await asyncio.gather(*(self.sources.provider(kind) for kind in PROVIDERS))
        return dict(zip(PROVIDERS, statuses, strict=True))

    async def report(self) -> dict[str, dict[str, str]]:
        """{services: {name: readiness}, providers: {kind: status}}."""
        ready, providers = await asyncio.gather(
            asyncio.gather(*(self.sources.readiness(name) for name in self.services)), self.providers.statuses())
        return {"services": dict(zip(self.services, ready, strict=True)), "providers": providers}
