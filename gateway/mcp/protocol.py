"""MCP over Streamable HTTP, both protocol eras, on one POST endpoint; stateless, JSON answers only.

- The handshake era (2024-11-05 to 2025-11-25): `initialize`, then requests carrying `MCP-Protocol-Version`
  (2025-03-26 assumed when absent, as the transport spec says). We never issue an `MCP-Session-Id`: every POST
  stands alone, so any gateway replica answers any request, and the official client then opens no GET stream
  and sends no DELETE (both answer 405 with `Allow: POST`, which the spec allows a server without sessions).
- The 2026-07-28 revision: no handshake; every request carries `_meta` with its protocol version and its
  `MCP-Protocol-Version` and `Mcp-Method` (and, for tools/call, `Mcp-Name`) headers, which must agree with the
  body (checked by the official SDK's own request ladder, `mcp.shared.inbound`); `server/discover`; results
  carry `resultType`.

Requests are parsed and results checked against the negotiated version's wire schema (`mcp_types.methods`), so
a 2025 client never sees a 2026-only field. Notifications get 202. Unknown methods and malformed requests are
JSON-RPC errors (HTTP 200 in the handshake era, as the SDK's server answers; 400/404 in the 2026 revision, as it
maps them); a tool that fails answers an `isError: true` result (gateway.mcp.tools).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from aiohttp import web
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types import methods as wire
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    KNOWN_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError

log = logging.getLogger(__name__)

DEFAULT_HANDSHAKE_VERSION = "2025-03-26"  # the transport spec: assume it when a request names no version
VERSION_META = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


class RpcError(Exception):
    """Answer the request with this JSON-RPC error; `http_status` overrides the era's status for it."""

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data
        self.http_status, self.headers = http_status, headers or {}


@dataclass(frozen=True)
class Server:
    """What the endpoint says about itself and what it does: `list_tools()` gives the Tool objects and
    `call_tool(name, arguments)` runs one (raising RpcError for an unknown tool)."""

    info: types.Implementation
    instructions: str
    list_tools: Callable[[], list[types.Tool]]
    call_tool: Callable[[str, dict[str, Any]], Awaitable[types.CallToolResult]]

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False))


def origin_allowed(origin: str | None, public_base_url: str, extra: tuple[str, ...]) -> bool:
    """A request without Origin comes from a non-browser client; a browser's must be ours or one configured
    (DNS-rebinding and cross-site protection, as the transport spec requires)."""
    if origin is None:
        return True
    ours = urlsplit(public_base_url)
    return origin in (f"{ours.scheme}://{ours.netloc}", *extra)


async def answer(request: web.Request, server: Server) -> web.Response:
    """One POST of the MCP endpoint, already authenticated."""
    if request.content_type != "application/json":
        return _error(None, types.INVALID_REQUEST, "send the JSON-RPC message as application/json", 415)
    try:
        body = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _error(None, types.PARSE_ERROR, "the body is not valid JSON", 400)
    if not isinstance(body, dict):
        return _error(None, types.INVALID_REQUEST, "send one JSON-RPC message per request (no batches)", 400)
    named = request.headers.get("MCP-Protocol-Version")
    if named is not None and named not in KNOWN_PROTOCOL_VERSIONS:
        return _error(body.get("id"), types.UNSUPPORTED_PROTOCOL_VERSION, f"protocol version {named} is not supported",
                      400, {"supported": list(KNOWN_PROTOCOL_VERSIONS), "requested": named})
    modern = named in MODERN_PROTOCOL_VERSIONS
    if "id" not in body:
        return _notification(body)
    request_id, method, params = body["id"], body.get("method"), body.get("params", {})
    if (body.get("jsonrpc") != "2.0" or not isinstance(method, str) or isinstance(request_id, bool)
            or not isinstance(request_id, (str, int)) or not isinstance(params, dict)):
        return _error(None, types.INVALID_REQUEST, "not a JSON-RPC 2.0 request: jsonrpc '2.0', an id (string or "
                      "integer), a method and optional params (an object)", 400)
    if modern and (refused := _header_refusal(request, body)) is not None:
        return _error(request_id, refused.code, refused.message, ERROR_CODE_HTTP_STATUS.get(refused.code, 400),
                      refused.data)
    version = params["_meta"][VERSION_META] if modern else named or DEFAULT_HANDSHAKE_VERSION
    try:
        result = await dispatch(server, method, version, params, modern)
    except RpcError as err:
        status = err.http_status or (ERROR_CODE_HTTP_STATUS.get(err.code, 200) if modern else 200)
        return _error(request_id, err.code, err.message, status, err.data, err.headers)
    return _json({"jsonrpc": "2.0", "id": request_id, "result": result})


