"""Agents area: agents, personas, versions and rollback, the SMS prompt."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from contracts import agents
from core.messages import struct
from gateway.convert import to_json
from gateway.errors import error_response
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields, set_structs
from gateway.schemas import (
    AGENT_CREATE,
    AGENT_UPDATE,
    PERSONA_LOAD,
    ROLLBACK,
    ROTATE_TOOL_SECRET,
    SMS_PROMPT_UPDATE,
    UUID,
    VERSION,
)
from switchboard.v1 import agents_pb2

AGENTS = "switchboard.v1.Agents"
V1 = "/api/v1"
AGENT_ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request", "provider_error")
WRITE_ERRORS = (*AGENT_ERRORS, "conflict")


async def list_agents(ctx: RequestContext) -> Reply:
    req = agents_pb2.ListAgentsRequest(page=ctx.page_request())
    set_fields(req, ctx.query, "business_id")
    reply = await ctx.rpc("agents").ListAgents(req)
    return ctx.listing("agents", [to_json(a) for a in reply.agents], reply.page)


async def get_agent(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("agents").GetAgent(agents_pb2.GetAgentRequest(id=ctx.query["id"])))


async def create_agent(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = agents_pb2.CreateAgentRequest(business_id=b["business_id"], name=b["name"], system_prompt=b["system_prompt"])
    set_fields(req, b, "first_message", "eval_gate")
    set_structs(req, b, "voice", "model", "metadata", "recording_disclosure")
    set_tools(req, b)
    return to_json(await ctx.rpc("agents").CreateAgent(req))


def set_tools(req: Any, body: dict[str, Any]) -> None:
    """The body's tools (objects: the schema says so) onto the request's ToolList, when sent."""
    if "tools" in body:
        req.tools.SetInParent()
        req.tools.tools.extend(struct(tool) for tool in body["tools"])


UPDATE_TEXTS = ("name", "inbound_prompt", "system_prompt", "outbound_prompt", "sms_prompt", "first_message",
                "outbound_first_message", "outbound_llm", "sms_llm", "expected_version", "eval_gate", "force")


async def update_agent(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = agents_pb2.UpdateAgentRequest(id=b["id"])
    set_fields(req, b, *UPDATE_TEXTS)
    set_structs(req, b, "voice", "model", "metadata", "provider_config", "recording_disclosure")
    set_tools(req, b)
    reply = await ctx.rpc("agents").UpdateAgent(req)
    return gate_refusal(reply) or to_json(reply, omit=("rollback_of",))


async def load_persona(ctx: RequestContext) -> Reply:
    b = ctx.body
    p = b["persona"]
    persona = agents_pb2.Persona(lead_name=p["lead_name"], scenario=p["scenario"],
                                 facts_to_reveal=p.get("facts_to_reveal", []),
                                 facts_to_withhold=p.get("facts_to_withhold", []))
    set_fields(persona, p, "objective", "script", "persona_traits", "callback_number")
    req = agents_pb2.LoadPersonaRequest(agent_id=b.get("agent_id") or b["id"], persona=persona, force=bool(b.get("force")))
    set_fields(req, b, "first_message", "expected_version")
    set_structs(req, b, "voice", "model")
    reply = await ctx.rpc("agents").LoadPersona(req)
    return gate_refusal(reply) or to_json(reply)


async def update_sms_prompt(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = agents_pb2.UpdateSmsPromptRequest(agent_id=b["agent_id"], sms_prompt=b["sms_prompt"])
    set_fields(req, b, "reason", "force")
    reply = await ctx.rpc("agents").UpdateSmsPrompt(req)
    return gate_refusal(reply) or to_json(reply)


async def list_versions(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = agents_pb2.ListVersionsRequest(agent_id=q["agent_id"], page=ctx.page_request())
    set_fields(req, q, "version")
    reply = await ctx.rpc("agents").ListVersions(req)
    if "version" in q:
        return {"agent_id": reply.agent_id, "version": to_json(reply.versions[0])}
    return ctx.listing("versions", [to_json(v, omit=("config_snapshot",)) for v in reply.versions], reply.page,
                   agent_id=reply.agent_id)


async def rollback(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = agents_pb2.RollbackAgentRequest(agent_id=b["agent_id"], version=b["version"])
    set_fields(req, b, "expected_version", "force")
    reply = await ctx.rpc("agents").RollbackAgent(req)
    return gate_refusal(reply) or to_json(reply)


async def rotate_tool_secret(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("agents").RotateToolSecret(agents_pb2.RotateToolSecretRequest(id=ctx.body["id"])))


def gate_refused(reply: Any) -> str | None:
    """Why the agent's eval gate refused the change of a write's reply (nothing changed), or None if it did not."""
    gate = reply.eval_gate
    if not reply.HasField("eval_gate") or gate.status not in agents.GATE_REFUSES:
        return None
    names = [run.name + (f" [{run.channel}]" if run.channel else "") for run in gate.runs]
    return agents.gate_refusal(gate.status, gate.failed, gate.total, names)


def gate_refusal(reply: Any) -> web.Response | None:
    """409 conflict with error.eval_gate when the agent's eval gate refused the change (nothing changed)."""
    refused = gate_refused(reply)
    return None if refused is None else error_response("conflict", refused, eval_gate=to_json(reply.eval_gate))


