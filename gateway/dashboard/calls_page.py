"""The calls pages: the calls of one business (filtered by agent, status, direction and dates, a page at a time), one
call's page (its timeline with the tools the agent called, summary, extracted data, quality scores, transcript and its
recording to play), and a test
call the owner places to their own phone. Every action is the RPC the `/api/v1/calls` and `/api/v1/recordings` routes
make, as the signed-in owner: a call of another owner is 404, as in the API."""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import grpc
from aiohttp import web
from google.protobuf.timestamp_pb2 import Timestamp

from contracts import calls as calls_contract
from core.grpc_errors import from_rpc_error
from core.messages import set_timestamp
from gateway.auth import Principal
from gateway.context import deps
from gateway.convert import to_json
from gateway.dashboard import pages
from gateway.dashboard.forms import form_token, same_site_form
from gateway.dashboard.pages import CALLS_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import agents_pb2, calls_pb2, common_pb2

AGENTS_SHOWN = 100
PAGE_SIZES = (10, 25, 50, 100)
FILTERS = ("agent_id", "status", "direction")
DATES = ("from", "to")
SPEAKERS = ("Agent", "Caller")
RESULT_SHOWN = 300  # characters of a tool call's result the timeline shows at once; the whole text is one click away


class Refused(Exception):
    """A filter the page cannot ask for (a malformed date)."""


def _day(query: Mapping[str, str], name: str) -> datetime | None:
    try:
        return pages.day_start(query.get(name, ""))
    except ValueError:
        raise Refused(f"the {name} date must be a date (YYYY-MM-DD)") from None


def list_request(business_id: str, query: Mapping[str, str]) -> calls_pb2.ListCallsRequest:
    """The ListCalls request of the page's filters: `to` is a whole day (UTC), so it lists calls before the next."""
    size = int(query["limit"]) if query.get("limit", "").isdigit() and int(query["limit"]) in PAGE_SIZES \
        else PAGE_SIZES[1]
    request = calls_pb2.ListCallsRequest(business_id=business_id, page=common_pb2.PageRequest(
        limit=size, cursor=query.get("cursor", "")))
    for name in FILTERS:
        if query.get(name):
            setattr(request, name, query[name])
    since, until = _day(query, "from"), _day(query, "to")
    set_timestamp(request, "created_from", since)
    set_timestamp(request, "created_before", until + timedelta(days=1) if until is not None else None)
    return request


async def _agents(request: web.Request, principal: Principal, business_id: str) -> dict[str, str]:
    """The business's agents, id to name."""
    listed = await deps(request).clients["agents"].as_caller(principal.tenant).ListAgents(
        agents_pb2.ListAgentsRequest(business_id=business_id, page=common_pb2.PageRequest(limit=AGENTS_SHOWN)))
    return {a.id: a.name for a in listed.agents}


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None, placed: calls_pb2.Call | None = None,
                  form: dict[str, Any] | None = None) -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    query = {k: v for k, v in request.query.items() if k in (*FILTERS, *DATES, "limit")}
    rows, cursor = [], ""
    if business_id:
        try:
            listed = await deps(request).clients["calls"].as_caller(principal.tenant).ListCalls(
                list_request(business_id, {**query, "cursor": request.query.get("cursor", "")}))
            rows, cursor = list(listed.calls), listed.page.next_cursor
        except Refused as why:
            status, error = 400, f"No calls listed: {why}."
        except grpc.aio.AioRpcError as exc:
            err = from_rpc_error(exc)
            status, error = err.http_status, f"No calls listed: {err.message}"
    return page("calls.html", status, title="Calls", active="calls", form_token=form_token(session),
                businesses=businesses, business_id=business_id, agents=await _agents(request, principal, business_id)
                if business_id else {}, calls=rows, cursor=cursor, query={"business_id": business_id, **query},
                statuses=calls_contract.STATUSES, directions=calls_contract.DIRECTIONS, page_sizes=PAGE_SIZES, notice=notice,
                error=error, placed=placed, form=form or {})


async def calls(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""))


async def place_test_call(request: web.Request) -> web.StreamResponse:
    """The test call: the agent calls the phone the owner gave, as POST /api/v1/calls places it (with the
    compliance decision first when asked)."""
    business_id = str((await request.post()).get("business_id", ""))
    posted = await pages.posted(request, _render, "placed", business_id)
    if isinstance(posted, web.Response):
        return posted
    session, principal, form = posted
    entered: dict[str, Any] = {"agent_id": str(form.get("agent_id", "")), "to": str(form.get("to", "")).strip(),
                               "compliance": form.get("compliance") == "enforce"}
    create = calls_pb2.CreateCallRequest(agent_id=entered["agent_id"], to=entered["to"])
    if entered["compliance"]:
        create.compliance = calls_pb2.COMPLIANCE_MODE_ENFORCE
    try:
        call = await deps(request).clients["calls"].as_caller(principal.tenant).CreateCall(create)
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await _render(request, session, principal, business_id, status=err.http_status, form=entered,
                             error=f"The test call was not placed ({err.code}): {err.message}")
    return await _render(request, session, principal, business_id, placed=call)


