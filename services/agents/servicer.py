"""Agents gRPC servicer: requests into the agent and phone-number use cases (services.agents.service and
numbers_service), results into replies."""
from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from core import destinations, standings
from core.errors import invalid
from core.grpc_server import Runtime
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page, clamp_limit
from core.sealing import SecretBox
from providers import configured
from providers.messaging.webhooks import INBOUND_PATH
from services.agents import domain, numbers_domain, teardown_consumer
from services.agents import tools as agent_tools
from services.agents.erasure import Erasure
from services.agents.evals_port import GrpcEvalGate
from services.agents.export_pages import AgentsExport, Messages
from services.agents.numbers_service import Numbers
from services.agents.pool import PoolLoader
from services.agents.records import Agent, AgentSummary, Version
from services.agents.repository import agents_units
from services.agents.service import Agents, AgentView, Written
from services.agents.stock import NumberStock
from services.agents.tool_runs import CustomTools
from switchboard.v1 import agents_pb2, agents_pb2_grpc, common_pb2

AGENTS_PAGE = (50, 100)
VERSIONS_PAGE = (50, 100)
PERSONA_OPTIONAL = ("objective", "script", "persona_traits", "callback_number")


def _dict(message: Any, field: str) -> dict[str, Any] | None:
    """A Struct field as a dict, or None when the caller did not send it."""
    return json_format.MessageToDict(getattr(message, field)) if message.HasField(field) else None


def _tools(message: Any) -> list[Any] | None:
    """The ToolList field `tools` as a list of dicts, or None when the caller did not send it."""
    return [json_format.MessageToDict(t) for t in message.tools.tools] if message.HasField("tools") else None


def summary_message(row: Agent | AgentSummary, phone_number: str | None = None) -> agents_pb2.AgentSummary:
    summary = agents_pb2.AgentSummary(id=str(row.id), name=row.name, business_id=str(row.business_id),
                                      status=row.status, phone_number=phone_number)
    set_timestamp(summary, "created_at", row.created_at)
    return summary


def disclosure_message(stored: dict[str, Any] | None) -> agents_pb2.RecordingDisclosure:
    """An agent's recording disclosure in force, from its stored setting (None: the defaults)."""
    setting = domain.disclosure_setting(stored or {})
    return agents_pb2.RecordingDisclosure(mode=setting.mode, message=setting.message, consent=setting.consent)


def agent_message(view: AgentView) -> agents_pb2.Agent:
    row, config = view.row, view.config
    agent = agents_pb2.Agent(
        id=str(row.id), name=row.name, business_id=str(row.business_id),
        provider_assistant_id=row.provider_assistant_id, status=row.status,
        first_message=config.first_message, voice=struct(config.voice), model=struct(config.model),
        metadata=struct(row.metadata), provider_config=struct(config.provider_config), version=row.version,
        tools=[struct(t) for t in config.tools], tool_secret_masked=agent_tools.masked(row.tool_secret_tail),
        phone_number=view.phone_number, eval_gate=row.eval_gate, recording_disclosure=disclosure_message(config.recording_disclosure),
        prompts=agents_pb2.Prompts(
            inbound=agents_pb2.InboundPrompt(prompt=view.live_prompt if view.live_prompt is not None else "",
                                             llm=config.model["model"]),
            outbound=agents_pb2.OutboundPrompt(prompt=config.outbound_prompt,
                                               llm=config.outbound_llm or config.model["model"],
                                               first_message=config.outbound_first_message),
            sms=agents_pb2.SmsPrompt(prompt=config.sms_prompt, llm=config.sms_llm or config.model["model"])))
    set_timestamp(agent, "created_at", row.created_at)
    set_timestamp(agent, "updated_at", row.updated_at)
    return agent


def updated_message(written: Written) -> agents_pb2.AgentUpdated:
    row = written.row
    return agents_pb2.AgentUpdated(
        id=str(row.id), name=row.name, business_id=str(row.business_id),
        provider_assistant_id=row.provider_assistant_id, updated=bool(written.updated_fields),
        updated_fields=written.updated_fields, version=row.version,
        ignored_provider_config=written.change.ignored_provider_config, eval_gate=written.eval_gate,
        tool_secret=written.tool_secret)


