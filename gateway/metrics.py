"""The gateway's request metrics (core.metrics): a middleware, added only when metrics are on, that counts and times
every request by route template, method and status class."""
from __future__ import annotations

import asyncio
import time

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from core.metrics import Instruments

UNMATCHED = "unmatched"  # no resource answered (aiohttp's own 404/405)


def route_of(request: web.Request) -> str:
    """The template of the route that answered (`/api/v1/agents`, `/dashboard/agents/{agent_id}`): its resource's
    canonical path, bounded in number unlike the request's path."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


def middleware(instruments: Instruments) -> Middleware:
    @web.middleware
    async def measure(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        except asyncio.CancelledError:
            status = 499  # the client went away (nginx's code for it)
            raise
        finally:
            instruments.http_done(route_of(request), request.method, status, time.perf_counter() - started)

    return measure
