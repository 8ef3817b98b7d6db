"""Agent use cases: create, read, the configuration writes (update, persona, SMS prompt, rollback) and
versions. Callers are the servicer and the service-layer tests; the caller's tenant comes from core.tenant.

Two systems hold an agent: the provider assistant and our row. Creation makes the
assistant first and removes it again if the row cannot be stored. An update holds the
agent's write lease (core.leases: one writer per agent, and no transaction or pooled
connection held while the provider answers), syncs the provider, then writes the row, its
version, its audit rows and its events in one short transaction that also ends the lease;
if that transaction fails after the provider was changed, the provider is put back to the
previous configuration.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.protobuf import json_format
from sqlalchemy.exc import IntegrityError

from contracts import agents as agents_contract
from contracts.webhooks import ROTATION_OVERLAP
from core import destinations, leases, tenant
from core.errors import ServiceError, invalid, not_found
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.sealing import SecretBox
from core.tenant import require_business
from core.uow import UnitOfWork
from providers.compensation import undo_at_provider
from providers.status import provider_status
from providers.voice.port import AssistantSpec, ProviderError, VoiceProvider
from services.agents import domain
from services.agents import tools as agent_tools
from services.agents.evals_port import EvalGate, GateOutcome, forced
from services.agents.records import Agent, AgentSummary, CallerNumber, Version
from services.agents.repository import AgentsRepository, AgentsUnit, agents_of
from switchboard.v1 import events_pb2

log = logging.getLogger(__name__)

# A configuration write holds its agent for at most this long (a provider call with its retries fits well
# inside); a concurrent write waits up to LEASE_WAIT_SECONDS for it, within the callers' 30 s deadline.
WRITE_LEASE = timedelta(seconds=60)
LEASE_WAIT_SECONDS = 25.0


def config_of(row: Any) -> domain.AgentConfig:
    return domain.AgentConfig.from_dict({**row.config, "name": row.name})


def _stored_config(config: domain.AgentConfig) -> dict[str, Any]:
    data = config.to_dict()
    data.pop("name")
    return data


def gate_record(gate: GateOutcome) -> dict[str, Any]:
    """What a version keeps of the eval gate's outcome: the verdict and counts (the runs stay in evals)."""
    record = json_format.MessageToDict(gate, preserving_proto_field_name=True)
    record.pop("runs", None)
    return record


async def found(agents: AgentsRepository, agent_id: str, field: str = "id") -> Agent:
    """The caller's agent, or not_found (another business's agent is not found either); `field` names the request
    field in the 400 for a malformed id."""
    require_uuid(agent_id, field)
    row = await agents.owned(tenant.require_account().business_ids, agent_id)
    if row is None:
        raise not_found("agent")
    return row



@dataclass(frozen=True)
class Write:
    """One configuration write: where it comes from, what the owner-edit guard and the eval gate need to know,
    and the agent's settings that are not versioned configuration (metadata, eval_gate)."""

    source: str  # update, dashboard (the owner's edit: update_source), persona, sms_prompt or rollback
    expected_version: int | None = None
    force: bool = False  # past the owner-edit guard (persona) and the eval gate
    reason: str | None = None
    metadata: dict[str, Any] | None = None
    eval_gate: bool | None = None
    rollback_of: int | None = None


def update_source(who: tenant.Tenant) -> str:
    """The source of an update: "dashboard" when the owner makes it signed in to the dashboard (a session: an account
    with no API key, not a service acting for a business), which is the owner's edit by hand that the owner-edit guard
    protects from a persona (domain.check_owner_edit_guard); "update" when it comes through the API."""
    in_person = who.account_id and not who.api_key_id and not who.account_id.startswith("service:")
    return domain.OWNER_SOURCES[0] if in_person else "update"


@dataclass(frozen=True)
class Created:
    row: Agent
    tool_secret: str | None = None  # made with the agent's first custom tool: shown once


@dataclass(frozen=True)
class Rotated:
    row: Agent
    secret: str
    previous_expires_at: datetime | None  # None: the agent had no secret before


