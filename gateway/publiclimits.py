"""Per-address limits of what anyone may call without a credential: the public routes of the table, the sign-in and
consent pages, unknown paths. Each costs the platform something (a document built, a row stored, a client ID
metadata document fetched, a mail sent), so each client address gets PUBLIC_RATE_LIMIT_PER_MINUTE of them per
gateway replica, and OAUTH_LIMIT_PER_HOUR of the ones that store or fetch a client (registration, authorization
requests). Beyond that: 429 rate_limited with Retry-After.

Not counted: key and session routes (limited per key or account by gateway.app), public routes that check a
credential of their own (a provider's signature, a signed link, the runner's secret: those name `unauthorized`
among their errors) and the probes.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from core.settings import Settings
from gateway.clientip import address_key, client_ip
from gateway.errors import error_response
from gateway.ratelimit import TokenBuckets, retry_after_header
from gateway.route import PUBLIC, Route
from gateway.routes.oauth import AUTHORIZE_PATH, REGISTER_PATH

PROBES = {("GET", "/healthz"), ("GET", "/readyz")}
OAUTH_CLIENTS = {("POST", REGISTER_PATH), ("GET", AUTHORIZE_PATH), ("POST", AUTHORIZE_PATH)}


def limited_per_address(route: Route) -> bool:
    """Whether a route of the table takes from its caller's address buckets (see the module's docstring)."""
    return route.auth == PUBLIC and "unauthorized" not in route.errors


class AddressLimits:
    def __init__(self, settings: Settings, routes: list[Route],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.trusted = settings.trusted_proxies
        self.requests = TokenBuckets(settings.public_rate_limit_per_minute, 60.0, clock)
        self.clients = TokenBuckets(settings.oauth_limit_per_hour, 3600.0, clock)
        self.exempt = PROBES | {(r.method, r.path) for r in routes if not limited_per_address(r)}

    def refusal(self, request: web.Request) -> web.Response | None:
        """None when the request may go ahead; else the 429 to answer."""
        resource = request.match_info.route.resource
        route = (request.method, resource.canonical if resource is not None else request.path)
        if route in self.exempt:
            return None
        key = address_key(client_ip(request, self.trusted))
        if wait := self.requests.take(key):
            what = f"{int(self.requests.capacity)} requests per minute"
        elif route in OAUTH_CLIENTS and (wait := self.clients.take(key)):
            what = f"{int(self.clients.capacity)} OAuth client registrations and authorization requests per hour"
        else:
            return None
        return error_response("rate_limited", f"more than {what} from this address; retry after "
                              f"{retry_after_header(wait)} s", headers={"Retry-After": retry_after_header(wait)})

    def middleware(self) -> Middleware:
        @web.middleware
        async def limit_public(request: web.Request, handler: Handler) -> web.StreamResponse:
            return self.refusal(request) or await handler(request)

        return limit_public
