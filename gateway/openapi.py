"""The OpenAPI 3.1 document, built from the route table."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from core.errors import CODES
from gateway.dashboard import session_cookie
from gateway.publiclimits import limited_per_address
from gateway.route import CSRF_HEADER, KEY, PUBLIC, SESSION, Creates, Route
from gateway.schemas import SCHEMAS
from gateway.validation import validator

_STATUS_TEXT = {400: "Bad request", 401: "Unauthorized", 402: "Payment required", 403: "Forbidden",
                404: "Not found", 405: "Method not allowed", 409: "Conflict", 429: "Rate limited",
                500: "Internal error", 503: "Unavailable", 504: "Timeout"}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _operation_id(route: Route) -> str:
    return route.method.lower() + "_" + re.sub(r"[^a-z0-9]+", "_", route.path.lower().removeprefix("/api/v1/")).strip("_")


def _params_of(route: Route) -> list[tuple[str, str]]:
    """(location, name) of every parameter a route reads: its query parameters and top-level body fields."""
    query = [("query", n) for n in (route.query or {}).get("properties", {})]
    body = [("body", n) for n in (route.body or {}).get("properties", {})]
    return query + body


def _links(route: Route, made: Creates, routes: list[Route]) -> dict[str, Any]:
    """OpenAPI links from what `route` creates to every route that takes its id, so a client (or the
    fuzzer's stateful phase) can follow a created record through its reads, updates and deletes."""
    links: dict[str, Any] = {}
    for target in (r for r in routes if r is not route):
        under = target.path == route.path or target.path.startswith(route.path + "/")
        params = _params_of(target)
        takes_param = any(name == made.param for _, name in params)  # then its `id`, if any, is an alias
        for location, name in params:
            if name != made.param and not (name == "id" and under and not takes_param):
                continue
            values = {name: f"$response.body#{made.pointer}"}
            values |= {n: f"$response.body#/{n}" for n in made.carries if (location, n) in params}
            link: dict[str, Any] = {"operationId": _operation_id(target)}
            if location == "query":
                link["parameters"] = {f"query.{n}": v for n, v in values.items()}
            else:
                link["requestBody"] = values
            links[f"{_operation_id(target)}.{name}"] = link
    return links


def _description(route: Route) -> str:
    if isinstance(route.scope, str):
        return f"Scope: `{route.scope}`. {route.description}".strip()
    if route.scope is not None:
        return f"Scope depends on the body (see below). {route.description}".strip()
    return route.description


def _security(route: Route) -> list[dict[str, Any]]:
    """The credentials a route takes: none, the dashboard's session, or a key (with the connector's and the
    dashboard's sign-ins where the route also takes those)."""
    if route.auth == PUBLIC:
        return []
    if route.auth == SESSION:
        return [{"dashboardSession": []}]
    security: list[dict[str, Any]] = [{"bearerKey": [route.scope] if isinstance(route.scope, str) else []}]
    if route.tokens:
        security.append({"connectorSignIn": []})
    if route.sessions:
        security.append({"dashboardSession": []})
    return security


def _parameters(route: Route) -> list[dict[str, Any]]:
    required = set((route.query or {}).get("required", ()))
    query = [{"name": n, "in": "query", "required": n in required, "schema": s}
             for n, s in (route.query or {}).get("properties", {}).items()]
    headers = [{"name": n, "in": "header", "required": s.get("required", False),
                "description": s.get("description", ""),
                "schema": {k: v for k, v in s.items() if k not in ("description", "required")}}
               for n, s in (route.headers or {}).items()]
    return query + headers


def _request_body(route: Route) -> dict[str, Any] | None:
    if route.form is not None:
        return {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": route.form}}}
    if route.own_body is not None:
        return {"required": True, "content": {"application/json": {"schema": route.own_body}}}
    if route.body is not None:
        # A body that {} satisfies may be left out (it reads as {}); one that needs a field (required, or one of
        # several: anyOf) may not.
        return {"required": not validator(route.body).is_valid({}),
                "content": {"application/json": {"schema": route.body}}}
    return None


def _success(route: Route, routes: list[Route]) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "Success"}
    if route.media:
        binary = {"type": "string"} if route.media.endswith("xml") else {"type": "string", "format": "binary"}
        ok["content"] = {route.media: {"schema": binary}}
    elif isinstance(route.response, tuple):
        ok["content"] = {"application/json": {"schema": {"oneOf": [_ref(n) for n in route.response]}}}
    elif route.response:
        ok["content"] = {"application/json": {"schema": _ref(route.response)}}
    if route.creates:
        ok["links"] = _links(route, route.creates, routes)
    return ok


def _error_codes(route: Route) -> set[str]:
    """Every error code a route may answer: its own, and those of its credential, limits, validation and the
    services it calls."""
    codes = set(route.errors) | {"internal_error"}
    if route.rpcs:
        codes |= {"unavailable", "timeout"}  # a backing service is down or restarting: retry; or it did not answer
    if route.auth == KEY:
        codes |= {"unauthorized", "rate_limited"}
    elif limited_per_address(route):
        codes.add("rate_limited")
    if route.body is not None or route.query:
        codes.add(route.validation_code)
    return codes


def _error_responses(route: Route) -> dict[str, dict[str, Any]]:
    """One response per error status, naming its codes."""
    by_status: dict[int, list[str]] = {}
    for code in sorted(_error_codes(route)):
        by_status.setdefault(CODES[code][1], []).append(code)
    responses: dict[str, dict[str, Any]] = {str(status): {"description": f"{_STATUS_TEXT.get(status, 'Error')}: error code "
                               + " or ".join(f"`{n}`" for n in names),
                               "content": {"application/json": {"schema": _ref("Error")}}}
                 for status, names in sorted(by_status.items())}
    if "429" in responses:
        responses["429"]["headers"] = {"Retry-After": {
            "description": "Seconds until the request may succeed: the key's or address's rate limit, or a daily "
            "spend limit (until the next UTC midnight; error.limit names it)", "schema": {"type": "string"}}}
    if "504" in responses:
        responses["504"]["description"] += (f": not finished within the route's time limit of {route.time_limit:g} s, "
                                            "or a service it called did not answer in time")
    return responses


def _responses(route: Route, routes: list[Route]) -> dict[str, dict[str, Any]]:
    ok = _success(route, routes)
    responses: dict[str, dict[str, Any]] = {str(route.status): ok}
    if route.ranges:
        responses["206"] = {"description": "The part a Range header asked for", "content": ok["content"]}
    responses |= _error_responses(route)
    for status, reply in (route.own_replies or {}).items():
        text, schema = reply if isinstance(reply, tuple) else (reply, None)
        content = {"application/json": {"schema": _ref(schema)}} if schema else ok.get("content")
        responses[str(status)] = {"description": text, **({"content": content} if status != 202 and content else {})}
    for status, named in (route.reply_headers or {}).items():
        responses[str(status)]["headers"] = {n: {"description": d, "schema": {"type": "string"}}
                                             for n, d in named.items()}
    return responses


def _operation(route: Route, routes: list[Route]) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": _operation_id(route), "summary": route.summary, "tags": [route.tag]}
    if description := _description(route):
        op["description"] = description
    op["security"] = _security(route)
    if route.query or route.headers:
        op["parameters"] = _parameters(route)
    if (body := _request_body(route)) is not None:
        op["requestBody"] = body
    op["x-time-limit-seconds"] = route.time_limit
    op["responses"] = _responses(route, routes)
    return op


@dataclass(frozen=True)
class Published:
    """The document as served: its JSON bytes and their strong ETag."""

    body: bytes
    etag: str


_published: dict[str, tuple[list[Route], Published]] = {}  # by server URL: the table it was built from, the document


def published(routes: list[Route], server_url: str) -> Published:
    """The document of a route table, built once per process: the table and the public URL are fixed for its life,
    and building it costs milliseconds (and anyone may ask for it)."""
    cached = _published.get(server_url)
    if cached is None or cached[0] is not routes:
        body = json.dumps(build(routes, server_url), separators=(",", ":")).encode()
        cached = _published[server_url] = routes, Published(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    return cached[1]


def build(routes: list[Route], server_url: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, routes)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Switchboard API",
            "version": "1.0.0",
            "description": "Hosted AI voice agents. Errors are {\"error\": {\"code\", \"message\"}}. Single resources "
            "are read with ?id=, never a path segment. Lists are newest first with cursor pagination: while "
            "`has_more` is true, pass the page's `next_cursor` as `cursor` for the next one (it never skips or "
            "repeats an item, even among items sharing a timestamp); the older `after=<created_at of the last "
            "item>` still works but skips items that share that timestamp. Each key may make "
            "KEY_RATE_LIMIT_PER_MINUTE requests per minute (600 by default) over all gateway replicas together (to within "
            "what it sends in half a second); beyond that 429 rate_limited with Retry-After. Routes that take no credential allow each client address "
            "PUBLIC_RATE_LIMIT_PER_MINUTE requests per minute per replica (120 by default), of which "
            "OAUTH_LIMIT_PER_HOUR (60) OAuth client registrations and authorization requests per hour, with the "
            "same 429. Each operation has a time limit, `x-time-limit-seconds` (the longest deadline of the "
            "services it calls, and a second): a request not answered by then is 504 timeout, and what it started may "
            "still take effect (read it back, or repeat it with the same Idempotency-Key where the route takes one). "
            "Unknown paths are 404 not_found; a wrong method is 405 "
            "method_not_allowed with Allow; malformed JSON and bodies over 1 MiB are 400 invalid_request. A missing "
            "required parameter is 400 bad_request; a present but invalid one 400 invalid_request (signup answers "
            "validation_error for both). Query parameters a route does not list, a single-valued parameter sent "
            "twice and an empty value of a typed parameter are 400 invalid_request; an empty plain-text value counts "
            "as absent. Text anywhere (values and object keys) may not contain NUL characters or unpaired UTF-16 "
            "surrogates: 400 naming the field. A body may nest at most 32 levels deep. Numbers must be finite; an integral number such as 2.0 is accepted "
            "where an integer is expected.",
        },
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearerKey": {"type": "http", "scheme": "bearer", "description": "API key starting with svc_live_"},
                "dashboardSession": {"type": "apiKey", "in": "cookie", "name": session_cookie.name_at(server_url),
                                     "description": "Set by signing in with the signup magic link (its page's "
                                     "button posts to /dashboard/login) or an e-mailed one. HttpOnly, SameSite=Lax; "
                                     "Secure with the __Host- prefix on https. A request with it that changes "
                                     f"something must send JSON or the {CSRF_HEADER} header."},
                "connectorSignIn": {
                    "type": "oauth2", "description": "OAuth 2.1 sign-in for the assistant connector only (authorization "
                    "code with PKCE S256; see /.well-known/oauth-authorization-server). Its access tokens work on "
                    "/api/mcp and its helpers, nowhere else.",
                    "flows": {"authorizationCode": {
                        "authorizationUrl": f"{server_url}/oauth/authorize", "tokenUrl": f"{server_url}/oauth/token",
                        "refreshUrl": f"{server_url}/oauth/token", "scopes": {
                            "agents:read": "list agents and business details", "calls:read": "read calls and "
                            "transcripts", "calls:write": "place calls"}}}},
            },
        },
    }