def version_message(v: Version, with_snapshot: bool) -> agents_pb2.AgentVersion:
    out = agents_pb2.AgentVersion(version=v.version, content_hash=v.content_hash, source=v.source,
                                  changed_fields=list(v.changed_fields), parent_version=v.parent_version,
                                  rollback_of=v.rollback_of)
    if with_snapshot:
        out.config_snapshot.CopyFrom(struct(v.config_snapshot))
    if v.eval_gate is not None:
        json_format.ParseDict(v.eval_gate, out.eval_gate)
    set_timestamp(out, "created_at", v.created_at)
    return out


def _capabilities(caps: dict[str, Any]) -> agents_pb2.NumberCapabilities:
    return agents_pb2.NumberCapabilities(**{c: bool(caps.get(c)) for c in numbers_domain.CAPABILITIES})


def phone_number_message(row: Any) -> agents_pb2.PhoneNumber:
    msg = agents_pb2.PhoneNumber(
        id=str(row.id), phone_number=row.phone_number, country=row.country, area_code=row.area_code,
        capabilities=_capabilities(row.capabilities), blocked=row.blocked, block_reason=row.block_reason,
        provider_phone_number_id=row.provider_phone_number_id,
        compliance=agents_pb2.NumberCompliance(
            a2p=agents_pb2.A2pEnrollment(status=row.a2p_status),
            emergency_address=agents_pb2.EmergencyAddress(status=row.emergency_status,
                                                          address=row.emergency_address)))
    for field in ("agent_id", "business_id"):
        if getattr(row, field) is not None:
            setattr(msg, field, str(getattr(row, field)))
    set_timestamp(msg, "created_at", row.assigned_at)
    if row.forward_to:
        msg.forwarding.CopyFrom(agents_pb2.Forwarding(to=row.forward_to, ring_seconds=row.ring_seconds))
    return msg


def available_message(r: Any) -> agents_pb2.AvailableNumber:
    return agents_pb2.AvailableNumber(phone_number=r.phone_number, country=r.country, area_code=r.area_code,
                                      capabilities=_capabilities(r.capabilities), locality=r.locality or None)


