"""The aiohttp application: one handler wrapper turns the route table into routing,
authentication, scope checks, validation, rate limiting, the request's time limit and the usage log."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from aiohttp import web
from aiohttp.typedefs import Handler as AiohttpHandler

from core import caller, costs, deadlines, registry, rpc, telemetry
from core.bus import EventBus
from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from core.settings import Settings
from gateway import validation
from gateway.auth import Authenticator, Principal
from gateway.clientip import require_trusted_proxies
from gateway.context import DEPS, ROUTE_TABLE, Deps, deps
from gateway.dashboard import (
    agents_page,
    calls_page,
    consent,
    exports_page,
    keys_page,
    leads_page,
    messages_page,
    numbers_page,
    overview_page,
    pages,
    pipeline_page,
    runs_page,
    templates,
    webhooks_page,
)
from gateway.dashboard.session_cookie import session_token
from gateway.errors import error_response, from_service_error, lacks_scope, timed_out
from gateway.publiclimits import AddressLimits
from gateway.ratelimit import retry_after_header
from gateway.readiness import SHUTDOWN, Shutdown, check_ready
from gateway.route import CSRF_HEADER, KEY, SESSION, RequestContext, Route
from gateway.route_table import all_routes
from gateway.routes import calls
from gateway.routes.oauth import sign_in_challenge
from gateway.security_headers import add_security_headers
from gateway.sharedlimit import LimitSharing, SharedTokenBuckets
from gateway.usage import UsageWriter

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def _read_body(request: web.Request, route: Route) -> bytes:
    """The raw body, refused (400) past the route's limit: by its Content-Length before any of it is read."""
    limit = route.max_body_bytes or MAX_BODY_BYTES
    too_large = ServiceError("invalid_request", f"request body is larger than {limit // 1024} KiB")
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise too_large from None
    if len(raw) > limit:
        raise too_large
    return raw


