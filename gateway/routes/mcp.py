"""Assistant connector routes: the MCP endpoint (JSON-RPC over Streamable HTTP, both protocol eras) and its
plain-HTTP helpers, all behind a bearer key (gateway.mcp has the protocol and the tools)."""
from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from gateway.errors import error_response
from gateway.mcp import protocol, tools
from gateway.mcp.protocol import RpcError
from gateway.route import Reply, RequestContext, Route
from gateway.schemas import MCP

PATH = "/api/mcp"
SERVER_INFO = types.Implementation(name="switchboard", title="Switchboard", version="0.1.0")
INSTRUCTIONS = ("Switchboard runs AI voice agents on phone numbers for businesses. list_agents and "
                "get_business_info show what the user has; list_recent_calls, check_call_status and get_transcript "
                "read calls; make_call has an agent call someone now. Each tool works only on the businesses this "
                "key or sign-in may reach.")
HELPER_ERRORS = ("unauthorized", "forbidden", "invalid_request")
TOOL_CALL = {"type": "object", "properties": {
    "name": {"type": "string", "enum": list(tools.TOOLS), "description": "the tool (tools/list describes each)"},
    "arguments": {"type": "object", "description": "checked by the tool's inputSchema"}}, "required": ["name"]}


def _server(ctx: RequestContext) -> protocol.Server:
    return protocol.Server(SERVER_INFO, INSTRUCTIONS, lambda: [t.describe() for t in tools.TOOLS.values()],
                           lambda name, arguments: tools.call(ctx, name, arguments))


async def endpoint(ctx: RequestContext) -> Reply:
    settings = ctx.deps.settings
    if not protocol.origin_allowed(ctx.request.headers.get("Origin"), settings.public_base_url,
                                   settings.mcp_allowed_origins):
        return protocol.refusal(types.INVALID_REQUEST, "this Origin may not call the connector (set "
                                "MCP_ALLOWED_ORIGINS to allow a browser origin)", 403)
    return await protocol.answer(ctx.request, _server(ctx))


async def _helper(ctx: RequestContext, method: str, params: dict[str, Any]) -> Reply:
    """What the JSON-RPC endpoint would answer to `method` (handshake era), as plain JSON or an error envelope."""
    try:
        return await protocol.dispatch(_server(ctx), method, LATEST_HANDSHAKE_VERSION, params, modern=False)
    except RpcError as err:
        if err.http_status == 403:
            return error_response("forbidden", err.message, 403, err.headers)
        return error_response("invalid_request", err.message)


async def initialize(ctx: RequestContext) -> Reply:
    b = ctx.body
    return await _helper(ctx, "initialize", {"protocolVersion": b.get("protocolVersion", LATEST_HANDSHAKE_VERSION),
                                             "capabilities": b.get("capabilities", {}),
                                             "clientInfo": {"name": "http", "version": "0", **b.get("clientInfo", {})}})


async def list_tools(ctx: RequestContext) -> Reply:
    return await _helper(ctx, "tools/list", {})


async def call_tool(ctx: RequestContext) -> Reply:
    return await _helper(ctx, "tools/call", {"name": ctx.body["name"], "arguments": ctx.body.get("arguments", {})})


CONNECTOR = (
    "MCP over Streamable HTTP with a bearer key or an OAuth access token (OAuth 2.1 sign-in; a request without a "
    "valid one is 401 with WWW-Authenticate: Bearer resource_metadata=\"<this API>/.well-known/"
    "oauth-protected-resource/api/mcp\", scope=\"agents:read calls:read\"). Both protocol eras: the handshake era (initialize, then "
    "MCP-Protocol-Version on each request; versions " + ", ".join(HANDSHAKE_PROTOCOL_VERSIONS) + ") and the "
    "stateless " + ", ".join(MODERN_PROTOCOL_VERSIONS) + " revision (server/discover; each request carries _meta "
    "and the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, which must agree with the body: -32020 "
    "otherwise). No session is issued: every POST stands alone; GET and DELETE answer 405. Answers are "
    "application/json: a JSON-RPC response, or 202 for a notification. JSON-RPC errors (unknown method -32601, "
    "unknown tool or bad params -32602, unsupported version -32022) come with HTTP 200 in the handshake era and "
    "400/404 in the 2026 revision; a browser Origin other than this API's (or MCP_ALLOWED_ORIGINS) is refused "
    "403. A tool that fails answers isError: true with the error code and message. A tool's scope is that of the "
    "REST route it mirrors; a tool whose scope the key lacks is refused 403 with WWW-Authenticate: Bearer "
    "error=\"insufficient_scope\", scope=\"...\". Tools: "
    + "; ".join(f"{t.name} ({t.scope}, as {t.mirrors})" for t in tools.TOOLS.values()) + ". get_business_info "
    "answers what the key's scopes allow: the facts REST shows behind another scope ("
    + "; ".join(f"{', '.join(fields)}: {scope}" for fields, scope in tools.GUARDED.items()) + ") are left out for a "
    "key without it and named in its withheld list.")
OWN_REPLIES: dict[int, str | tuple[str, str]] = {
    202: "A notification (or a response) accepted; no body",
    400: "A JSON-RPC error: not JSON (-32700), not a JSON-RPC request or a batch (-32600), an unsupported "
         "MCP-Protocol-Version (-32022), or in the 2026 revision bad params (-32602) or headers that disagree with "
         "the body (-32020)",
    403: "A JSON-RPC error: a browser Origin not allowed, or a tool whose scope the key lacks (error.data.code "
         "forbidden; WWW-Authenticate names the scope)",
    404: "A JSON-RPC error in the 2026 revision: no such method (-32601)",
    415: "A JSON-RPC error: the body is not application/json",
}
ROUTES = [
    Route("POST", PATH, endpoint, "The assistant connector (MCP, JSON-RPC 2.0)", "connector", tokens=True,
          own_body=MCP["JsonRpcRequest"], own_replies=OWN_REPLIES, response="JsonRpcResponse", rpcs=tools.RPCS, description=CONNECTOR),
    Route("POST", f"{PATH}/initialize", initialize, "Connector handshake, for plain HTTP clients", "connector", tokens=True,
          body=MCP["McpInitializeRequest"], response="McpInitializeResult", errors=HELPER_ERRORS,
          description="What initialize answers on the MCP endpoint: the protocol version (the one asked for when "
          "it is a handshake-era version, else the newest), capabilities, server info and instructions."),
    Route("POST", f"{PATH}/tools/list", list_tools, "The connector's tools, for plain HTTP clients", "connector", tokens=True,
          response="McpToolList", errors=HELPER_ERRORS,
          description="Every tool with its input and output JSON Schemas; each description names its scope."),
    Route("POST", f"{PATH}/tools/call", call_tool, "Run a connector tool, for plain HTTP clients", "connector", tokens=True,
          scope=tools.scope_of, rpcs=tools.RPCS, body=TOOL_CALL, response="McpToolResult", errors=HELPER_ERRORS,
          description="The tool's result as on the MCP endpoint: content (its JSON as text) and structuredContent, "
          "or isError: true with the error code and message when it failed (arguments that break its inputSchema "
          "included). An unknown tool is 400 invalid_request; a tool whose scope the key lacks 403 forbidden, "
          "with WWW-Authenticate: Bearer error=\"insufficient_scope\"."),
]