@dataclass(frozen=True)
class Written:
    row: Agent
    change: domain.Change
    settings_changed: list[str] = dataclasses.field(default_factory=list)  # metadata, eval_gate
    # The eval gate's outcome when it applied; with a refusing status nothing was written.
    eval_gate: GateOutcome | None = None
    tool_secret: str | None = None  # as Created.tool_secret

    @property
    def refused(self) -> bool:
        return self.eval_gate is not None and self.eval_gate.status in agents_contract.GATE_REFUSES

    @property
    def updated_fields(self) -> list[str]:
        return [] if self.refused else self.change.changed + self.settings_changed


@dataclass(frozen=True)
class AgentView:
    """An agent as GET shows it: the row, its configuration, the prompt live at the provider, its number."""

    row: Agent
    config: domain.AgentConfig
    live_prompt: str | None
    phone_number: str | None


class Agents:
    def __init__(self, uow: UnitOfWork[AgentsUnit], voice: VoiceProvider, evals: EvalGate, gate_wait_seconds: float,
                 box: SecretBox, allow_loopback: bool):
        self.uow = uow  # the agents, their versions and prompt history (services.agents.repository)
        self.voice = voice
        self.evals = evals
        self.gate_wait_seconds = gate_wait_seconds
        self.box = box  # seals the tool secrets (as the webhooks service seals its secrets)
        self.allow_loopback = allow_loopback  # custom tools may call loopback URLs (core.destinations)

    # -- reads -----------------------------------------------------------------------

    async def list_agents(self, business_id: str | None, page: Page) -> tuple[Paged, dict[str, str]]:
        """A page of the caller's agents (of one business when named) and each one's first number."""
        who = tenant.require_account()
        businesses = [require_business(who, business_id)] if business_id else who.business_ids
        async with self.uow.read() as work:
            paged = await work.agents.page(businesses, page)
            numbers = await work.agents.first_numbers([str(r.id) for r in paged.rows])
        return paged, numbers

    async def lookup(self, ids: list[str]) -> list[AgentSummary]:
        """The caller's agents among `ids` (others and malformed ids are left out)."""
        who = tenant.require_account()
        async with self.uow.read() as work:
            return await work.agents.by_ids([i for i in ids if is_uuid(i)], who.business_ids)

    async def directory(self) -> tuple[list[AgentSummary], dict[str, str]]:
        """Every agent of the caller's businesses, oldest first, and each one's first number (no provider call)."""
        who = tenant.require_account()
        async with self.uow.read() as work:
            rows = await work.agents.directory(who.business_ids)
            return rows, await work.agents.first_numbers([str(r.id) for r in rows])

    async def get(self, agent_id: str) -> AgentView:
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id)
            number = (await work.agents.first_numbers([str(row.id)])).get(str(row.id))
        try:
            live = await self.voice.live_assistant(row.provider_assistant_id)
        except ProviderError as exc:
            if exc.status == 404:
                raise ProviderError("this agent's assistant no longer exists at the voice provider", 404) from None
            raise
        return AgentView(row, config_of(row), live.prompt, number)

    async def tools(self, agent_id: str) -> tuple[Agent, list[dict[str, Any]]]:
        """The caller's agent and its tools as saved now (no provider call)."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, "agent_id")
        return row, config_of(row).tools

    async def calling_profile(self, agent_id: str) -> tuple[Agent, domain.Outbound, CallerNumber | None]:
        """The agent, how it talks on outbound calls, and its first number (None when it has none)."""
        require_uuid(agent_id, "agent_id")
        async with self.uow.read() as work:
            profile = await work.agents.calling_profile(tenant.require_account().business_ids, agent_id)
        if profile is None:
            raise not_found("agent")
        row, number = profile
        return row, domain.outbound(config_of(row)), number

    async def voice_status(self) -> str:
        """How the voice provider answers a cheap authenticated call (providers.status)."""
        try:
            await self.voice.check()
        except ProviderError as exc:
            return provider_status(exc.status)
        return "ok"

    # -- create ----------------------------------------------------------------------

    async def create(self, business_id: str, name: str, system_prompt: str, first_message: str | None,
                     voice: dict[str, Any], model: dict[str, Any], metadata: dict[str, Any],
                     request_id: str | None = None, eval_gate: bool = False,
                     recording_disclosure: dict[str, Any] | None = None,
                     tools: list[Any] | None = None) -> Created:
        """A new agent and its provider assistant; with `request_id`, a repeat returns the agent that request made
        (a concurrent repeat loses the insert race, undoes its assistant and gets 409 conflict) without its tool
        secret (shown once)."""
        require_business(tenant.require_account(), business_id)
        config = domain.new_config(name, system_prompt, first_message, voice, model, recording_disclosure, tools,
                                   self.allow_loopback)
        if request_id:
            async with self.uow.read() as work:
                made = await work.agents.by_request(business_id, request_id)
            if made is not None:
                return Created(made)
        await self._check_destinations(config.tools)
        agent_id, now = new_id(), utcnow()
        secret = agent_tools.new_secret() if agent_tools.has_custom(config.tools) else None
        assistant_id = await self.voice.create_assistant(domain.assistant_spec(config, agent_id, business_id))
        try:
            async with self.uow.transaction() as work:
                row = await work.agents.add(
                    id=agent_id, business_id=business_id, name=config.name, status=domain.AGENT_STATUS,
                    provider_assistant_id=assistant_id, config=_stored_config(config), metadata=metadata, version=1,
                    inbound_prompt_source="create", created_at=now, updated_at=now, request_id=request_id,
                    eval_gate=eval_gate, **(self._secret_values(secret, None, now) if secret else {}))
                await self._record(work, row, domain.initial_change(config), Write(source="create"), version=1,
                                   parent=None, now=now)
        except BaseException as exc:
            await undo_at_provider(self.voice.delete_assistant(assistant_id),
                                   f"agent creation failed; provider assistant {assistant_id}")
            if request_id and isinstance(exc, IntegrityError):
                raise ServiceError("conflict", "another request with this request_id created the agent meanwhile; "
                                   "repeat the request to read it") from None
            raise
        return Created(row, secret)

    # -- tools: where custom tools call, and the secret that signs their requests --------------------

    async def _check_destinations(self, tools: list[dict[str, Any]]) -> None:
        """400 unless every custom tool's host resolves to addresses we may call (as webhook URLs are checked)."""
        for field_name, url in agent_tools.custom_urls(tools):
            await destinations.check_destination(url, self.allow_loopback, field_name, "tool requests")

    def _secret_values(self, secret: str, previous_sealed: str | None, now: datetime) -> dict[str, Any]:
        """The agent's columns for a new tool secret; the previous one (if any) keeps signing for ROTATION_OVERLAP."""
        return {"tool_secret_sealed": self.box.seal(secret), "tool_secret_tail": secret[-4:],
                "tool_secret_previous_sealed": previous_sealed,
                "tool_secret_previous_expires_at": now + ROTATION_OVERLAP if previous_sealed else None}

    async def rotate_tool_secret(self, agent_id: str) -> Rotated:
        """A new secret for the agent's custom tools (one when it had none), under the agent's write lease."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id)
        async with leases.hold_with(self.uow, agents_of, row.id, duration=WRITE_LEASE,
                                    wait_seconds=LEASE_WAIT_SECONDS, what="this agent") as token:
            async with self.uow.read() as work:
                row = await found(work.agents, agent_id)
            secret, now = agent_tools.new_secret(), utcnow()
            values = self._secret_values(secret, row.tool_secret_sealed, now)
            async with self.uow.transaction() as work:
                updated = await work.agents.change_leased(row.id, token, values)
            if updated is None:
                raise ServiceError("conflict", "another request changed this agent meanwhile; nothing was kept, "
                                   "retry")
        return Rotated(updated, secret, values["tool_secret_previous_expires_at"])

    # -- configuration writes ------------------------------------------------------------

    async def update(self, agent_id: str, texts: dict[str, str], *, system_prompt: str | None = None,
                     voice: dict[str, Any] | None = None, model: dict[str, Any] | None = None,
                     provider_config: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None,
                     expected_version: int | None = None, eval_gate: bool | None = None, force: bool = False,
                     recording_disclosure: dict[str, Any] | None = None, tools: list[Any] | None = None) -> Written:
        """A partial update; `system_prompt` is the deprecated alias of `texts["inbound_prompt"]`."""
        texts = dict(texts)
        inbound = domain.resolve_inbound_alias(texts.pop("inbound_prompt", None), system_prompt)
        if inbound is not None:
            texts["inbound_prompt"] = inbound

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(current, texts=texts, voice=voice, model=model, provider_config=provider_config,
                                       recording_disclosure=recording_disclosure, tools=tools,
                                       allow_loopback=self.allow_loopback)

        return await self._write(agent_id, build, Write(source=update_source(tenant.current()), metadata=metadata,
                                                        eval_gate=eval_gate, expected_version=expected_version,
                                                        force=force))

    async def load_persona(self, agent_id: str, persona: domain.Persona, *, first_message: str | None = None,
                           voice: dict[str, Any] | None = None, model: dict[str, Any] | None = None, force: bool = False,
                           expected_version: int | None = None) -> Written:
        """Compile a test-caller persona into the inbound prompt and greeting."""
        prompt, opening = domain.compile_persona(domain.check_persona(persona))

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(current, texts={"inbound_prompt": prompt,
                                                       "first_message": first_message or opening},
                                       voice=voice, model=model)

        return await self._write(agent_id, build, Write(source="persona", force=force,
                                                        expected_version=expected_version), field="agent_id")

    async def update_sms_prompt(self, agent_id: str, sms_prompt: str, reason: str | None,
                                force: bool = False) -> Written:
        reason = domain.check_reason(reason)
        domain.check_text(sms_prompt, "sms_prompt", agents_contract.PROMPT_MAX)

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(current, texts={"sms_prompt": sms_prompt})

        return await self._write(agent_id, build, Write(source="sms_prompt", reason=reason, force=force),
                                 field="agent_id")

    async def rollback(self, agent_id: str, version: int, expected_version: int | None = None,
                       force: bool = False) -> Written:
        """Restore the configuration of an earlier version (as a new version)."""
        if version < 1:
            raise invalid("version must be a positive integer")
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, field="agent_id")
            target = await work.agents.version(row.id, version)
        if target is None:
            raise not_found(f"version {version} of this agent")

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.change_to(current, domain.restore_snapshot(target.config_snapshot, current, self.voice.kept_settings))

        return await self._write(agent_id, build, Write(source="rollback", rollback_of=version, force=force,
                                                        expected_version=expected_version), field="agent_id")

    async def _write(self, agent_id: str, build: Callable[[domain.AgentConfig], domain.Change], write: Write,
                     field: str = "id") -> Written:
        """The one path every configuration change takes (see the module docstring)."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, field)
        async with leases.hold_with(self.uow, agents_of, row.id, duration=WRITE_LEASE,
                                    wait_seconds=LEASE_WAIT_SECONDS, what="this agent") as token:
            async with self.uow.read() as work:
                row = await found(work.agents, agent_id, field)  # as the previous writer left it
            current = config_of(row)
            change = build(current)
            domain.check_owner_edit_guard(current_version=row.version, expected_version=write.expected_version,
                                          source=write.source, inbound_prompt_source=row.inbound_prompt_source,
                                          force=write.force)
            metadata, metadata_changed = domain.merge_metadata(row.metadata, write.metadata or {})
            settings = {**({"metadata": metadata} if metadata_changed else {}),
                        **({"eval_gate": write.eval_gate} if write.eval_gate not in (None, row.eval_gate) else {})}
            if not change.changed and not settings:
                return Written(row, change)
            if "tools" in change.changed:
                await self._check_destinations(change.config.tools)
            gate = await self._gate(row, current, change, write)
            if (refused := Written(row, change, eval_gate=gate)).refused:
                return refused
            secret, secret_columns = None, {}
            if row.tool_secret_sealed is None and agent_tools.has_custom(change.config.tools):
                secret = agent_tools.new_secret()  # the agent's first custom tool
                secret_columns = self._secret_values(secret, None, utcnow())
            synced = False
            if change.provider_changed:
                await self.voice.update_assistant(row.provider_assistant_id, _spec(row, change.config),
                                                  _spec(row, current))
                synced = True
            try:
                updated = await self._store_write(row, token, current, change, write, settings, gate,
                                                  secret_columns)
            except BaseException:
                if synced:  # put the provider assistant back
                    await undo_at_provider(
                        self.voice.update_assistant(row.provider_assistant_id, _spec(row, current),
                                                    _spec(row, change.config)),
                        f"a write to agent {row.id} failed; provider assistant {row.provider_assistant_id}")
                raise
        return Written(updated, change, list(settings), gate, secret)

    async def _gate(self, row: Any, current: domain.AgentConfig, change: domain.Change,
                    write: Write) -> GateOutcome | None:
        """The eval gate's outcome for this change, or None when it does not apply: the agent has not opted in
        (before or by this write: turning the gate off in the same write does not skip it) or the change leaves
        every channel's configuration as it was. `force` skips the runs and is recorded instead."""
        if not (row.eval_gate or write.eval_gate):
            return None
        targets = domain.gate_targets(current, change.config)
        if not targets:
            return None
        if write.force:
            return forced(tenant.current().api_key_id)
        live = await self.voice.live_assistant(row.provider_assistant_id)
        return await self.evals.verdict(
            str(row.id), row.provider_assistant_id,
            [(channel, dataclasses.replace(conversation, tools=live.tools)) for channel, conversation in targets],
            self.gate_wait_seconds)

    async def _store_write(self, row: Any, token: str, current: domain.AgentConfig, change: domain.Change, write: Write,
                           settings: dict[str, Any], gate: GateOutcome | None,
                           secret: dict[str, Any]) -> Any:
        """The agent row (with a new tool `secret`'s columns, if any), its version, audit rows and event in one short
        transaction, if the lease still holds."""
        now = utcnow()
        values = {**settings, **secret, "updated_at": now}
        if change.changed:
            values.update(name=change.config.name, config=_stored_config(change.config), version=row.version + 1)
            if "inbound_prompt" in change.changed:
                values["inbound_prompt_source"] = write.source
        async with self.uow.transaction() as work:
            updated = await work.agents.change_leased(row.id, token, values)
            if updated is None:
                raise ServiceError("conflict", "the provider took too long and another request changed this agent "
                                   "meanwhile; nothing of this write was kept, retry")
            if change.changed:
                await self._record(work, updated, change, write, version=updated.version, parent=row.version,
                                   now=now, previous=current, gate=gate)
        return updated

    async def _record(self, work: AgentsUnit, row: Any, change: domain.Change, write: Write, *, version: int,
                      parent: int | None, now: Any, previous: domain.AgentConfig | None = None,
                      gate: GateOutcome | None = None) -> None:
        """The version row, the audit rows and the owner-notification event of one change."""
        who = tenant.current()
        key_id = who.api_key_id if is_uuid(who.api_key_id) else None
        snap = domain.snapshot(change.config)
        await work.agents.add_version(
            agent_id=row.id, version=version, business_id=row.business_id, content_hash=domain.content_hash(snap),
            config_snapshot=snap, parent_version=parent, rollback_of=write.rollback_of, source=write.source,
            changed_fields=change.changed, api_key_id=key_id, created_at=now,
            eval_gate=gate_record(gate) if gate is not None else None)
        for field in change.prompts_changed:
            await work.agents.add_prompt_change(
                agent_id=row.id, business_id=row.business_id, field=field,
                previous=getattr(previous, field) if previous else None, current=getattr(change.config, field),
                source=write.source, reason=write.reason, version=version, api_key_id=key_id, created_at=now)
        if previous is not None and change.prompts_changed:
            work.emit(events_pb2.AgentPromptChanged(
                agent_id=str(row.id), agent_name=row.name, business_id=str(row.business_id),
                fields=change.prompts_changed, source=write.source, reason=write.reason, version=version,
                notify="owner"), str(row.business_id))

    # -- versions --------------------------------------------------------------------

    async def versions(self, agent_id: str, page: Page) -> tuple[Agent, Paged]:
        """The agent and a page of its versions, newest first."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, field="agent_id")
            return row, await work.agents.versions(row.id, page)

    async def version(self, agent_id: str, version: int) -> tuple[Agent, Version]:
        """The agent and one of its versions (with its snapshot), or not_found."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, field="agent_id")
            kept = await work.agents.version(row.id, version)
        if kept is None:
            raise not_found(f"version {version} of this agent")
        return row, kept


def _spec(row: Any, config: domain.AgentConfig) -> AssistantSpec:
    return domain.assistant_spec(config, str(row.id), str(row.business_id))
