"""The agents pages: the agents of one business, and one agent's page with its prompts per channel (edited here: the
owner's edit, which the owner-edit guard keeps a persona from replacing without force), its tools (built-in ones
turned on or off, send_link's links, transfer_call's destinations, custom tools added or removed: the page's forms
read by gateway.dashboard.agent_tools; the secret that signs the custom tools' requests rotated), its versions (the difference
between two of them, a rollback to one), loading a persona, its eval scenarios and runs, and the eval gate's verdict
on its last change. Every action is the RPC its `/api/v1/agents*` route makes, as the signed-in owner; an agent of
another owner is 404 like any unknown one."""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from aiohttp import web
from google.protobuf import json_format
from multidict import MultiMapping

from contracts import agents as agents_contract
from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from core.messages import struct
from core.rpc import AsCaller
from gateway.auth import Principal
from gateway.context import deps
from gateway.convert import to_json
from gateway.dashboard import agent_tools, pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import AGENTS_PATH, signed_in
from gateway.dashboard.templates import page, when
from gateway.routes.agents import gate_refused
from switchboard.v1 import agents_pb2, common_pb2, evals_pb2

W = TypeVar("W", agents_pb2.AgentUpdated, agents_pb2.PersonaLoaded)  # what a write of the page answers

AGENTS_SHOWN = 50
VERSIONS_SHOWN = 50
PROMPTS = ("inbound_prompt", "outbound_prompt", "sms_prompt")
# What made a version, as the page says it.
# A hunk of a field's difference that starts at its first line: no lines left out before it.
FROM_THE_TOP = re.compile(r"@@ -[01](,\d+)? \+[01](,\d+)? @@")
SOURCES = {"create": "created through the API", "update": "changed through the API",
           "dashboard": "edited by you in the dashboard", "persona": "a persona loaded",
           "sms_prompt": "SMS prompt replaced through the API", "rollback": "rolled back"}


# -- the list ------------------------------------------------------------------------------

async def agents(request: web.Request) -> web.StreamResponse:
    _, principal = await signed_in(request)
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(request.query.get("business_id", ""), businesses)
    cursor = request.query.get("cursor", "")
    listed = await deps(request).clients["agents"].as_caller(principal.tenant).ListAgents(
        agents_pb2.ListAgentsRequest(business_id=business_id,
                                     page=common_pb2.PageRequest(limit=AGENTS_SHOWN, cursor=cursor)))
    return page("agents.html", title="Agents", active="agents", businesses=businesses, business_id=business_id,
                agents=listed.agents, next_cursor=listed.page.next_cursor, query={"business_id": business_id},
                notice=None, error=None)


# -- one agent ----------------------------------------------------------------------------

def _lines(value: Any) -> list[str]:
    """A configuration field's value as lines to compare: a text line by line, anything else as JSON."""
    if value is None:
        return ["(not set)"]
    if isinstance(value, str):
        return value.splitlines() or [""]
    return [json.dumps(value, sort_keys=True)]


def diff_rows(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]]:
    """The fields that differ between two snapshots, each as ("field", its name) then its changed lines with some
    context, (kind, line): kind is added, removed, same or gap (lines left out)."""
    rows = []
    known = [f for f in agents_contract.FIELD_ORDER if f in old or f in new]
    for field in known + sorted((set(old) | set(new)) - set(known)):
        before, after = _lines(old.get(field)), _lines(new.get(field))
        if before == after:
            continue
        rows.append(("field", field))
        for line in list(difflib.unified_diff(before, after, n=3, lineterm=""))[2:]:
            kind = {"@": "gap", "+": "added", "-": "removed"}.get(line[:1], "same")
            if kind == "gap" and FROM_THE_TOP.match(line):
                continue
            rows.append((kind, "" if kind == "gap" else line[1:]))
    return rows


