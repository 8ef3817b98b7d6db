"""The gateway's readiness (/readyz): whether this replica can serve, for which it needs nothing but itself: it has
started and is not shutting down (gateway.serving). A service or NATS that is down fails only the requests that need
it, each with a clear 503, and every replica shares them: taking every replica out of the Ingress for it would refuse
every request, those that need nothing down included. What is down shows in the platform's health (GET
/api/v1/health: the sdr service's report beside this replica's queue, `nats_status`) instead; `nats` is in the
answer for information only (the local stack waits for it before its tests: a replica's key cache then listens)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from gateway.context import Deps


@dataclass
class Shutdown:
    """Set by gateway.serving on SIGTERM: the replica still serves every route, but reports unready."""

    draining: bool = False


SHUTDOWN = web.AppKey("shutdown", Shutdown)


def nats_status(deps: Deps) -> str:
    """NATS counts as up once this replica also listens for key invalidations."""
    return "ok" if deps.bus.is_connected and deps.auth.listening else "unreachable"


def check_ready(app: web.Application, deps: Deps) -> dict[str, Any]:
    draining = app[SHUTDOWN].draining
    return {"ready": not draining, "draining": draining, "nats": nats_status(deps)}
