"""The gateway's readiness (/readyz): its NATS connection and every backing service (whose health check probes its
database), probed directly. The platform's health (/api/v1/health) is the sdr service's (services.sdr.health_service)
beside the gateway's own queue (`nats_status`)."""
from __future__ import annotations

import asyncio
from typing import Any

from core.rpc import readiness
from gateway.context import Deps


def nats_status(deps: Deps) -> str:
    """NATS counts as up once this replica also listens for key invalidations."""
    return "ok" if deps.bus.is_connected and deps.auth.listening else "unreachable"


async def check_ready(deps: Deps) -> dict[str, Any]:
    names = list(deps.channels)
    statuses = await asyncio.gather(*(readiness(deps.channels[n]) for n in names))
    services = dict(zip(names, statuses, strict=True))
    nats = nats_status(deps)
    # A service reports SERVING only when its own database and NATS probes pass.
    database = "ok" if all(s == "ok" for s in statuses) else "unknown"
    ready = nats == "ok" and all(s == "ok" for s in statuses)
    return {"ready": ready, "nats": nats, "database": database, "services": services}
