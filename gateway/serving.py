"""Serving the gateway's app until SIGTERM or SIGINT, then shutting down gracefully: /readyz answers 503 at once
while every route goes on serving, new requests too, for SHUTDOWN_DELAY_SECONDS (whatever polls readiness stops
sending meanwhile; on Kubernetes the preStop hook has already waited and the delay is 0); then the listening socket
closes, the requests in flight are given the longest route's time limit, and the app's cleanup runs (the usage log
flushed, connections closed)."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from aiohttp import web

from core.settings import Settings
from gateway.context import ROUTE_TABLE
from gateway.readiness import SHUTDOWN
from gateway.route import Route

log = logging.getLogger(__name__)


def drain_seconds(routes: list[Route]) -> float:
    """How long a request in flight may still need at shutdown: the longest route's time limit."""
    return max(route.time_limit for route in routes)


async def serve(app: web.Application, settings: Settings) -> None:
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=drain_seconds(app[ROUTE_TABLE]))
    await runner.setup()
    await web.TCPSite(runner, settings.http_host, settings.http_port).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    log.info("gateway serving HTTP on port %s", settings.http_port)
    await stop.wait()
    app[SHUTDOWN].draining = True
    log.info("gateway shutting down: unready, serving %.0f s more", settings.shutdown_delay_seconds)
    await asyncio.sleep(settings.shutdown_delay_seconds)
    log.info("gateway draining")
    await runner.cleanup()
    log.info("gateway stopped")
