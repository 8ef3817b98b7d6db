"""The assistant connector's tools: what an AI assistant may do for the caller, each through the same route
handlers and services as the REST API (no second copy of a rule) and behind the scope of the REST route it mirrors
(one policy table, the route table: the connector cannot show what REST would refuse the same key).

A tool's result is its structured content (checked by its output schema) and the same JSON as text. A tool that
fails (a call not found, a bad phone number, a provider refusing) answers `isError: true` with the public error
code and message; arguments that break the input schema too (the assistant can read and correct them). An
unknown tool is a JSON-RPC error; a missing scope is refused at the HTTP level, 403 with
`WWW-Authenticate: Bearer error="insufficient_scope"` naming the scope, so a client can ask for it.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
import jsonschema
import mcp_types as types

from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from gateway.convert import to_json
from gateway.errors import insufficient_scope
from gateway.mcp.protocol import RpcError
from gateway.rest_routes import rest_routes
from gateway.route import Handler, RequestContext
from gateway.routes import calls
from gateway.routes.agents import list_agents
from gateway.schemas import CALL_CREATE, CALL_STATUS, E164, UUID, resolved
from switchboard.v1 import calls_pb2, sdr_pb2

LIMIT = {"type": "integer", "minimum": 1, "maximum": 100}
CALL_ID = {**UUID, "description": "the call's id"}
_REST = {f"{r.method} {r.path}": r for r in rest_routes()}


def route_scope(operation: str) -> str:
    """The scope the route table declares for a REST operation ("GET /api/v1/agents"); one it lacks, or whose scope
    depends on the body, fails here, at import."""
    route = _REST.get(operation)
    if route is None:
        raise LookupError(f"no REST route {operation!r} in the route table")
    if not isinstance(route.scope, str):
        raise LookupError(f"{operation} declares no single scope")
    return route.scope


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    mirrors: str  # the REST operation the tool answers as ("GET /api/v1/agents"): its scope is that route's
    input_schema: dict[str, Any]
    output: str  # name of the output schema in gateway.schemas
    run: Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]
    scope: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", route_scope(self.mirrors))

    def describe(self) -> types.Tool:
        return types.Tool(name=self.name, title=self.title, description=f"{self.description} (scope {self.scope})",
                          input_schema=self.input_schema, output_schema=resolved(self.output),
                          annotations=types.ToolAnnotations(read_only_hint=self.scope.endswith(":read"),
                                                            open_world_hint=not self.scope.endswith(":read")))


def _args(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


async def _through(handler: Handler, ctx: RequestContext, query: dict[str, Any] | None = None, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A REST route's handler run for the caller with the query or body that route would have parsed; the call it
    touched, if any, goes to the usage log as the route's would."""
    routed = dataclasses.replace(ctx, query={k: v for k, v in (query or {}).items() if v is not None},
                                 body=body or {})
    out = await handler(routed)
    ctx.call_id = routed.call_id
    if not isinstance(out, dict):  # the tools mirror routes that answer JSON objects
        raise TypeError(f"{handler.__name__} answered {type(out).__name__}, not a JSON object")
    return out


