"""Agent RPCs: proto in, domain rules, the provider assistant and the store, proto out.

Two systems hold an agent: the provider assistant and our row. Creation makes the
assistant first and removes it again if the row cannot be stored. An update holds the
agent's write lease (core.leases: one writer per agent, and no transaction or pooled
connection held while the provider answers), syncs the provider, then writes the row, its
version, its audit rows and its events in one short transaction that also ends the lease;
if that transaction fails after the provider was changed, the provider is put back to the
previous configuration.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa
from google.protobuf import json_format
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases, tenant
from core.errors import ServiceError, invalid, not_found
from core.ids import is_uuid, new_id, utcnow
from core.messages import optional, set_timestamp, struct
from core.outbox import add_event
from core.pagination import clamp_limit, page_query, split_page
from core.records import find_owned
from core.tenant import require_business
from providers.voice.adapter import ProviderError
from services.agents import domain
from services.agents.store import agent_versions, agents, outbox, phone_numbers, prompt_history
from switchboard.v1 import agents_pb2, common_pb2, events_pb2

log = logging.getLogger(__name__)

# A configuration write holds its agent for at most this long (a provider call with its retries fits well
# inside); a concurrent write waits up to LEASE_WAIT_SECONDS for it, within the callers' 30 s deadline.
WRITE_LEASE = timedelta(seconds=60)
LEASE_WAIT_SECONDS = 25.0
AGENTS_PAGE = (50, 100)
VERSIONS_PAGE = (50, 100)


def _dict(message, field: str) -> dict | None:
    """A Struct field as a dict, or None when the caller did not send it."""
    return json_format.MessageToDict(getattr(message, field)) if message.HasField(field) else None


def _config(row) -> domain.AgentConfig:
    return domain.AgentConfig.from_dict({**row.config, "name": row.name})


def _stored_config(config: domain.AgentConfig) -> dict:
    data = config.to_dict()
    data.pop("name")
    return data


def _summary(row, phone_number: str | None = None) -> agents_pb2.AgentSummary:
    summary = agents_pb2.AgentSummary(id=str(row.id), name=row.name, business_id=str(row.business_id),
                                      status=row.status, phone_number=phone_number)
    set_timestamp(summary, "created_at", row.created_at)
    return summary


async def agent_phone_numbers(conn: AsyncConnection, agent_ids: list[str]) -> dict[str, str]:
    """The first number assigned to each agent."""
    if not agent_ids:
        return {}
    rows = await conn.execute(sa.select(phone_numbers.c.agent_id, phone_numbers.c.phone_number)
                              .where(phone_numbers.c.agent_id.in_(agent_ids))
                              .order_by(phone_numbers.c.assigned_at.desc()))
    return {str(r.agent_id): r.phone_number for r in rows}  # newest first, so the earliest is written last


async def find_agent(conn: AsyncConnection, agent_id: str, *, lock: bool = False, field: str = "id"):
    """The caller's agent, or not_found (another business's agent is not found either)."""
    return await find_owned(conn, agents, agent_id, "agent", field=field, lock=lock)


async def undo_at_provider(step: Awaitable, what: str) -> None:
    """Run a compensating provider call after our own write failed; if it fails too, log it for
    reconciliation by hand (the caller still gets the original error)."""
    try:
        await step
    except Exception:  # noqa: BLE001 - logged; the original error is what the caller sees
        log.error("%s could not be undone at the voice provider; fix it by hand", what)


@dataclass(frozen=True)
class Write:
    """One configuration write: where it comes from and what the owner-edit guard needs to know."""

    source: str  # update, persona, sms_prompt or rollback
    expected_version: int | None = None
    force: bool = False
    reason: str | None = None
    metadata: dict | None = None
    rollback_of: int | None = None


@dataclass(frozen=True)
class Written:
    row: object
    change: domain.Change
    metadata_changed: bool

    @property
    def updated_fields(self) -> list[str]:
        return self.change.changed + (["metadata"] if self.metadata_changed else [])


class AgentRpcs:
    """Mixin of AgentsServicer: everything about agents themselves."""

    voice = None  # providers.voice.adapter.VoiceProvider
    engine = None
    rt = None

    # -- reads -----------------------------------------------------------------------

    async def ListAgents(self, request, context):
        who = tenant.require_account()
        limit = clamp_limit(request.page.limit, *AGENTS_PAGE)
        query = sa.select(agents).where(agents.c.business_id.in_(who.business_ids))
        if optional(request, "business_id"):
            query = query.where(agents.c.business_id == require_business(who, request.business_id))
        query = page_query(query, agents.c.created_at, agents.c.id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.created_at, r.id))
            numbers = await agent_phone_numbers(conn, [str(r.id) for r in rows])
        summaries = [_summary(r, numbers.get(str(r.id))) for r in rows]
        return agents_pb2.ListAgentsReply(agents=summaries, page=page)

    async def LookupAgents(self, request, context):
        who = tenant.require_account()
        ids = [i for i in request.ids if is_uuid(i)]
        async with self.engine.connect() as conn:
            rows = (await conn.execute(sa.select(agents.c.id, agents.c.name, agents.c.business_id, agents.c.status,
                                                 agents.c.created_at)
                                       .where(agents.c.id.in_(ids), agents.c.business_id.in_(who.business_ids)))).all()
        return agents_pb2.ListAgentsReply(agents=[_summary(r) for r in rows])

    async def GetAgent(self, request, context):
        async with self.engine.connect() as conn:
            row = await find_agent(conn, request.id)
            number = (await agent_phone_numbers(conn, [str(row.id)])).get(str(row.id))
        try:
            assistant = await self.voice.get_assistant(row.provider_assistant_id)
        except ProviderError as exc:
            if exc.status == 404:
                raise ProviderError("this agent's assistant no longer exists at the voice provider", 404) from None
            raise
        config = _config(row)
        live_prompt = domain.prompt_from_assistant(assistant)
        agent = agents_pb2.Agent(
            id=str(row.id), name=row.name, business_id=str(row.business_id),
            provider_assistant_id=row.provider_assistant_id, status=row.status,
            first_message=config.first_message, voice=struct(config.voice), model=struct(config.model),
            metadata=struct(row.metadata), provider_config=struct(config.provider_config), version=row.version,
            prompts=agents_pb2.Prompts(
                inbound=agents_pb2.InboundPrompt(prompt=live_prompt if live_prompt is not None else "",
                                                 llm=config.model["model"]),
                outbound=agents_pb2.OutboundPrompt(prompt=config.outbound_prompt,
                                                   llm=config.outbound_llm or config.model["model"],
                                                   first_message=config.outbound_first_message),
                sms=agents_pb2.SmsPrompt(prompt=config.sms_prompt, llm=config.sms_llm or config.model["model"])))
        if number:
            agent.phone_number = number
        set_timestamp(agent, "created_at", row.created_at)
        set_timestamp(agent, "updated_at", row.updated_at)
        return agent

    # -- create ----------------------------------------------------------------------

    async def CreateAgent(self, request, context):
        require_business(tenant.require_account(), request.business_id)
        config = domain.new_config(request.name, request.system_prompt,
                                   optional(request, "first_message"),
                                   _dict(request, "voice") or {}, _dict(request, "model") or {})
        agent_id, now = new_id(), utcnow()
        assistant = await self.voice.create_assistant(domain.assistant_body(config, agent_id, request.business_id))
        assistant_id = assistant["id"]
        try:
            async with self.engine.begin() as conn:
                row = (await conn.execute(agents.insert().values(
                    id=agent_id, business_id=request.business_id, name=config.name, status=domain.AGENT_STATUS,
                    provider_assistant_id=assistant_id, config=_stored_config(config),
                    metadata=_dict(request, "metadata") or {}, version=1, inbound_prompt_source="create",
                    created_at=now, updated_at=now).returning(agents))).first()
                await self._record(conn, row, domain.initial_change(config), Write(source="create"), version=1,
                                   parent=None, now=now)
        except BaseException:
            await undo_at_provider(self.voice.delete_assistant(assistant_id),
                                   f"agent creation failed; provider assistant {assistant_id}")
            raise
        reply = agents_pb2.AgentCreated(id=agent_id, name=config.name, business_id=request.business_id,
                                        provider_assistant_id=assistant_id, version=1)
        set_timestamp(reply, "created_at", now)
        return reply

    # -- updates ---------------------------------------------------------------------

    async def UpdateAgent(self, request, context):
        texts = {name: getattr(request, name) for name in domain.TEXT_LIMITS
                 if name != "inbound_prompt" and request.HasField(name)}
        inbound = domain.resolve_inbound_alias(
            optional(request, "inbound_prompt"),
            optional(request, "system_prompt"))
        if inbound is not None:
            texts["inbound_prompt"] = inbound

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(current, texts=texts, voice=_dict(request, "voice"),
                                       model=_dict(request, "model"),
                                       provider_config=_dict(request, "provider_config"))

        written = await self._write(request.id, build, Write(
            source="update", metadata=_dict(request, "metadata"),
            expected_version=optional(request, "expected_version")))
        return self._updated_reply(written)

    async def LoadPersona(self, request, context):
        p = request.persona
        persona = domain.check_persona(domain.Persona(
            lead_name=p.lead_name, scenario=p.scenario,
            **{f: getattr(p, f) for f in ("objective", "script", "persona_traits", "callback_number") if p.HasField(f)},
            facts_to_reveal=tuple(p.facts_to_reveal), facts_to_withhold=tuple(p.facts_to_withhold)))
        prompt, opening = domain.compile_persona(persona)

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(
                current, texts={"inbound_prompt": prompt,
                                "first_message": optional(request, "first_message") or opening},
                voice=_dict(request, "voice"), model=_dict(request, "model"))

        written = await self._write(request.agent_id, build, Write(
            source="persona", force=request.force,
            expected_version=optional(request, "expected_version")),
            field="agent_id")
        summary = agents_pb2.PersonaSummary(lead_name=persona.lead_name.strip())
        if persona.objective:
            summary.objective = persona.objective.strip()
        return agents_pb2.PersonaLoaded(id=str(written.row.id), updated=bool(written.updated_fields),
                                        persona_loaded=True, persona_summary=summary,
                                        updated_fields=written.updated_fields, version=written.row.version)

    async def UpdateSmsPrompt(self, request, context):
        reason = (optional(request, "reason") or "").strip() or None
        if reason is not None and len(reason) > 1000:
            raise invalid("reason must be at most 1000 characters")
        domain.check_text(request.sms_prompt, "sms_prompt", domain.PROMPT_MAX)

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.apply_update(current, texts={"sms_prompt": request.sms_prompt})

        written = await self._write(request.agent_id, build, Write(source="sms_prompt", reason=reason),
                                    field="agent_id")
        message = "SMS prompt updated" if written.change.changed else "SMS prompt unchanged"
        return agents_pb2.UpdateSmsPromptReply(success=True, agent_id=str(written.row.id), message=message,
                                               version=written.row.version)

    async def RollbackAgent(self, request, context):
        if request.version < 1:
            raise invalid("version must be a positive integer")
        async with self.engine.connect() as conn:
            row = await find_agent(conn, request.agent_id, field="agent_id")
            target = (await conn.execute(sa.select(agent_versions.c.config_snapshot).where(
                agent_versions.c.agent_id == row.id, agent_versions.c.version == request.version))).first()
        if target is None:
            raise not_found(f"version {request.version} of this agent")

        def build(current: domain.AgentConfig) -> domain.Change:
            return domain.change_to(current, domain.restore_snapshot(target.config_snapshot, current))

        written = await self._write(request.agent_id, build, Write(
            source="rollback", rollback_of=request.version,
            expected_version=optional(request, "expected_version")),
            field="agent_id")
        reply = self._updated_reply(written)
        reply.rollback_of = request.version
        return reply

    @staticmethod
    def _updated_reply(written: Written) -> agents_pb2.AgentUpdated:
        row = written.row
        return agents_pb2.AgentUpdated(
            id=str(row.id), name=row.name, business_id=str(row.business_id),
            provider_assistant_id=row.provider_assistant_id, updated=bool(written.updated_fields),
            updated_fields=written.updated_fields, version=row.version,
            ignored_provider_config=written.change.ignored_provider_config)

    async def _write(self, agent_id: str, build: Callable[[domain.AgentConfig], domain.Change], write: Write,
                     field: str = "id") -> Written:
        """The one path every configuration change takes (see the module docstring)."""
        async with self.engine.connect() as conn:
            row = await find_agent(conn, agent_id, field=field)
        async with leases.hold(self.engine, agents, row.id, duration=WRITE_LEASE, wait_seconds=LEASE_WAIT_SECONDS,
                               what="this agent") as token:
            async with self.engine.connect() as conn:
                row = await find_agent(conn, agent_id, field=field)  # as the previous writer left it
            current = _config(row)
            change = build(current)
            domain.check_owner_edit_guard(current_version=row.version, expected_version=write.expected_version,
                                          source=write.source, inbound_prompt_source=row.inbound_prompt_source,
                                          force=write.force)
            metadata, metadata_changed = domain.merge_metadata(row.metadata, write.metadata or {})
            if not change.changed and not metadata_changed:
                return Written(row, change, False)
            synced = False
            if change.provider_changed:
                await self.voice.update_assistant(row.provider_assistant_id,
                                                  domain.assistant_patch(change.config, change.provider_changed, current))
                synced = True
            try:
                updated = await self._store_write(row, token, current, change, write, metadata)
            except BaseException:
                if synced:  # put the provider assistant back
                    await undo_at_provider(
                        self.voice.update_assistant(row.provider_assistant_id, domain.assistant_patch(
                            current, list(domain.PROVIDER_FIELDS), change.config)),
                        f"a write to agent {row.id} failed; provider assistant {row.provider_assistant_id}")
                raise
        if change.prompts_changed:
            self.rt.events_committed()
        return Written(updated, change, metadata_changed)

    async def _store_write(self, row, token: str, current: domain.AgentConfig, change: domain.Change, write: Write,
                           metadata: dict):
        """The agent row, its version, audit rows and event in one short transaction, if the lease still holds."""
        now = utcnow()
        values = {"metadata": metadata, "updated_at": now, **leases.RELEASED}
        if change.changed:
            values.update(name=change.config.name, config=_stored_config(change.config), version=row.version + 1)
            if "inbound_prompt" in change.changed:
                values["inbound_prompt_source"] = write.source
        async with self.engine.begin() as conn:
            updated = (await conn.execute(agents.update().where(agents.c.id == row.id, leases.held(agents, token))
                                          .values(**values).returning(agents))).first()
            if updated is None:
                raise ServiceError("conflict", "the provider took too long and another request changed this agent "
                                   "meanwhile; nothing of this write was kept, retry")
            if change.changed:
                await self._record(conn, updated, change, write, version=updated.version, parent=row.version,
                                   now=now, previous=current)
        return updated

    async def _record(self, conn: AsyncConnection, row, change: domain.Change, write: Write, *, version: int,
                      parent: int | None, now, previous: domain.AgentConfig | None = None) -> None:
        """The version row, the audit rows and the owner-notification event of one change."""
        who = tenant.current()
        key_id = who.api_key_id if is_uuid(who.api_key_id) else None
        snap = domain.snapshot(change.config)
        await conn.execute(agent_versions.insert().values(
            agent_id=row.id, version=version, business_id=row.business_id, content_hash=domain.content_hash(snap),
            config_snapshot=snap, parent_version=parent, rollback_of=write.rollback_of, source=write.source,
            changed_fields=change.changed, api_key_id=key_id, created_at=now))
        for field in change.prompts_changed:
            await conn.execute(prompt_history.insert().values(
                agent_id=row.id, business_id=row.business_id, field=field,
                previous=getattr(previous, field) if previous else None, current=getattr(change.config, field),
                source=write.source, reason=write.reason, version=version, api_key_id=key_id, created_at=now))
        if previous is not None and change.prompts_changed:
            await add_event(conn, outbox, events_pb2.AgentPromptChanged(
                agent_id=str(row.id), agent_name=row.name, business_id=str(row.business_id),
                fields=change.prompts_changed, source=write.source, reason=write.reason, version=version,
                notify="owner"), str(row.business_id))

    # -- versions --------------------------------------------------------------------

    async def ListVersions(self, request, context):
        limit = clamp_limit(request.page.limit, *VERSIONS_PAGE)
        async with self.engine.connect() as conn:
            row = await find_agent(conn, request.agent_id, field="agent_id")
            query = sa.select(agent_versions).where(agent_versions.c.agent_id == row.id)
            if request.HasField("version"):
                rows = (await conn.execute(query.where(agent_versions.c.version == request.version))).all()
                if not rows:
                    raise not_found(f"version {request.version} of this agent")
                page = common_pb2.PageInfo(has_more=False)
            else:
                query = page_query(query, agent_versions.c.created_at, agent_versions.c.version, request.page, limit)
                rows, page = split_page((await conn.execute(query)).all(), limit, lambda v: (v.created_at, v.version))
        versions = []
        for v in rows:
            out = agents_pb2.AgentVersion(version=v.version, content_hash=v.content_hash, source=v.source,
                                          changed_fields=list(v.changed_fields))
            if v.parent_version is not None:
                out.parent_version = v.parent_version
            if v.rollback_of is not None:
                out.rollback_of = v.rollback_of
            if request.HasField("version"):
                out.config_snapshot.CopyFrom(struct(v.config_snapshot))
            set_timestamp(out, "created_at", v.created_at)
            versions.append(out)
        return agents_pb2.ListVersionsReply(agent_id=str(row.id), versions=versions,
                                            page=page)