async def _diff(stub: AsCaller, agent_id: str, query: MultiMapping[str]) -> dict[str, Any] | None:
    """The difference between the versions the compare form asked for (`from`, `to`) or why there is none, or None
    when it did not ask."""
    chosen = [query.get("from", ""), query.get("to", "")]
    if not all(v.isdigit() for v in chosen):
        return None
    try:
        old, new = [(await stub.ListVersions(agents_pb2.ListVersionsRequest(agent_id=agent_id, version=int(v))))
                    .versions[0] for v in chosen]
    except grpc.aio.AioRpcError as exc:
        return {"error": f"Cannot compare versions {chosen[0]} and {chosen[1]}: {from_rpc_error(exc).message}"}
    snapshots = [json_format.MessageToDict(v.config_snapshot) for v in (old, new)]
    return {"old": old.version, "new": new.version, "rows": diff_rows(*snapshots), "error": None}


def gate_said(gate: evals_pb2.EvalGateOutcome) -> str:
    """An eval gate's outcome in words."""
    return {"passed": f"passed: {gate.passed} of {gate.total} eval runs passed",
            "no_scenarios": "passed: the agent has no eval scenarios to run",
            "forced": "skipped: the change was forced past it",
            "failed": f"refused: {gate.failed} of {gate.total} eval runs failed",
            "unfinished": "refused: the eval runs had not all ended in time"}.get(gate.status, gate.status)


async def _render(request: web.Request, session: str, principal: Principal, agent_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None, draft: dict[str, Any] | None = None,
                  typed: Form | None = None, secret: dict[str, str] | None = None) -> web.Response:
    """The agent's page; when the agent cannot be read (another owner's: 404) a page saying so, with its status.
    `typed` is a refused tools form, shown again as it was; `secret` a new tool secret, shown this once."""
    d = deps(request)
    stub = d.clients["agents"].as_caller(principal.tenant)
    evals = d.clients["evals"].as_caller(principal.tenant)
    try:
        agent = await stub.GetAgent(agents_pb2.GetAgentRequest(id=agent_id))
        versions = (await stub.ListVersions(agents_pb2.ListVersionsRequest(
            agent_id=agent_id, page=common_pb2.PageRequest(limit=VERSIONS_SHOWN)))).versions
        diff = await _diff(stub, agent_id, request.query)
        scenarios = (await evals.ListEvals(evals_pb2.ListEvalsRequest(agent_id=agent_id))).evals
        runs = (await evals.GetEvalRuns(evals_pb2.GetEvalRunsRequest(agent_id=agent_id))).runs
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("agent.html", err.http_status, title="Agent not shown", active="agents", agent=None,
                    notice=None, error=f"{error + ' ' if error else ''}{err.message}")
    p = agent.prompts
    prompts = {"inbound_prompt": p.inbound.prompt, "outbound_prompt": p.outbound.prompt, "sms_prompt": p.sms.prompt,
               **(draft or {})}
    return page("agent.html", status, title=agent.name, active="agents", agent=agent, prompts=prompts,
                versions=versions, sources=SOURCES, diff=diff, scenarios=scenarios, runs=runs, gate_said=gate_said,
                tools=agent_tools.view(to_json(agent)["tools"], typed), secret=secret,
                form_token=form_token(session), notice=notice, error=error)


async def agent_page(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.match_info["agent_id"])


def _expected_version(form: Form) -> int | None:
    value = str(form.get("expected_version", ""))
    return int(value) if value.isdigit() else None