EVAL_GATE = ("Eval gate (opt in with eval_gate: true on the agent): a change of what the agent says on a channel - "
             "inbound (inbound prompt, first_message, model), outbound (outbound prompt, greeting and llm, which fall "
             "back to the inbound ones) or sms (sms prompt and llm, falling back to the inbound prompt and model, with "
             "no greeting) - first runs every eval scenario of the agent against the new configuration of each "
             "channel it changes (the live assistant with the new configuration as the provider's "
             "assistantOverrides: nothing live changes). If any run fails, or the runs have not all ended within "
             "EVAL_GATE_MAX_WAIT_SECONDS (20), the change is refused with 409 conflict and error.eval_gate {status: "
             "failed or unfinished, batch_id, total, completed, passed, failed, runs: the failing and unfinished runs "
             "with their results}, and nothing changes. When it passes the reply's eval_gate says so; an agent "
             "without scenarios passes with status no_scenarios. force: true applies the change without running the "
             "scenarios, recorded in the version as eval_gate {status: forced, forced_by: the key's id}. The runs "
             "are listed by GET /api/v1/evals/run?agent_id= with trigger eval_gate. ")
TOOL_SECRET = ("tools (versioned, see the schema): the agent's first custom tool makes the secret that signs the "
               "requests of its custom tools (the t=...,v1=... scheme webhooks are signed with), "
               "returned once as tool_secret (null otherwise; GET shows tool_secret_masked; never stored in plain "
               "text nor in a version); "
               "rotate it with POST /api/v1/agents/rotate-tool-secret. ")
GUARD = ("Owner-edit guard: every write may send expected_version (the version it read); if the agent has "
         "changed since, the write is refused with 409 conflict and nothing changes. ")