def turns(transcript: str) -> list[dict[str, str]]:
    """A transcript's turns ("Agent: ..." and "Caller: ..." lines); a line of no speaker goes on the turn before."""
    said: list[dict[str, str]] = []
    for line in transcript.splitlines():
        speaker, sep, text = line.partition(":")
        if sep and speaker.strip() in SPEAKERS:
            said.append({"speaker": speaker.strip(), "text": text.strip()})
        elif said and line.strip():
            said[-1]["text"] += f"\n{line.strip()}"
        elif line.strip():
            said.append({"speaker": "", "text": line.strip()})
    return said


def same_origin(url: str) -> str:
    """The signed recording link as a path on the page's own origin (the gateway serves it wherever the dashboard
    is opened, and the page's Content-Security-Policy allows media from its own origin only); a link elsewhere is
    kept as it is."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.path == calls_contract.AUDIO_PATH else url


def party(call: calls_pb2.Call) -> str:
    """Who the call was with: "from" the caller of an inbound call, "to" the callee of an outbound one."""
    if call.direction == "inbound":
        return f"from {getattr(call, 'from') if call.HasField('from') else 'an unknown number'}"
    return f"to {call.to}"


def timeline(call: calls_pb2.Call) -> list[dict[str, Any]]:
    """The call's history, oldest first: how it began, when the conversation started, each tool the agent called
    (name, arguments, result, outcome, duration: as the call's detail in the API has them), when it ended, and its
    last change. The arguments are the owner's own data, shown in full (the page escapes them)."""
    began = "received" if call.direction == "inbound" else "placed (queued)"
    entries: list[tuple[Timestamp, dict[str, Any]]] = [(call.created_at, {"said": began})]
    if call.HasField("started_at"):
        entries.append((call.started_at, {"said": "the conversation started"}))
    for tool_call in call.tool_calls:
        shown = to_json(tool_call)
        entries.append((tool_call.created_at, {"tool": {
            "name": shown["name"], "outcome": shown["outcome"], "duration_ms": shown["duration_ms"],
            # by key: a Struct keeps no order, and the page should read the same each time
            "arguments": json.dumps(shown["arguments"], ensure_ascii=False, sort_keys=True) if shown["arguments"]
            else "",
            "result": shown["result"]}}))
    if call.HasField("ended_at"):
        entries.append((call.ended_at, {"said": "the call ended"}))
    entries.append((call.updated_at, {"said": f"{call.status} (last change)"}))
    ordered = sorted(entries, key=lambda entry: (entry[0].seconds, entry[0].nanos))  # stable: ties keep this order
    return [{"at": at, **entry} for at, entry in ordered]


def _shown(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


async def _recording(rpc: Any, call_id: str) -> calls_pb2.Recording:
    """The call's recording state; for a call found whose recording is not (a person's erasure took it: 404), the
    page says so instead of failing."""
    try:
        found: calls_pb2.Recording = await rpc.GetRecording(calls_pb2.GetRecordingRequest(call_id=call_id))
        return found
    except grpc.aio.AioRpcError as exc:
        if from_rpc_error(exc).code != "not_found":
            raise
        return calls_pb2.Recording(call_id=call_id, recording_status="erased", transcript_status="erased")


async def call_page(request: web.Request) -> web.StreamResponse:
    _, principal = await signed_in(request)
    rpc = deps(request).clients["calls"].as_caller(principal.tenant)
    call_id = request.match_info["id"]
    try:
        call = await rpc.GetCall(calls_pb2.GetCallRequest(id=call_id))
        recording = await _recording(rpc, call_id)
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("call.html", err.http_status, title="Call", active="calls", call=None,
                    error=f"{err.message}.")
    try:
        said = await rpc.GetTranscript(calls_pb2.GetCallRequest(id=call_id))
        transcript, transcript_note = turns(said.transcript), ""
    except grpc.aio.AioRpcError as exc:
        transcript, transcript_note = [], from_rpc_error(exc).message
    data = to_json(call)
    return page("call.html", title=f"Call {party(call)}", active="calls", call=call, error=None, turns=transcript, transcript_note=transcript_note,
                timeline=timeline(call), result_shown=RESULT_SHOWN,
                structured={k: _shown(v) for k, v in data["structured_data"].items() if k != "quality_dimensions"},
                quality=data["quality_dimensions"], recording=recording,
                audio=same_origin(recording.recording_url) if recording.HasField("recording_url") else "")


def add_routes(app: web.Application) -> None:
    app.router.add_get(CALLS_PATH, calls)
    app.router.add_post(CALLS_PATH, same_site_form(place_test_call))
    app.router.add_get(f"{CALLS_PATH}/{{id}}", call_page)