class AgentsServicer(agents_pb2_grpc.AgentsServicer):
    def __init__(self, agents: Agents, numbers: Numbers, custom_tools: CustomTools, erasure: Erasure,
                 export: AgentsExport):
        self.agents = agents
        self.numbers = numbers
        self.custom_tools = custom_tools
        self.erasure = erasure
        self.export = export

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        """A torn-down business's assistants and agents deleted (services.agents.erasure)."""
        return await self.erasure.erase(request)

    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)

    async def CheckVoiceProvider(self, request: agents_pb2.CheckVoiceProviderRequest,
                                 context: Context) -> agents_pb2.VoiceProviderStatus:
        return agents_pb2.VoiceProviderStatus(status=await self.agents.voice_status())

    async def GetCallingProfile(self, request: agents_pb2.GetCallingProfileRequest,
                                context: Context) -> agents_pb2.CallingProfile:
        row, outbound, number = await self.agents.calling_profile(request.agent_id)
        return agents_pb2.CallingProfile(
            agent_id=str(row.id), name=row.name, business_id=str(row.business_id),
            provider_assistant_id=row.provider_assistant_id, prompt=outbound.prompt,
            first_message=outbound.first_message, model=struct(outbound.model),
            phone_number=number.phone_number if number else None,
            provider_phone_number_id=number.provider_phone_number_id if number else None,
            own_voicemail_detection="voicemailDetection" in (row.config.get("provider_config") or {}),
            recording_disclosure=disclosure_message(row.config.get("recording_disclosure")),
            tools=[struct(t) for t in row.config.get("tools") or ()])

    # -- agents ------------------------------------------------------------------------

    async def ListAgents(self, request: agents_pb2.ListAgentsRequest, context: Context) -> agents_pb2.ListAgentsReply:
        paged, numbers = await self.agents.list_agents(optional(request, "business_id"),
                                                Page.of(request.page, *AGENTS_PAGE))
        return agents_pb2.ListAgentsReply(agents=[summary_message(r, numbers.get(str(r.id))) for r in paged.rows],
                                          page=paged.info())

    async def LookupAgents(self, request: agents_pb2.LookupAgentsRequest,
                           context: Context) -> agents_pb2.ListAgentsReply:
        return agents_pb2.ListAgentsReply(agents=[summary_message(r) for r in
                                                  await self.agents.lookup(list(request.ids))])

    async def AgentDirectory(self, request: agents_pb2.AgentDirectoryRequest,
                             context: Context) -> agents_pb2.ListAgentsReply:
        rows, numbers = await self.agents.directory()
        return agents_pb2.ListAgentsReply(agents=[summary_message(r, numbers.get(str(r.id))) for r in rows])

    async def GetAgent(self, request: agents_pb2.GetAgentRequest, context: Context) -> agents_pb2.Agent:
        return agent_message(await self.agents.get(request.id))

    async def CreateAgent(self, request: agents_pb2.CreateAgentRequest, context: Context) -> agents_pb2.AgentCreated:
        created = await self.agents.create(request.business_id, request.name, request.system_prompt,
                                           optional(request, "first_message"), _dict(request, "voice") or {},
                                           _dict(request, "model") or {}, _dict(request, "metadata") or {},
                                           optional(request, "request_id"), request.eval_gate,
                                           _dict(request, "recording_disclosure"), _tools(request))
        row = created.row
        reply = agents_pb2.AgentCreated(id=str(row.id), name=row.name, business_id=str(row.business_id),
                                        provider_assistant_id=row.provider_assistant_id, version=row.version,
                                        tool_secret=created.tool_secret)
        set_timestamp(reply, "created_at", row.created_at)
        return reply

    async def UpdateAgent(self, request: agents_pb2.UpdateAgentRequest, context: Context) -> agents_pb2.AgentUpdated:
        texts = {name: getattr(request, name) for name in domain.TEXT_LIMITS if request.HasField(name)}
        return updated_message(await self.agents.update(
            request.id, texts, system_prompt=optional(request, "system_prompt"), voice=_dict(request, "voice"),
            model=_dict(request, "model"), provider_config=_dict(request, "provider_config"),
            metadata=_dict(request, "metadata"), expected_version=optional(request, "expected_version"),
            eval_gate=optional(request, "eval_gate"), force=request.force,
            recording_disclosure=_dict(request, "recording_disclosure"), tools=_tools(request)))

    async def RotateToolSecret(self, request: agents_pb2.RotateToolSecretRequest,
                               context: Context) -> agents_pb2.ToolSecretRotated:
        rotated = await self.agents.rotate_tool_secret(request.id)
        reply = agents_pb2.ToolSecretRotated(id=str(rotated.row.id), tool_secret=rotated.secret)
        set_timestamp(reply, "previous_secret_expires_at", rotated.previous_expires_at)
        return reply

    async def LoadPersona(self, request: agents_pb2.LoadPersonaRequest, context: Context) -> agents_pb2.PersonaLoaded:
        p = request.persona
        persona = domain.Persona(
            lead_name=p.lead_name, scenario=p.scenario, **{f: getattr(p, f) for f in PERSONA_OPTIONAL if p.HasField(f)},
            facts_to_reveal=tuple(p.facts_to_reveal), facts_to_withhold=tuple(p.facts_to_withhold))
        written = await self.agents.load_persona(
            request.agent_id, persona, first_message=optional(request, "first_message"), voice=_dict(request, "voice"),
            model=_dict(request, "model"), force=request.force, expected_version=optional(request, "expected_version"))
        summary = agents_pb2.PersonaSummary(lead_name=persona.lead_name.strip(),
                                            objective=persona.objective.strip() if persona.objective else None)
        return agents_pb2.PersonaLoaded(id=str(written.row.id), updated=bool(written.updated_fields),
                                        persona_loaded=True, persona_summary=summary,
                                        updated_fields=written.updated_fields, version=written.row.version,
                                        eval_gate=written.eval_gate)

    async def UpdateSmsPrompt(self, request: agents_pb2.UpdateSmsPromptRequest,
                              context: Context) -> agents_pb2.UpdateSmsPromptReply:
        written = await self.agents.update_sms_prompt(request.agent_id, request.sms_prompt, optional(request, "reason"),
                                                      force=request.force)
        message = ("SMS prompt refused by the eval gate" if written.refused
                   else "SMS prompt updated" if written.change.changed else "SMS prompt unchanged")
        return agents_pb2.UpdateSmsPromptReply(success=not written.refused, agent_id=str(written.row.id),
                                               message=message, version=written.row.version,
                                               eval_gate=written.eval_gate)

    async def RollbackAgent(self, request: agents_pb2.RollbackAgentRequest,
                            context: Context) -> agents_pb2.AgentUpdated:
        reply = updated_message(await self.agents.rollback(request.agent_id, request.version,
                                                           optional(request, "expected_version"), force=request.force))
        reply.rollback_of = request.version
        return reply

    async def ListVersions(self, request: agents_pb2.ListVersionsRequest,
                           context: Context) -> agents_pb2.ListVersionsReply:
        if request.HasField("version"):
            row, version = await self.agents.version(request.agent_id, request.version)
            return agents_pb2.ListVersionsReply(agent_id=str(row.id), versions=[version_message(version, True)],
                                                page=common_pb2.PageInfo(has_more=False))
        row, paged = await self.agents.versions(request.agent_id, Page.of(request.page, *VERSIONS_PAGE))
        return agents_pb2.ListVersionsReply(agent_id=str(row.id), versions=[version_message(v, False)
                                                                            for v in paged.rows], page=paged.info())

    # -- phone numbers ---------------------------------------------------------------------

    async def ListPhoneNumbers(self, request: agents_pb2.ListPhoneNumbersRequest,
                               context: Context) -> agents_pb2.ListPhoneNumbersReply:
        business_id, paged = await self.numbers.list_numbers(
            optional(request, "business_id"), request.all_businesses, optional(request, "phone_number"),
            Page.of(request.page, *numbers_domain.ASSIGNED_PAGE))
        return agents_pb2.ListPhoneNumbersReply(business_id=business_id, page=paged.info(),
                                                phone_numbers=[phone_number_message(r) for r in paged.rows])

    async def ListAvailableNumbers(self, request: agents_pb2.ListAvailableNumbersRequest,
                                   context: Context) -> agents_pb2.ListAvailableNumbersReply:
        paged, purchase = await self.numbers.available(optional(request, "country"), optional(request, "area_code"),
                                                       optional(request, "capability"), optional(request, "after"),
                                                       clamp_limit(request.limit, *numbers_domain.AVAILABLE_PAGE))
        reply = agents_pb2.ListAvailableNumbersReply(numbers=[available_message(r) for r in paged.rows],
                                                     page=paged.info())
        if purchase is not None:
            reply.purchase.CopyFrom(agents_pb2.NumberPurchase(country=purchase.country, area_code=purchase.area_code,
                                                              status=purchase.status, message=purchase.message))
            set_timestamp(reply.purchase, "requested_at", purchase.requested_at)
        return reply

    async def GetAgentTools(self, request: agents_pb2.GetAgentToolsRequest, context: Context) -> agents_pb2.AgentTools:
        row, tools = await self.agents.tools(request.agent_id)
        return agents_pb2.AgentTools(agent_id=str(row.id), business_id=str(row.business_id),
                                     tools=[struct(t) for t in tools])

    async def RunCustomTool(self, request: agents_pb2.RunCustomToolRequest,
                            context: Context) -> agents_pb2.CustomToolRun:
        try:
            arguments = json.loads(request.arguments_json or "{}")
        except ValueError:
            raise invalid("arguments_json must be a JSON object") from None
        run = await self.custom_tools.run(request.agent_id, request.name, request.tool_call_id,
                                          arguments if isinstance(arguments, dict) else {},
                                          json_format.MessageToDict(request.call))
        return agents_pb2.CustomToolRun(outcome=run.outcome, result=run.result)

    async def RouteNumber(self, request: agents_pb2.RouteNumberRequest, context: Context) -> agents_pb2.NumberRoute:
        found = await self.numbers.route(request.phone_number)
        return agents_pb2.NumberRoute(
            phone_number=found.phone_number, business_id=found.business_id, agent_id=found.agent_id,
            agent_name=found.agent_name,
            provider_assistant_id=found.provider_assistant_id,
            recording_disclosure=disclosure_message(found.recording_disclosure) if found.agent_id else None)

    async def CountPhoneNumbers(self, request: agents_pb2.CountPhoneNumbersRequest,
                                context: Context) -> agents_pb2.PhoneNumberCounts:
        return agents_pb2.PhoneNumberCounts(businesses=[
            agents_pb2.BusinessNumberCount(business_id=c.business_id, phone_numbers=c.held)
            for c in await self.numbers.counts()])

    async def AssignPhoneNumber(self, request: agents_pb2.AssignPhoneNumberRequest,
                                context: Context) -> agents_pb2.PhoneNumber:
        return phone_number_message(await self.numbers.assign(
            optional(request, "business_id"), request.phone_number, optional(request, "agent_id") or None))

    async def UpdatePhoneNumber(self, request: agents_pb2.UpdatePhoneNumberRequest,
                                context: Context) -> agents_pb2.PhoneNumber:
        parts = set(request.update_mask.paths)
        if parts - {"agent_id", "forwarding"}:
            raise invalid(f"update_mask names unknown fields: {', '.join(sorted(parts - {'agent_id', 'forwarding'}))}")
        changes = {}
        if "agent_id" in parts:
            changes["agent_id"] = optional(request, "agent_id") or None
        if "forwarding" in parts:
            forwarding = request.forwarding if request.HasField("forwarding") else None
            changes["forward_to"] = forwarding.to if forwarding else None
            changes["ring_seconds"] = optional(forwarding, "ring_seconds") if forwarding else None
        return phone_number_message(await self.numbers.update(optional(request, "business_id"), request.phone_number,
                                                              **changes))

    async def ReleasePhoneNumber(self, request: agents_pb2.ReleasePhoneNumberRequest,
                                 context: Context) -> agents_pb2.ReleasePhoneNumberReply:
        e164, business_id = await self.numbers.release(optional(request, "business_id"), request.phone_number)
        return agents_pb2.ReleasePhoneNumberReply(success=True, phone_number=e164, business_id=business_id)