def _parse_json(raw: bytes, route: Route) -> dict[str, Any]:
    """The body as a JSON object, not yet checked against the route's schema."""
    if not raw.strip():
        return {}
    try:
        data = validation.parse_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError("invalid_request", f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise ServiceError("invalid_request", "request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise ServiceError("invalid_request", "request body must be a JSON object")
    if validation.depth(data) > validation.MAX_DEPTH:
        raise ServiceError("invalid_request", f"request body is nested too deeply (at most {validation.MAX_DEPTH} "
                           "levels)")
    if validation.SUSPECT_ESCAPE.search(raw) and (where := validation.unstorable_text_path(data)):
        raise ServiceError(route.validation_code, f"{where} must be valid text without NUL characters")
    return data


def _required_scopes(route: Route, body: dict[str, Any]) -> tuple[str, ...]:
    if route.scope is None:
        return ()
    if callable(route.scope):
        return route.scope(body)
    return (route.scope,)


async def _key_principal(d: Deps, request: web.Request, route: Route) -> Principal:
    header = request.headers.get("Authorization")
    if route.sessions and not header and session_token(request, d.settings):
        return await _session_principal(d, request)
    try:
        principal = await d.auth.authenticate(header, tokens=route.tokens)
    except ServiceError as err:
        if route.tokens and err.code == "unauthorized":  # say where to sign in (MCP authorization, RFC 9728)
            raise ServiceError("unauthorized", err.message,
                               www_authenticate=sign_in_challenge(d.settings.public_base_url, bool(header))) from None
        raise
    wait = d.limiter.take(principal.key_id)
    if wait:
        raise ServiceError("rate_limited", f"more than {int(d.limiter.capacity)} requests per minute for this key",
                           retry_after=retry_after_header(wait))
    return principal


async def _session_principal(d: Deps, request: web.Request) -> Principal:
    """The principal of the dashboard session on a route that takes one instead of a key; rate-limited per
    account like a key."""
    token = _session_token(d, request)
    principal = await d.auth.authenticate_session(token)
    wait = d.limiter.take(f"session:{principal.account_id}")
    if wait:
        raise ServiceError("rate_limited", f"more than {int(d.limiter.capacity)} requests per minute for this "
                           "session", retry_after=retry_after_header(wait))
    return principal


def _session_token(d: Deps, request: web.Request) -> str:
    if request.headers.get("Authorization"):
        raise ServiceError("unauthorized", "this route takes the dashboard session, not an API key; "
                           "sign in with your magic link")
    token = session_token(request, d.settings)
    if not token:
        raise ServiceError("unauthorized", "no dashboard session; open your magic link to sign in")
    if (request.method not in SAFE_METHODS and request.content_type != "application/json"
            and not request.headers.get(CSRF_HEADER)):
        # Another site can make a browser send neither (a form cannot; a script needs a CORS preflight, which this
        # site never grants): this closes CSRF, for requests without a body too.
        raise ServiceError("invalid_request", "with the dashboard session, a request that changes something must "
                           f"send its body as application/json, or an {CSRF_HEADER} header (any value) when it has "
                           "no body")
    return token


def _check_header_text(request: web.Request) -> None:
    """Header values are ASCII (RFC 9110 5.5): any other byte is refused here, before anything reads a header (a
    secret compared, a value sent on in a protobuf string). Cookies are read one by one (session_cookie)."""
    for name, value in request.headers.items():
        if not value.isascii() and name.lower() != "cookie":
            code = "unauthorized" if name.lower() == "authorization" else "invalid_request"
            raise ServiceError(code, f"the {name} header holds characters that are not ASCII; header values must "
                               "be ASCII")


def make_handler(route: Route) -> AiohttpHandler:
    limit = route.time_limit

    async def handle(request: web.Request) -> web.StreamResponse:
        # Within the request's span (aiohttp-server's, continuing the caller's traceparent: build_app): every RPC of
        # the request ends within the route's time limit.
        with costs.tagged(request.headers.get(costs.HEADER) if costs.enabled else None), deadlines.within(limit):
            return await _handle(request)

    async def _handle(request: web.Request) -> web.StreamResponse:
        d = deps(request)
        principal = ctx = None
        try:
            _check_header_text(request)
            principal = await _key_principal(d, request, route) if route.auth == KEY else None
            session = _session_token(d, request) if route.auth == SESSION else ""
            raw = await _read_body(request, route) if route.body is not None else b""
            if route.verify is not None and (why := route.verify(d.settings, request.headers, raw)):
                raise ServiceError("unauthorized", why)
            body = _parse_json(raw, route) if route.body is not None else {}
            # The scope first: a key without it learns nothing about the route's parameters.
            if principal is not None:
                missing = [s for s in _required_scopes(route, body) if not principal.has_scope(s)]
                if missing:
                    raise lacks_scope(missing)
            query = validation.coerce_query(route.query, request.query)
            if route.body is not None:
                validation.check(route.body_check or route.body, body, route.validation_code)
            ctx = RequestContext(request=request, deps=d, body=body, query=query, principal=principal,
                                 session_token=session)
            result = await route.handler_for(query)(ctx)
            if isinstance(result, web.StreamResponse):
                response = result
            else:
                response = web.json_response(result, status=route.status)
        except (ServiceError, grpc.aio.AioRpcError) as exc:
            err = exc if isinstance(exc, ServiceError) else from_rpc_error(exc)
            response = from_service_error(timed_out(limit) if err.code == "timeout" else err)
        except asyncio.CancelledError:
            raise
        except Exception:  # never a traceback to the client
            log.exception("unhandled error on %s %s", request.method, route.path)
            response = error_response("internal_error", "internal error; it has been logged")
        if principal is not None and principal.key_id:  # the usage log is of keys (a session has none)
            d.usage.record(principal, route.path, request.method, response.status, ctx.call_id if ctx else None)
        return response

    handle.__name__ = f"{route.method.lower()}_{route.path}"
    return handle


def _method_not_allowed(allowed: list[str]) -> AiohttpHandler:
    allow = ", ".join(sorted(allowed))

    async def handle(request: web.Request) -> web.Response:
        return error_response("method_not_allowed", f"{request.method} is not allowed on {request.path}; use {allow}",
                              405, {"Allow": allow})

    return handle


async def _no_route(request: web.Request) -> web.Response:
    return error_response("not_found", f"no route {request.method} {request.path}; see /api/v1/openapi.json")


def _envelope_routing_errors(app: web.Application) -> None:
    """Unknown paths and wrong methods answer in the error envelope, through routes of their own
    (a middleware would add a layer to every request)."""
    for resource in list(app.router.resources()):
        if not isinstance(resource, web.Resource):  # static or sub-app prefixes: the gateway mounts none
            continue
        allowed = [r.method for r in resource]
        resource.add_route("*", _method_not_allowed(allowed))
    app.router.add_route("*", "/{tail:.*}", _no_route)


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def take_costs(request: web.Request) -> web.Response:
    """What the requests tagged `tag` cost in this gateway process (core.costs); routed only where counting is on."""
    return web.json_response(costs.take(request.match_info["tag"]))


async def readyz(request: web.Request) -> web.Response:
    report = await check_ready(request.app, deps(request), services="services" in request.query)
    return web.json_response(report, status=200 if report["ready"] else 503)


def build_app(settings: Settings) -> web.Application:
    require_trusted_proxies(settings)
    routes = all_routes()
    # One trace per request and its duration (http.server.request.duration): OpenTelemetry's middleware, outermost
    telemetry.http_server_instrumented()
    app = web.Application(client_max_size=max(r.max_body_bytes or MAX_BODY_BYTES for r in routes))
    app.middlewares.append(AddressLimits(settings, routes).middleware())  # what anyone may call, per address
    app[ROUTE_TABLE] = routes
    app[SHUTDOWN] = Shutdown()
    # All methods of a path on one aiohttp resource, wherever they stand in the table (a path split over
    # two resources would answer 405 for the methods of the second).
    for path in dict.fromkeys(r.path for r in routes):
        resource = app.router.add_resource(path)
        for route in (r for r in routes if r.path == path):
            resource.add_route(route.method, make_handler(route))
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    if settings.count_costs:
        costs.enable()
        app.router.add_get("/_costs/{tag}", take_costs)
    pages.add_routes(app)
    keys_page.add_routes(app)
    webhooks_page.add_routes(app)
    exports_page.add_routes(app)
    numbers_page.add_routes(app)
    overview_page.add_routes(app)
    leads_page.add_routes(app)
    pipeline_page.add_routes(app)
    calls_page.add_routes(app)
    messages_page.add_routes(app)
    runs_page.add_routes(app)
    agents_page.add_routes(app)
    templates.add_routes(app)
    consent.add_routes(app)
    add_security_headers(app, settings)
    _envelope_routing_errors(app)
    app.cleanup_ctx.append(_lifecycle(settings))
    return app


def _lifecycle(settings: Settings) -> Callable[[web.Application], AsyncIterator[None]]:
    async def ctx(app: web.Application) -> AsyncIterator[None]:
        keys = caller.keyring_of(settings, registry.GATEWAY)
        caller.configure(keys, registry.GATEWAY)
        clients, channels = {}, {}
        for service in registry.SERVICES:
            clients[service.name], channels[service.name] = rpc.connect(service.name, settings)
        # Usage batches get their own connection: a large message on the request channel would hold
        # requests behind it in HTTP/2 flow control.
        usage_client, usage_channel = rpc.connect("accounts", settings)
        usage = UsageWriter(usage_client)
        usage.start()
        bus = EventBus.of(settings, registry.GATEWAY, keys)
        auth = Authenticator(clients["accounts"])
        recordings = calls.recording_client(settings)
        limiter = SharedTokenBuckets(settings.key_rate_limit_per_minute)
        sharing = LimitSharing(limiter, settings.key_rate_limit_share_seconds)
        app[DEPS] = Deps(settings=settings, channels=channels, clients=clients, auth=auth, usage=usage,
                         limiter=limiter, bus=bus, recordings=recordings)
        attach = asyncio.create_task(_attach_to_nats(bus, auth, sharing))
        yield
        attach.cancel()
        await sharing.stop()
        await usage.stop()
        await recordings.close()
        await bus.close()
        await usage_channel.close()
        for channel in channels.values():
            await channel.close()

    return ctx


async def _attach_to_nats(bus: EventBus, auth: Authenticator, sharing: LimitSharing) -> None:
    """Once NATS is reached: the key cache's invalidations, and the rate limit's sharing between replicas."""
    bus.start()
    while not await bus.wait_connected(5.0):
        log.warning("gateway: NATS not reachable yet; key cache disabled and rate limit per replica until it is")
    await sharing.attach(bus.connection)  # first: NATS is ok (gateway.readiness) once the key cache listens
    await auth.attach(bus.connection)