async def _list_agents(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    return await _through(list_agents, ctx, {"limit": a.get("limit", 50), "cursor": a.get("cursor")})


# get_business_info's facts that REST shows only on routes of their own, each behind the scope of that route: in
# the answer only for a caller holding it, else named in its `withheld`.
CALL_VOLUME = ("calls_last_7_days", "calls_last_30_days")
SUBSCRIPTION = ("status", "subscription_status")
GUARDED = {CALL_VOLUME: route_scope("GET /api/v1/analytics/businesses"),
           SUBSCRIPTION: route_scope("GET /api/v1/workspaces")}


async def _business_info(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    """Each business of the key (or the one asked for): details, agents with their numbers, and the GUARDED facts
    whose scope the caller holds (composed by the sdr service: services.sdr.analytics_service)."""
    withheld = [fields for fields, scope in GUARDED.items() if not ctx.principal.has_scope(scope)]
    reply = await ctx.rpc("sdr").GetBusinessInfo(sdr_pb2.BusinessInfoRequest(
        business_id=a.get("business_id"), call_counts=CALL_VOLUME not in withheld))
    hidden = {name for fields in withheld for name in fields}
    return {"businesses": [{k: v for k, v in to_json(b).items() if k not in hidden} for b in reply.businesses],
            "withheld": [{"scope": GUARDED[fields], "fields": list(fields)} for fields in withheld]}


async def _recent_calls(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    return await _through(calls.list_calls, ctx, {"limit": a.get("limit", 10), "agent_id": a.get("agent_id"),
                                                  "status": a.get("status")})


async def _call_status(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    return await _through(calls.get_call, ctx, {"id": a["call_id"]})


async def _transcript(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    found = await ctx.rpc("calls").GetTranscript(calls_pb2.GetCallRequest(id=a["call_id"]))
    ctx.call_id = found.call_id
    return to_json(found)


async def _make_call(ctx: RequestContext, a: dict[str, Any]) -> dict[str, Any]:
    return await _through(calls.create_call, ctx, body=a)


TOOLS = {t.name: t for t in (
    Tool("list_agents", "List agents", "The AI voice agents of the businesses you may reach, newest first, with "
         "their phone numbers and status; pass next_cursor back as cursor for more.", "GET /api/v1/agents",
         _args({"limit": {**LIMIT, "default": 50}, "cursor": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$"}}),
         "AgentList", _list_agents),
    Tool("get_business_info", "Business details", "Each business you may reach (or the one asked for): its name, "
         "time zone, creation time, agents and their numbers; with the "
         f"{GUARDED[CALL_VOLUME]} scope its calls in the last 7 and 30 days, with {GUARDED[SUBSCRIPTION]} its status "
         "and subscription status (the scopes the REST API shows them behind). withheld lists the fields left out "
         "for want of a scope, and that scope.", "GET /api/v1/agents",
         _args({"business_id": {**UUID, "description": "one business; omitted: all of them"}}),
         "BusinessInfo", _business_info),
    Tool("list_recent_calls", "Recent calls", "Calls newest first, optionally of one agent or in one status.",
         "GET /api/v1/calls", _args({"agent_id": UUID, "status": CALL_STATUS, "limit": {**LIMIT, "default": 10}}),
         "CallList", _recent_calls),
    Tool("check_call_status", "Call status", "One call: its status, direction, duration, outcome and summary.",
         "GET /api/v1/calls", _args({"call_id": CALL_ID}, ("call_id",)), "Call", _call_status),
    Tool("get_transcript", "Call transcript", "The transcript (one 'Agent:' or 'Caller:' line per turn) and summary "
         "of a call that has ended and been reported.", "GET /api/v1/transcripts", _args({"call_id": CALL_ID}, ("call_id",)),
         "Transcript", _transcript),
    Tool("make_call", "Place a call", "Have an agent call a phone number now. With compliance skip (the default) "
         "the caller (you) is responsible for the callee's consent and do-not-call rules; with enforce the "
         "platform's compliance decision (do-not-call, consent, the callee's legal hours, the frequency caps) runs "
         "first and refuses with its code and what would make the call legal.", "POST /api/v1/calls",
         _args({"agent_id": {**UUID, "description": "the agent that calls"}, "to": E164,
                "context": CALL_CREATE["properties"]["context"],
                "lead_id": {**UUID, "description": "links the call to a lead and lets the agent use what is known "
                            "of it"},
                "compliance": CALL_CREATE["properties"]["compliance"],
                "callee_timezone": CALL_CREATE["properties"]["callee_timezone"]}, ("agent_id", "to")),
         "CallCreated", _make_call),
)}
# The RPCs the tools call (as the REST routes they share handlers with do), for the route table's contract.
RPCS = ("switchboard.v1.Agents/ListAgents", "switchboard.v1.Sdr/GetBusinessInfo", "switchboard.v1.Calls/ListCalls",
        "switchboard.v1.Calls/GetCall", "switchboard.v1.Calls/GetTranscript", "switchboard.v1.Calls/CreateCall")
_VALIDATORS = {name: jsonschema.Draft202012Validator(t.input_schema, format_checker=jsonschema.FormatChecker())
               for name, t in TOOLS.items()}


def scope_of(body: dict[str, Any]) -> tuple[str, ...]:
    """The scope a tools/call body needs: its tool's (none for an unknown tool, which is refused as such)."""
    name = body.get("name")
    tool = TOOLS.get(name) if isinstance(name, str) else None
    return (tool.scope,) if tool else ()


async def call(ctx: RequestContext, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run a tool for the caller of `ctx`."""
    tool = TOOLS.get(name)
    if tool is None:
        raise RpcError(types.INVALID_PARAMS, f"no tool named {name!r}; tools/list names them: {', '.join(TOOLS)}")
    if not ctx.principal.has_scope(tool.scope):
        message = f"{name} needs the {tool.scope} scope, which this key lacks"
        raise RpcError(types.INVALID_REQUEST, message, {"code": "forbidden", "scope": tool.scope}, http_status=403,
                       headers={"WWW-Authenticate": insufficient_scope(tool.scope, message)})
    wrong = jsonschema.exceptions.best_match(_VALIDATORS[name].iter_errors(arguments))
    if wrong is not None:
        return _failed("invalid_request", _argument_error(wrong))
    try:
        out = await tool.run(ctx, arguments)
    except ServiceError as err:
        return _failed(err.code, err.message)
    except grpc.aio.AioRpcError as exc:
        failure = from_rpc_error(exc)
        return _failed(failure.code, failure.message)
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(out))],
                                structured_content=out)


def _argument_error(wrong: jsonschema.ValidationError) -> str:
    """What to fix, in the words of the argument's description when a pattern says no more than a regex."""
    where = "/".join(str(p) for p in wrong.absolute_path)
    schema = wrong.schema
    said = schema.get("description") if wrong.validator == "pattern" and isinstance(schema, Mapping) else None
    detail = f"must be {said} (got {wrong.instance!r})" if said else wrong.message
    return f"invalid arguments: {where + ' ' if where else ''}{detail}"


def _failed(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{code}: {message}")], is_error=True)