def build(runtime: Runtime) -> AgentsServicer:
    s = runtime.settings
    voice = runtime.closing(configured.voice(s))
    units = agents_units(runtime.db)
    if s.number_pool_file:
        runtime.run(PoolLoader(units, Path(s.number_pool_file)))
    box, allow_loopback = SecretBox(s.webhook_secrets_key.reveal()), destinations.allow_loopback(s)
    agents = Agents(units, voice, GrpcEvalGate(runtime.client("evals")), s.eval_gate_max_wait_seconds, box,
                    allow_loopback)
    custom_tools = CustomTools(units, box, allow_loopback)
    runtime.closing(custom_tools)
    stock = NumberStock(units, runtime.closing(configured.sms(s)), s.public_base_url + INBOUND_PATH,
                        numbers_domain.StockRules(s.number_stock_low, s.number_stock_target,
                                                  timedelta(days=s.number_idle_release_days),
                                                  s.number_purchases_per_day),
                        interval=s.number_stock_interval_seconds)
    runtime.run(stock)
    numbers = Numbers(units, voice, s.trial_pool_numbers,
                      standings=standings.heard_by(runtime), stock_wanted=stock.wake)
    runtime.consume(teardown_consumer.CONSUMER, teardown_consumer.Teardown(numbers).handle,
                    filter_subject=teardown_consumer.SUBJECT)
    export = AgentsExport(units, Messages(summary_message, version_message, phone_number_message))
    return AgentsServicer(agents, numbers, custom_tools, Erasure(units, voice, numbers), export)
