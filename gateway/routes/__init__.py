"""The declarative route table: every public route, from which the gateway builds routing,
scope checks, request validation and the OpenAPI document."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

# How a route authenticates: a bearer key, a dashboard session cookie, or nothing.
KEY, SESSION, PUBLIC = "key", "session", "none"


@dataclass
class Call:
    """What a handler gets: the parsed request and the caller."""

    request: web.Request
    body: dict[str, Any]
    query: dict[str, Any]
    principal: Any = None  # gateway.auth.Principal for key routes
    session_token: str = ""  # for session routes
    call_id: str | None = None  # set by handlers that touch a call, for the usage log


Handler = Callable[[Call], Awaitable[Any]]


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
    # Scope the key needs; a callable picks it from the body (e.g. lifecycle actions).
    scope: str | Callable[[dict], tuple[str, ...]] | None = None
    body: dict | None = None  # JSON Schema of the request body
    query: dict | None = None  # JSON Schema (object) of the query parameters
    # Name of the response schema in gateway.schemas; a tuple for routes whose ?id= read returns the
    # resource itself instead of the list (published as a oneOf).
    response: str | tuple[str, ...] | None = None
    status: int = 200
    errors: tuple[str, ...] = ()
    # "Service/Method" of the RPC the route calls (checked by the contract tests); None for gateway-local routes.
    rpcs: tuple[str, ...] = ()
    description: str = ""
    # What a creating route makes, for the OpenAPI links that feed its id to the routes that take it.
    creates: Creates | None = None
    # Error code for a body that fails its schema (signup uses validation_error).
    validation_code: str = "invalid_request"


def all_routes() -> list[Route]:
    from gateway.routes import accounts, agents, leads, meta, numbers, webhooks

    return [*meta.ROUTES, *accounts.ROUTES, *agents.ROUTES, *numbers.ROUTES, *leads.ROUTES, *webhooks.ROUTES]