async def _write(request: web.Request, undone: str, call: Callable[[AsCaller, str, Form], Awaitable[W]],
                 done: Callable[[W, Form], str]) -> web.StreamResponse:
    """A posted write of the agent's page: `call(stub, form)` is its RPC's reply, `done(reply, form)` what the page
    then says; a refusal (the RPC's error, or the eval gate's) is the page again with its status, nothing changed."""
    agent_id = request.match_info["agent_id"]
    posted = await pages.posted(request, _render, undone, agent_id)
    if isinstance(posted, web.Response):
        return posted
    session, principal, form = posted
    draft = {f: _text(form, f) for f in PROMPTS if f in form}
    try:
        reply = await call(deps(request).clients["agents"].as_caller(principal.tenant), agent_id, form)
    except (grpc.aio.AioRpcError, ServiceError) as exc:
        err = from_rpc_error(exc) if isinstance(exc, grpc.aio.AioRpcError) else exc
        return await _render(request, session, principal, agent_id, status=err.http_status, draft=draft, typed=form,
                             error=f"Nothing was {undone}: {err.message}")
    if (refused := gate_refused(reply)) is not None:
        return await _render(request, session, principal, agent_id, status=409, draft=draft, typed=form,
                             error=f"Nothing was {undone}: {refused}")
    said = done(reply, form)
    if reply.HasField("eval_gate"):
        said += f" The eval gate {gate_said(reply.eval_gate)}."
    secret = None  # the agent's first custom tool (added, or back by a rollback) made the secret that signs them
    if isinstance(reply, agents_pb2.AgentUpdated) and reply.HasField("tool_secret"):
        secret = {"value": reply.tool_secret, "note": ""}
    return await _render(request, session, principal, agent_id, notice=said, secret=secret)


def _text(form: Form, field: str) -> str:
    """A textarea's text as typed (a browser sends its line breaks as CR LF)."""
    return str(form.get(field, "")).replace("\r\n", "\n")


async def _update(stub: AsCaller, agent_id: str, form: Form) -> agents_pb2.AgentUpdated:
    """The owner's edit of the prompts: the service records it as theirs (source dashboard)."""
    req = agents_pb2.UpdateAgentRequest(id=agent_id, force=form.get("force") == "1")
    for field in PROMPTS:
        if field in form:
            setattr(req, field, _text(form, field))
    if (expected := _expected_version(form)) is not None:
        req.expected_version = expected
    updated: agents_pb2.AgentUpdated = await stub.UpdateAgent(req)
    return updated


def _updated(reply: agents_pb2.AgentUpdated, form: Form) -> str:
    if not reply.updated:
        return "Nothing changed: the prompts are as they were."
    return f"Saved as version {reply.version} (changed: {', '.join(reply.updated_fields)})."


async def edit(request: web.Request) -> web.StreamResponse:
    return await _write(request, "saved", _update, _updated)


async def _rollback(stub: AsCaller, agent_id: str, form: Form) -> agents_pb2.AgentUpdated:
    version = str(form.get("version", ""))
    req = agents_pb2.RollbackAgentRequest(agent_id=agent_id, version=int(version) if version.isdigit() else 0)
    if (expected := _expected_version(form)) is not None:
        req.expected_version = expected
    rolled_back: agents_pb2.AgentUpdated = await stub.RollbackAgent(req)
    return rolled_back


def _rolled_back(reply: agents_pb2.AgentUpdated, form: Form) -> str:
    if not reply.updated:
        return f"Nothing changed: version {form.get('version')!s} is the configuration in force."
    return f"Rolled back to version {reply.rollback_of}: it is in force again as version {reply.version}."


async def rollback(request: web.Request) -> web.StreamResponse:
    return await _write(request, "rolled back", _rollback, _rolled_back)


async def _persona(stub: AsCaller, agent_id: str, form: Form) -> agents_pb2.PersonaLoaded:
    persona = agents_pb2.Persona(lead_name=str(form.get("lead_name", "")), scenario=_text(form, "scenario"))
    if objective := str(form.get("objective", "")).strip():
        persona.objective = objective
    req = agents_pb2.LoadPersonaRequest(agent_id=agent_id, persona=persona, force=form.get("force") == "1")
    if (expected := _expected_version(form)) is not None:
        req.expected_version = expected
    loaded: agents_pb2.PersonaLoaded = await stub.LoadPersona(req)
    return loaded


def _persona_loaded(reply: agents_pb2.PersonaLoaded, form: Form) -> str:
    summary = reply.persona_summary
    objective = f" (objective: {summary.objective})" if summary.HasField("objective") else ""
    if not reply.updated:
        return f"The persona {summary.lead_name}{objective} was loaded already: nothing changed."
    return (f"Persona {summary.lead_name}{objective} loaded as version {reply.version}: the voice prompt and "
            "greeting are now its role-play.")


