"""The gateway's readiness (/readyz): whether this replica can serve, for which it needs nothing but itself: it has
started and is not shutting down (gateway.serving). A service or NATS that is down fails only the requests that need
it, each with a clear 503, and every replica shares them: taking every replica out of the Ingress for it would refuse
every request, those that need nothing down included. What is down shows in the platform's health (GET
/api/v1/health: the sdr service's report beside this replica's queue, `nats_status`) instead; `nats` is in the
answer for information only, and with `?services` each service's health with its dependencies as this replica's
channels reach it (core.rpc.health): the local stack waits for both before its tests (a replica's key cache then
listens, and its channels are connected)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from core import rpc
from gateway.context import Deps


@dataclass
class Shutdown:
    """Set by gateway.serving on SIGTERM: the replica still serves every route, but reports unready."""

    draining: bool = False


SHUTDOWN = web.AppKey("shutdown", Shutdown)


def nats_status(deps: Deps) -> str:
    """NATS counts as up once this replica also listens for key invalidations."""
    return "ok" if deps.bus.is_connected and deps.auth.listening else "unreachable"


async def check_ready(app: web.Application, deps: Deps, *, services: bool = False) -> dict[str, Any]:
    draining = app[SHUTDOWN].draining
    report: dict[str, Any] = {"ready": not draining, "draining": draining, "nats": nats_status(deps)}
    if services:
        names = list(deps.channels)
        statuses = await asyncio.gather(*(rpc.health(deps.channels[n], rpc.DEPENDENCIES) for n in names))
        report["services"] = dict(zip(names, statuses, strict=True))
    return report