def _notification(body: dict[str, Any]) -> web.Response:
    """Notifications (initialized, cancelled, progress) need nothing of a stateless server: 202. (A client's
    response would have an id: we never send requests, so none is expected and it is refused as malformed.)"""
    if body.get("jsonrpc") == "2.0" and isinstance(body.get("method"), str) and \
            isinstance(body.get("params", {}), dict):
        return web.Response(status=202)
    return _error(None, types.INVALID_REQUEST, "not a JSON-RPC 2.0 notification: jsonrpc '2.0', a method and "
                  "optional params (an object)", 400)


def _header_refusal(request: web.Request, body: dict[str, Any]) -> InboundLadderRejection | None:
    """The 2026-07-28 checks: `_meta` present with its version, routing headers once each and equal to the body."""
    if (twice := find_duplicated_routing_header(request.headers.items())) is not None:
        return InboundLadderRejection(types.HEADER_MISMATCH, f"the {twice} header is sent more than once")
    verdict = classify_inbound_request(body, headers={k.lower(): v for k, v in request.headers.items()})
    return verdict if isinstance(verdict, InboundLadderRejection) else None


async def dispatch(server: Server, method: str, version: str, params: dict[str, Any] | None, modern: bool) -> dict[str, Any]:
    """The result of one request at `version` (raising RpcError); the helper endpoints call it too."""
    if method not in wire.SPEC_CLIENT_METHODS:
        raise RpcError(types.METHOD_NOT_FOUND, f"no method {method!r}", method)
    try:
        parsed = wire.parse_client_request(method, version, params)
    except KeyError:  # a method of the other era: initialize and ping at 2026-07-28, server/discover before
        raise RpcError(types.METHOD_NOT_FOUND, f"no method {method!r} in protocol version {version}", method) from None
    except ValidationError as exc:
        raise RpcError(types.INVALID_PARAMS, f"invalid params for {method}",
                       json.loads(exc.json(include_url=False, include_input=False))) from None
    result: types.Result
    if isinstance(parsed, types.InitializeRequest):
        asked = parsed.params.protocol_version
        version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        result = types.InitializeResult(protocol_version=version, capabilities=server.capabilities,
                                        server_info=server.info, instructions=server.instructions)
    elif isinstance(parsed, types.DiscoverRequest):
        result = types.DiscoverResult(supported_versions=list(MODERN_PROTOCOL_VERSIONS),
                                      capabilities=server.capabilities, instructions=server.instructions)
    elif isinstance(parsed, types.PingRequest):
        result = types.EmptyResult()
    elif isinstance(parsed, types.ListToolsRequest):
        if parsed.params is not None and parsed.params.cursor is not None:
            raise RpcError(types.INVALID_PARAMS, "tools/list has one page; send no cursor")
        # Every caller sees every tool (each names its scope); not cached, as tools may come with a release.
        result = types.ListToolsResult(tools=server.list_tools(), ttl_ms=0, cache_scope="private")
    elif isinstance(parsed, types.CallToolRequest):
        result = await server.call_tool(parsed.params.name, parsed.params.arguments or {})
    else:
        raise RpcError(types.METHOD_NOT_FOUND, f"method {method!r} is not served here", method)
    try:
        out = wire.serialize_server_result(method, version, result.model_dump(by_alias=True, mode="json",
                                                                                exclude_none=True))
    except ValidationError:
        log.exception("the %s result does not fit protocol version %s", method, version)
        raise RpcError(types.INTERNAL_ERROR, "internal error; it has been logged") from None
    if modern:
        out.setdefault("resultType", "complete")
        out.setdefault("_meta", {})[SERVER_INFO_META] = server.info.model_dump(mode="json", exclude_none=True)
    return out


def _json(payload: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(payload, status=status, headers=headers, dumps=lambda o: json.dumps(o, separators=(",", ":")))


def refusal(code: int, message: str, status: int) -> web.Response:
    """A JSON-RPC error before the request is read (no id known)."""
    return _error(None, code, message, status)


def _error(request_id: object, code: int, message: str, status: int, data: Any = None,
           headers: dict[str, str] | None = None) -> web.Response:
    error = {"code": code, "message": message, **({"data": data} if data is not None else {})}
    return _json({"jsonrpc": "2.0", "id": request_id, "error": error}, status, headers)