async def load_persona(request: web.Request) -> web.StreamResponse:
    return await _write(request, "loaded", _persona, _persona_loaded)


# -- tools ----------------------------------------------------------------------------------

ToolsChange = Callable[[list[dict[str, Any]], Form], list[dict[str, Any]]]


def _tools_write(change: ToolsChange) -> Callable[[AsCaller, str, Form], Awaitable[agents_pb2.AgentUpdated]]:
    """The write of a tools form: the agent's tools as saved, `change`d by the form, replace them through
    UpdateAgent as PATCH /api/v1/agents does (the form's expected_version guards against a change meanwhile)."""
    async def write(stub: AsCaller, agent_id: str, form: Form) -> agents_pb2.AgentUpdated:
        saved = to_json(await stub.GetAgent(agents_pb2.GetAgentRequest(id=agent_id)))["tools"]
        req = agents_pb2.UpdateAgentRequest(id=agent_id, force=form.get("force") == "1")
        req.tools.SetInParent()
        req.tools.tools.extend(struct(tool) for tool in change(saved, form))
        if (expected := _expected_version(form)) is not None:
            req.expected_version = expected
        updated: agents_pb2.AgentUpdated = await stub.UpdateAgent(req)
        return updated
    return write


def _tools_saved(reply: agents_pb2.AgentUpdated, form: Form) -> str:
    if not reply.updated:
        return "Nothing changed: the tools are as they were."
    return f"The tools are saved as version {reply.version}."


async def save_tools(request: web.Request) -> web.StreamResponse:
    return await _write(request, "saved", _tools_write(agent_tools.with_builtins), _tools_saved)


async def add_custom_tool(request: web.Request) -> web.StreamResponse:
    return await _write(request, "saved", _tools_write(agent_tools.with_custom), _tools_saved)


async def remove_custom_tool(request: web.Request) -> web.StreamResponse:
    def without(saved: list[dict[str, Any]], form: Form) -> list[dict[str, Any]]:
        return agent_tools.without_custom(saved, str(form.get("name", "")))
    return await _write(request, "removed", _tools_write(without), _tools_saved)


async def rotate_tool_secret(request: web.Request) -> web.StreamResponse:
    """A new secret for the agent's custom tools, shown this once, as POST /api/v1/agents/rotate-tool-secret."""
    agent_id = request.match_info["agent_id"]
    posted = await pages.posted(request, _render, "rotated", agent_id)
    if isinstance(posted, web.Response):
        return posted
    session, principal, _ = posted
    try:
        rotated = await deps(request).clients["agents"].as_caller(principal.tenant).RotateToolSecret(
            agents_pb2.RotateToolSecretRequest(id=agent_id))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await _render(request, session, principal, agent_id, status=err.http_status,
                             error=f"Nothing was rotated: {err.message}")
    until = when(rotated.previous_secret_expires_at)
    return await _render(request, session, principal, agent_id, secret={
        "value": rotated.tool_secret, "note": f"Requests are signed with the old secret too until {until}." if until
        else ""})


def add_routes(app: web.Application) -> None:
    app.router.add_get(AGENTS_PATH, agents)
    one = f"{AGENTS_PATH}/{{agent_id}}"
    app.router.add_get(one, agent_page)
    app.router.add_post(one, same_site_form(edit))
    app.router.add_post(f"{one}/rollback", same_site_form(rollback))
    app.router.add_post(f"{one}/persona", same_site_form(load_persona))
    app.router.add_post(f"{one}/tools", same_site_form(save_tools))
    app.router.add_post(f"{one}/tools/custom", same_site_form(add_custom_tool))
    app.router.add_post(f"{one}/tools/remove", same_site_form(remove_custom_tool))
    app.router.add_post(f"{one}/tools/rotate-secret", same_site_form(rotate_tool_secret))