ROUTES = [
    Route("GET", f"{V1}/agents", list_agents, "List agents newest first, or read one with ?id=", "agents",
          scope="agents:read", query=page_query(50, 100, id=UUID, business_id=UUID), response=("AgentList", "Agent"),
          read_one=get_agent, errors=AGENT_ERRORS, rpcs=(f"{AGENTS}/ListAgents", f"{AGENTS}/GetAgent"),
          description="Without id: {agents: [{id, name, business_id, created_at, phone_number, status}], has_more}, "
          "optionally for one business_id. With ?id=: the whole agent (schema Agent): prompts (the inbound prompt is "
          "read live from the provider assistant, so a change made at the provider shows here), voice, model, "
          "first_message, metadata, provider_config, phone_number and the current version. An agent of another "
          "business is 404. A provider outage on ?id= is 500 provider_error."),
    Route("POST", f"{V1}/agents", create_agent, "Create an agent and its provider assistant", "agents",
          scope="agents:write", body=AGENT_CREATE, response="AgentCreated", status=201, errors=AGENT_ERRORS,
          creates=Creates("agent_id", carries=("version",)),
          rpcs=(f"{AGENTS}/CreateAgent",),
          description="business_id must be one of the key's businesses (403 otherwise). Defaults: first_message "
          f"'{agents.DEFAULT_FIRST_MESSAGE}', model {agents.DEFAULT_MODEL['provider']} {agents.DEFAULT_MODEL['model']} "
          f"at temperature {agents.DEFAULT_MODEL['temperature']}, the provider's default voice. Only snake_case keys are read (camelCase keys are ignored). Every agent collects the caller's "
          "name, email, phone and intent at the end of each call. Creation is atomic: if the provider refuses, "
          "nothing is stored (500 provider_error); if storing fails, the provider assistant is removed again. "
          "The configuration becomes version 1 (the reply's version: pin it as expected_version on the next write). "
          + TOOL_SECRET),
    Route("PATCH", f"{V1}/agents", update_agent, "Change an agent's prompts, greeting, voice, model or settings",
          "agents", scope="agents:write", body=AGENT_UPDATE, response="AgentUpdated", errors=WRITE_ERRORS,
          rpcs=(f"{AGENTS}/UpdateAgent",),
          description="Only the fields sent change; updated_fields lists those whose value really changed "
          "(updated is false when none did). name, inbound_prompt (alias system_prompt), first_message, voice, "
          "model and provider_config are synced to the provider assistant first; if the provider refuses, nothing "
          "changes. outbound_* and sms_* are kept by the service and applied at call or message time. metadata is "
          "merged (it is not versioned). Every change of configuration is a new version (GET "
          "/api/v1/agents/versions); every prompt change writes an audit-history row and emits agent.prompt_changed, "
          "which queues an email to the business owner. " + TOOL_SECRET + GUARD + EVAL_GATE),
    Route("POST", f"{V1}/agents/persona", load_persona, "Load a role-play persona into an agent", "agents",
          scope="agents:write", body=PERSONA_LOAD, response="PersonaLoaded", errors=WRITE_ERRORS,
          rpcs=(f"{AGENTS}/LoadPersona",),
          description="Compiles the persona into a role-play inbound prompt (facts_to_reveal are shared only when "
          "asked, facts_to_withhold never) and an opening line ('Hi, this is <lead_name>.' unless first_message is "
          "given), applied through the same path as PATCH (provider sync, version, audit, owner notification). " +
          GUARD + "Loading a persona onto an agent whose inbound prompt was written through the API (at creation, "
          "by PATCH, by a rollback or by another persona) just works: those prompts are automation's own. Only an "
          "inbound prompt the owner edited by hand in the dashboard is protected: replacing it is 409 conflict "
          "unless force is true. Send agent_id or its alias id (one of the two). The replaced prompt stays in the "
          "versions for rollback. " + EVAL_GATE),
    Route("GET", f"{V1}/agents/versions", list_versions, "An agent's configuration versions", "agents",
          scope="agents:read", query={**page_query(50, 100, agent_id=UUID, version=VERSION),
                                      "required": ["agent_id"]},
          response=("AgentVersionList", "AgentVersionDetail"), errors=("unauthorized", "forbidden", "not_found", "invalid_request"),
          rpcs=(f"{AGENTS}/ListVersions",),
          description="Newest first: {agent_id, versions: [{version, content_hash, parent_version, rollback_of, "
          "source, changed_fields, created_at, eval_gate}], has_more}; eval_gate is the eval gate's outcome for that "
          "change (passed, no_scenarios or forced with forced_by) or null when the gate did not apply. Each version is one deployed configuration (name, "
          "prompts, greetings, voice, model, provider_config); content_hash is the sha256 of its canonical JSON, so "
          "equal configurations hash equal. parent_version is the version it replaced; rollback_of names the "
          "version a rollback re-deployed. With ?version=N: {agent_id, version: {..., config_snapshot}}, the full "
          "configuration with the values of secret-looking keys (secret, token, password, api key, credential, "
          "authorization) replaced by '[redacted]' (schema AgentVersionDetail)."),
    Route("POST", f"{V1}/agents/versions/rollback", rollback, "Re-deploy an earlier version of an agent", "agents",
          scope="agents:write", body=ROLLBACK, response="AgentRolledBack", errors=WRITE_ERRORS,
          rpcs=(f"{AGENTS}/RollbackAgent",),
          description="Applies the configuration of `version` through the same path as PATCH, as a new version "
          "whose rollback_of is `version` and whose parent_version is the version it replaced. Redacted secrets "
          "keep their current values. Rolling back to a configuration equal to the current one changes nothing "
          "(updated false). " + GUARD + EVAL_GATE),
    Route("POST", f"{V1}/agents/rotate-tool-secret", rotate_tool_secret, "Rotate an agent's tool secret", "agents",
          scope="agents:write", body=ROTATE_TOOL_SECRET, response="ToolSecretRotated",
          errors=("unauthorized", "forbidden", "not_found", "invalid_request", "conflict"),
          rpcs=(f"{AGENTS}/RotateToolSecret",),
          description="Returns the new secret that signs the agent's custom tool requests, once (an agent without "
          "one gets its first). For 24 hours (previous_secret_expires_at; null when there was none) every request "
          "carries two v1 signatures, one per secret, as webhook deliveries do after a rotation, so the business's "
          "endpoint can switch at any moment in that window. Not a configuration change: no version. An agent of "
          "another business is 404."),
    Route("POST", f"{V1}/sms/update-prompt", update_sms_prompt, "Replace an agent's SMS prompt", "agents",
          scope="agents:write", body=SMS_PROMPT_UPDATE, response="SmsPromptUpdated", errors=WRITE_ERRORS,
          rpcs=(f"{AGENTS}/UpdateSmsPrompt",),
          description="{success: true, agent_id, message, version}. The change is a new version, writes an "
          "audit-history row carrying `reason` and emits agent.prompt_changed. " + EVAL_GATE),
]
