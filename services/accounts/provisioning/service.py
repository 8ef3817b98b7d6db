"""Signup provisioning: the saga that gives a paid signup its intake agent and phone number
(provisioning_domain has the rules and the order of the steps).

A saga runs under its row's lease (core.leases): the billing worker claims due sagas, and an x402 signup runs its
own at once. Each step calls the agents service (through its port, services.accounts.agents_port) with no
transaction held and then stores its result, so a crash
between the two repeats a step that is safe to repeat. A failure is stored with its reason (the workspace shows
it) and retried later with a doubling delay: an empty pool or a voice provider outage defers the signup, and it
resumes by itself.
"""
from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from core import deadlines, leases, tenant
from core.background import Detached
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.uow import UnitOfWork
from services.accounts.agents_port import AgentsPort
from services.accounts.provisioning import domain as saga
from services.accounts.records import SagaBusiness, SagaRecord
from services.accounts.repository import AccountsUnit

log = logging.getLogger(__name__)

ACTOR = "signup-provisioning"
SAGA_LEASE = timedelta(seconds=120)
# How long an x402 signup waits for its provisioning before answering deferred: at most this, and never past a
# second before its caller's deadline (Accounts.Signup's leaves 15 s for it after the slowest payment).
INLINE_SECONDS = 15.0
ANSWER_SECONDS = 1.0
CANDIDATE_NUMBERS = 5  # free numbers tried per attempt (another signup may take one first)
# Errors of a number assignment that mean "this number, not the step, failed": try the next one.
NUMBER_TAKEN = ("conflict", "not_found", "invalid_request")


class StepFailed(Exception):
    """A step could not finish now; its message says why (shown to the owner) and the saga retries."""


