"""Readiness: NATS and every backing service (whose health check probes its database)."""
from __future__ import annotations

import asyncio

from grpc_health.v1 import health_pb2, health_pb2_grpc


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
    services = dict(zip(names, statuses))
    # NATS counts as up once this replica also listens for key invalidations.
    nats = "ok" if deps.bus.is_connected and deps.auth.nc is not None else "unreachable"
    # A service reports SERVING only when its own database and NATS probes pass.
    database = "ok" if all(s == "ok" for s in statuses) else "unknown"
    ready = nats == "ok" and all(s == "ok" for s in statuses)
    return {"ready": ready, "nats": nats, "database": database, "services": services}
