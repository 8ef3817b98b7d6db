"""What a public route is (`Route`) and what its handler gets (`RequestContext`); the route modules declare theirs
(gateway/routes/), and the table of them all (gateway.route_table) is what the gateway builds routing, scope
checks, request validation and the OpenAPI document from."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from core import deadlines
from core.rpc import AsCaller, Client
from gateway.context import Deps
from gateway.routes.params import page_request
from switchboard.v1 import common_pb2

# How a route authenticates: a bearer key, a dashboard session cookie, or nothing.
KEY, SESSION, PUBLIC = "key", "session", "none"
# A route's time limit (Route.time_limit): the longest deadline of its RPCs and a second for the gateway's own part
# (the key's authentication included), at least ROUTE_LIMIT_SECONDS.
ROUTE_LIMIT_SECONDS = 5.0
ROUTE_MARGIN_SECONDS = 1.0
# With the dashboard session, a request that changes something sends a JSON body or, without a body, this header
# (gateway.app: CSRF); routes with no body declare it (`headers=SESSION_WRITE_HEADERS`).
CSRF_HEADER = "X-Requested-With"
SESSION_WRITE_HEADERS = {CSRF_HEADER: {
    "type": "string", "minLength": 1, "required": True, "examples": ["fetch"],
    "description": "any value: with the dashboard session, a request without a JSON body must carry it (other sites "
    "cannot make a browser send it)"}}


@dataclass
class RequestContext:
    """What a handler gets: the parsed request, the caller, the gateway's parts, and the services called as
    that caller (`ctx.rpc("agents").GetAgent(request)`)."""

    request: web.Request
    deps: Deps
    body: dict[str, Any]
    query: dict[str, Any]
    principal: Any = None  # gateway.auth.Principal for key routes
    session_token: str = ""  # for session routes
    call_id: str | None = None  # set by handlers that touch a call, for the usage log

    def rpc(self, service: str) -> Client | AsCaller:
        """A client of the registered service, sending the caller's tenant metadata on a key route."""
        client = self.deps.clients[service]
        return client.as_caller(self.principal.tenant) if self.principal is not None else client

    def page_request(self) -> common_pb2.PageRequest:
        """The list's `limit`, `cursor` and `after` query parameters."""
        return page_request(self.query)

    @staticmethod
    def listing(key: str, items: list[Any], page: common_pb2.PageInfo, **extra: Any) -> dict[str, Any]:
        """The list envelope: `{key: items, has_more, next_cursor}` (and any fields of the list's own)."""
        return {**extra, key: items, "has_more": page.has_more, "next_cursor": page.next_cursor or None}


# What a handler answers: a JSON body (sent with the route's status) or a response of its own.
Reply = dict[str, Any] | list[Any] | web.StreamResponse
Handler = Callable[[RequestContext], Awaitable[Reply]]


@dataclass(frozen=True)
class Creates:
    """A POST creates a record: `param` is the parameter other routes name it by (agent_id,
    business_id, ...) and `pointer` the JSON pointer of its id in the response (/id, /webhook/id).
    Routes under the creating route's path take it as `id` as well. `carries` names response fields that
    go along to the routes that take them too (where the record lives: business_id; its version)."""

    param: str
    pointer: str = "/id"
    carries: tuple[str, ...] = ()


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    auth: str = KEY
    # A key route that also takes the assistant connector's OAuth access tokens (gateway.routes.oauth).
    tokens: bool = False
    # A key route that also takes a dashboard session (no Authorization header, the session cookie): the person
    # signed in acts on their account's businesses with no scope check; a body must be JSON (no CSRF).
    sessions: bool = False
    # Scope the key needs; a callable picks it from the body (e.g. lifecycle actions).
    scope: str | Callable[[dict[str, Any]], tuple[str, ...]] | None = None
    body: dict[str, Any] | None = None  # JSON Schema of the request body
    form: dict[str, Any] | None = None  # JSON Schema of a form-encoded body (the handler reads it; documented only)
    # JSON Schema of a JSON body the handler reads and answers itself, errors included (JSON-RPC); documented only,
    # with the statuses of its own answers, {status: description} (a body of the `response` schema; 202 none) or
    # {status: (description, name of the body's schema)}.
    own_body: dict[str, Any] | None = None
    own_replies: dict[int, str | tuple[str, str]] | None = None
    query: dict[str, Any] | None = None  # JSON Schema (object) of the query parameters
    # Name of the response schema in gateway.schemas; a tuple for routes whose ?id= read returns the
    # resource itself instead of the list (published as a oneOf).
    response: str | tuple[str, ...] | None = None
    # A list route whose query takes `id`: the handler that answers ?id=<id> with that one record.
    read_one: Handler | None = None
    # The media type of a route that answers with bytes or text rather than JSON; `ranges`: it answers a Range
    # header with 206.
    media: str | None = None
    ranges: bool = False
    status: int = 200
    errors: tuple[str, ...] = ()
    # "Service/Method" of the RPC the route calls (checked by the contract tests); None for gateway-local routes.
    rpcs: tuple[str, ...] = ()
    # Seconds a request may take, for a route whose handler waits longer than its RPCs declare (an eval run's
    # max_wait_ms); None: `time_limit` derives it from `rpcs`.
    time_limit_seconds: float | None = None
    description: str = ""
    # What a creating route makes, for the OpenAPI links that feed its id to the routes that take it.
    creates: Creates | None = None
    # Error code for a body that fails its schema (signup uses validation_error).
    validation_code: str = "invalid_request"
    # Request headers the handler reads, {name: JSON Schema with a description, and `required: True` for one it
    # cannot do without} (documented only), and
    # headers of its answers, {status: {name: description}}.
    headers: dict[str, dict[str, Any]] | None = None
    reply_headers: dict[int, dict[str, str]] | None = None
    # The part of `body` the gateway checks, where the service checks the rest itself (to report every problem of
    # a large body at once, each where it is); None: the gateway checks all of `body`.
    body_check: dict[str, Any] | None = None
    # The largest body the route reads (None: gateway.app.MAX_BODY_BYTES, 1 MiB).
    max_body_bytes: int | None = None
    # A provider route's own check of the raw body and headers (its signature), `(settings, headers, raw) -> why
    # it fails or None`: it runs before the body is read as JSON, and a request that fails it is answered 401
    # unauthorized with nothing of its body parsed.
    verify: Callable[[Any, Any, bytes], str | None] | None = None

    def __post_init__(self) -> None:
        if self.read_one is not None and "id" not in (self.query or {}).get("properties", {}):
            raise ValueError(f"{self.method} {self.path}: read_one needs `id` in the query schema")

    def handler_for(self, query: dict[str, Any]) -> Handler:
        return self.read_one if self.read_one is not None and "id" in query else self.handler

    @property
    def time_limit(self) -> float:
        """The seconds a request of this route is given from its arrival, published in the OpenAPI document: every
        RPC it makes ends by then (core.deadlines), so no slow service or provider holds it longer; past it the
        answer is 504 timeout (gateway.app)."""
        if self.time_limit_seconds is not None:
            return self.time_limit_seconds
        longest = max((deadlines.of_rpc(rpc) for rpc in self.rpcs), default=0.0)
        return max(ROUTE_LIMIT_SECONDS, longest + ROUTE_MARGIN_SECONDS)