class Provisioning:
    def __init__(self, uow: UnitOfWork[AccountsUnit], agents: AgentsPort, retry_seconds: float):
        self.uow = uow
        self.agents = agents
        self.retry_seconds = retry_seconds
        self.started = Detached()  # sagas run_now left going on

    async def start(self, work: AccountsUnit, business_id: str, forward_to: str | None) -> None:
        """Store a new saga for a signup (in the signup's unit of work), waiting for its payment (`resume`)."""
        now = utcnow()
        await work.provisioning.add(id=new_id(), business_id=business_id, status=saga.WAITING_PAYMENT,
                                     step=saga.AGENT, forward_to=forward_to, next_attempt_at=now, created_at=now,
                                     updated_at=now)

    async def run_due(self, limit: int = 5) -> int:
        """Run the sagas that are due (claimed under their leases); how many were claimed."""
        async with self.uow.transaction() as work:
            claimed = await work.provisioning.claim_due(limit, SAGA_LEASE)
        for row in claimed:
            await self._advance(row, row.lease_token or "")
        return len(claimed)

    async def run_now(self, business_id: str, token: str, within: float = INLINE_SECONDS) -> SagaRecord | None:
        """Run a saga `start` leased to its signup (x402: provisioned before the reply); the row after `within`
        seconds at most (less when the caller's deadline comes first). A saga still running then goes on in the
        background under its lease, its calls no longer bound by the caller's deadline."""
        async with self.uow.read() as work:
            row = await work.provisioning.of_business(business_id)
        if row is None or str(row.lease_token) != token:
            return row  # the lease ran out and the billing worker took the saga over
        task = self.started.start(self._advance(row, token), f"provisioning-{business_id}")
        done, _ = await asyncio.wait({task}, timeout=deadlines.bounded(within, spare=ANSWER_SECONDS))
        if done:
            return task.result()
        async with self.uow.read() as work:
            return await work.provisioning.of_business(business_id)

    async def _advance(self, row: SagaRecord, token: str) -> SagaRecord | None:
        """Run the saga's steps from where it stands until done, canceled or a step fails."""
        step, agent_id, number = row.step, row.agent_id and str(row.agent_id), row.phone_number
        business_id = str(row.business_id)
        ctx = tenant.set_current(tenant.acting_for(business_id, ACTOR))
        try:
            business = await self._business(business_id)
            if business is None or business.lifecycle_state not in ("active", "paused"):
                return await self._compensate(row, token, number)
            while step != saga.DONE:
                if step == saga.AGENT:
                    agent_id = await self._create_agent(business)
                elif step == saga.NUMBER:
                    assert agent_id is not None  # the agent step (before this one) stored it
                    number = await self._assign_number(business_id, agent_id, row.forward_to)
                elif step == saga.FORWARDING:
                    assert number is not None and row.forward_to is not None  # next_step runs it after the number's
                    await self._forward(business_id, number, row.forward_to)
                step = saga.next_step(step, row.forward_to)
                saved = await self._save(row, token, step=step, agent_id=agent_id, phone_number=number,
                                         status=saga.DONE if step == saga.DONE else row.status, last_error=None)
                if saved is None:  # another runner took the saga over (this one was too slow): it goes on
                    return None
                row = saved
            log.info("provisioned business %s: agent %s on %s", business_id, agent_id, number)
            return await self._release(row, token)
        except (StepFailed, ServiceError) as exc:
            reason = str(exc) if isinstance(exc, StepFailed) else f"{exc.code}: {exc.message}"
            attempts = row.attempts + 1
            log.warning("provisioning of business %s failed at step %s (attempt %d): %s", business_id, step,
                        attempts, reason)
            return await self._save(row, token, status=saga.RETRYING, attempts=attempts, last_error=reason[:500],
                                    next_attempt_at=utcnow() + saga.retry_delay(attempts, self.retry_seconds),
                                    **leases.RELEASED)
        finally:
            tenant.reset_current(ctx)

    async def _business(self, business_id: str) -> SagaBusiness | None:
        async with self.uow.read() as work:
            return await work.provisioning.business(business_id)

    async def _create_agent(self, business: SagaBusiness) -> str:
        name, prompt, greeting = saga.intake_agent(business.name, business.business_type, business.website)
        return await self.agents.create_agent(str(business.id), name, prompt, greeting, saga.INTAKE_REQUEST_ID)

    async def _assign_number(self, business_id: str, agent_id: str, forward_to: str | None) -> str:
        """The agent's number: the one it already has (a repeated step), else a free one of the pool, looked for
        where provisioning_domain.number_searches says."""
        for number in await self.agents.numbers_of(business_id):
            if number.agent_id == agent_id:
                return number.phone_number
        for country, area_code in saga.number_searches(forward_to):
            for candidate in await self.agents.free_numbers(country, area_code, CANDIDATE_NUMBERS):
                try:
                    await self.agents.assign_number(business_id, candidate, agent_id)
                except ServiceError as exc:
                    if exc.code not in NUMBER_TAKEN:
                        raise
                    continue
                return candidate
        raise StepFailed("no phone number is free in the pool; provisioning resumes when one is")

    async def _forward(self, business_id: str, number: str, forward_to: str) -> None:
        await self.agents.forward(business_id, number, forward_to, saga.RING_SECONDS)

    async def _compensate(self, row: SagaRecord, token: str, number: str | None) -> SagaRecord | None:
        """The workspace is gone or canceled before its saga was done: give its number back to the pool."""
        if number:
            try:
                await self.agents.release_number(str(row.business_id), number)
            except ServiceError as exc:
                if exc.code != "not_found":
                    raise
        return await self._save(row, token, status=saga.CANCELED, phone_number=None, **leases.RELEASED)

    async def _save(self, row: SagaRecord, token: str, **values: Any) -> SagaRecord | None:
        async with self.uow.transaction() as work:
            return await work.provisioning.leased_update(row.id, token, {**values, "updated_at": utcnow()})

    async def _release(self, row: SagaRecord, token: str) -> SagaRecord | None:
        return await self._save(row, token, **leases.RELEASED)

    async def cancel_waiting(self, work: AccountsUnit, business_id: str) -> None:
        """A canceled workspace's saga that never started is over (in the caller's unit of work)."""
        await work.provisioning.update_waiting(business_id, {"status": saga.CANCELED, "updated_at": utcnow()})

    async def resume(self, work: AccountsUnit, business_id: str, *, lease: bool = False) -> str | None:
        """The payment arrived: the saga is due now (in the caller's unit of work). With `lease`, it is leased to
        the caller, who runs it at once (`run_now` with the token returned)."""
        now, token = utcnow(), new_id() if lease else None
        await work.provisioning.update_waiting(business_id, {
            "status": saga.PENDING, "next_attempt_at": now, "updated_at": now, "lease_token": token,
            "lease_until": now + SAGA_LEASE if lease else None})
        return token

