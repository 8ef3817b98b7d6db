"""Eval scenario use cases: create, read, update and delete, each mirrored to the voice provider's eval API.

Never a local scenario without its mirror, nor a mirror without its scenario, and no provider call inside a
database transaction: a create makes the mirror first and undoes it if our insert fails; an update and a delete
hold the scenario's lease (core.leases) while the provider changes, then write; an update whose write fails puts
the provider's copy back.
"""
from __future__ import annotations

from datetime import timedelta

from core import leases, tenant
from core.errors import ServiceError, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.tenant import require_business
from core.uow import UnitOfWork
from providers.compensation import undo_at_provider
from providers.voice.port import ProviderError, VoiceProvider
from services.evals import domain
from services.evals.agents_port import AgentsPort
from services.evals.records import Scenario
from services.evals.repository import EvalsUnit, ScenariosRepository

# A write holds its scenario at most this long (a provider call with its retries fits well inside).
SCENARIO_LEASE = timedelta(seconds=60)
LEASE_WAIT_SECONDS = 25.0


class Scenarios:
    def __init__(self, uow: UnitOfWork[EvalsUnit], voice: VoiceProvider, agents: AgentsPort):
        self.uow = uow
        self.voice = voice
        self.agents = agents

    async def _agent_of(self, business_id: str, agent_id: str) -> None:
        """The agent must be one of the business's (anything else reads as not found)."""
        require_uuid(agent_id, "agent_id")
        agent = await self.agents.agent(agent_id)
        if agent.business_id != business_id:
            raise not_found("agent")

    async def create(self, business_id: str, agent_id: str, name: str, description: str | None,
                     messages: object) -> Scenario:
        require_business(tenant.require_account(), business_id)
        scenario = domain.new_scenario(name, description, messages)
        await self._agent_of(business_id, agent_id)
        mirror_id = await self.voice.create_eval(domain.eval_spec(scenario))
        now = utcnow()
        try:
            async with self.uow.transaction() as work:
                return await work.scenarios.add(
                    id=new_id(), business_id=business_id, agent_id=agent_id, provider_eval_id=mirror_id,
                    name=scenario.name, description=scenario.description, messages=scenario.messages,
                    created_at=now, updated_at=now)
        except BaseException:
            await undo_at_provider(self.voice.delete_eval(mirror_id), f"eval creation failed; provider eval {mirror_id}")
            raise

    async def get(self, scenario_id: str) -> Scenario:
        require_uuid(scenario_id, "id")
        async with self.uow.read() as work:
            row = await work.scenarios.owned(tenant.require_account().business_ids, scenario_id)
        if row is None:
            raise not_found("eval scenario")
        return row

    async def list(self, agent_id: str | None, page: Page) -> Paged:
        if agent_id is not None:
            require_uuid(agent_id, "agent_id")
        who = tenant.require_account()
        async with self.uow.read() as work:
            return await work.scenarios.page(who.business_ids, agent_id, page)

    async def update(self, scenario_id: str, name: str | None, description: str | None,
                     messages: object) -> Scenario:
        """Rename, redescribe and/or replace the turns (`messages` None: kept)."""
        row = await self.get(scenario_id)
        changed = domain.Scenario(
            domain.check_name(name) if name is not None else row.name,
            domain.check_description(description) if description is not None else row.description,
            domain.check_messages(messages) if messages is not None else row.messages)
        before = domain.Scenario(row.name, row.description, row.messages)
        async with leases.hold_with(self.uow, _scenarios, row.id, duration=SCENARIO_LEASE,
                                    wait_seconds=LEASE_WAIT_SECONDS, what="this eval scenario") as token:
            await self.voice.update_eval(row.provider_eval_id, domain.eval_spec(changed))
            try:
                async with self.uow.transaction() as work:
                    updated = await work.scenarios.change_leased(row.id, token, {
                        "name": changed.name, "description": changed.description, "messages": changed.messages,
                        "updated_at": utcnow(), **leases.RELEASED})
                if updated is None:
                    raise ServiceError("conflict", "this eval scenario was changed by another request; retry")
            except BaseException:
                await undo_at_provider(self.voice.update_eval(row.provider_eval_id, domain.eval_spec(before)),
                                       f"eval update failed; provider eval {row.provider_eval_id}")
                raise
        return updated

    async def delete(self, scenario_id: str) -> str:
        row = await self.get(scenario_id)
        async with leases.hold_with(self.uow, _scenarios, row.id, duration=SCENARIO_LEASE,
                                    wait_seconds=LEASE_WAIT_SECONDS, what="this eval scenario") as token:
            try:
                await self.voice.delete_eval(row.provider_eval_id)
            except ProviderError as exc:
                if exc.status != 404:  # already gone at the provider: ours goes too
                    raise
            async with self.uow.transaction() as work:
                await work.scenarios.remove_leased(row.id, token)
        return row.id


def _scenarios(work: EvalsUnit) -> ScenariosRepository:
    """The repository whose rows the scenario's lease is held on (core.leases.hold_with)."""
    return work.scenarios

