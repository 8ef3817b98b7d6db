"""Phone-number use cases: the business's numbers, the pool, assign, update (agent, forwarding) and release.

A number belongs to one business at a time. Assigning checks the pool row and takes its
lease in one short transaction (core.leases; a concurrent assign of the same number gets
409 conflict), imports the number at the voice provider with no transaction held, then records
the assignment and ends the lease; if that fails, the import is undone. The provider's number
carries our server rather than an assistant: each inbound call asks us which agent answers
(services.calls), so re-pointing a number to another agent is a database change only. Ring-first forwarding
is the provider number's ringing hook, so setting it holds the number's lease while the provider changes the
number (and puts it back if our write then fails). Releasing holds the lease while the provider deletes it.
A first page of free numbers in a country (and area code) with none asks for a purchase there, which the stock job
(services.agents.stock) makes; taking a number keeps its area code stocked from then on.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from core import leases, standing, tenant
from core.contact import normalize_e164, number_facts
from core.errors import ServiceError, invalid, not_found
from core.ids import require_uuid, utcnow
from core.pagination import Page, Paged, split_page
from core.standings import Standings, carried_only
from core.tenant import pick_business
from core.uow import UnitOfWork
from providers.compensation import undo_at_provider
from providers.voice.port import Forwarding, VoiceProvider
from services.agents import numbers_domain
from services.agents.numbers_domain import Purchase
from services.agents.records import NumberCount, NumberRoute, PhoneNumber
from services.agents.repository import AgentsUnit, NumbersRepository, numbers_of
from switchboard.v1 import events_pb2

# How long an assign, re-point or release may hold a number, and how long a concurrent one waits for it.
NUMBER_LEASE = timedelta(seconds=60)
LEASE_WAIT_SECONDS = 25.0


def _number_event(kind: Any, row: Any, business_id: str, agent_id: Any) -> Any:
    """A PhoneNumberAssigned or PhoneNumberReleased payload for this number."""
    return kind(id=str(row.id), phone_number=row.phone_number, business_id=business_id,
                agent_id=str(agent_id) if agent_id else None)


UNCHANGED = object()  # a part of a number an update leaves as it is


def _agent_of(row: Any) -> str | None:
    return str(row.agent_id) if row.agent_id else None


def _forwarding_of(row: Any) -> Forwarding | None:
    return Forwarding(row.forward_to, row.ring_seconds) if row.forward_to else None


class Numbers:
    def __init__(self, uow: UnitOfWork[AgentsUnit], voice: VoiceProvider, trial_numbers: int, *,
                 standings: Standings | None = None, stock_wanted: Callable[[], None] | None = None):
        self.uow = uow  # the pool and the businesses' numbers (services.agents.repository)
        # May the business take a number, and is it in its trial (core.standings): the signup's provisioning saga
        # takes one acting for the business, with no standing in its token.
        self.standings = standings or carried_only()
        self.trial_numbers = trial_numbers
        self.voice = voice  # imports our numbers; asks us which agent answers each inbound call
        self.stock_wanted = stock_wanted  # a purchase was asked for: the stock job's next round starts now

    # -- reads -----------------------------------------------------------------------

    async def list_numbers(self, business_id: str | None, all_businesses: bool, phone_number: str | None,
                   page: Page) -> tuple[str | None, Paged]:
        """The business a list is about (None for all of the caller's) and a page of its numbers."""
        who = tenant.require_account()
        business = None if all_businesses else pick_business(who, business_id)
        wanted = normalize_e164(phone_number) if phone_number else None
        async with self.uow.read() as work:
            return business, await work.numbers.page([business] if business else who.business_ids, wanted,
                                                              page)

    async def available(self, country: str | None, area_code: str | None, capability: str | None,
                        after: str | None, limit: int) -> tuple[Paged, Purchase | None]:
        """Free numbers of the pool in (country, area code, number) order, after the number `after`; when a first
        page in a country (and area code) finds none, the purchase this asks for there (services.agents.stock)."""
        tenant.require_account()
        place = None
        if after:
            # The cursor's place in the order follows from the number itself (as the pool derived it).
            after = normalize_e164(after, "after")
            facts = number_facts(after)
            place = (facts.country, facts.area_code, after)
        async with self.uow.read() as work:
            rows = await work.numbers.available(
                numbers_domain.check_country(country) if country else None,
                numbers_domain.check_area_code(area_code) if area_code else None,
                numbers_domain.capability_filter(capability) if capability else (), place, limit + 1)
        paged = split_page(rows, limit)
        if paged.rows or after or not country:
            return paged, None
        async with self.uow.transaction() as work:
            requested = await work.stock.request(country, area_code or "", utcnow())
        if self.stock_wanted is not None:
            self.stock_wanted()
        return paged, numbers_domain.purchase_of(requested)

    async def route(self, phone_number: str) -> NumberRoute:
        """Who answers an inbound call on this number (asked for by the provider, so with no caller)."""
        async with self.uow.read() as work:
            found = await work.numbers.route(normalize_e164(phone_number, "phone_number"))
        if found is None:
            raise not_found("phone number held by a business")
        return found

    async def counts(self) -> list[NumberCount]:
        """How many numbers each of the caller's businesses holding any holds."""
        async with self.uow.read() as work:
            return await work.numbers.counts(tenant.require_account().business_ids)

    # -- assign, re-point, release ---------------------------------------------------------

    async def assign(self, business_id: str | None, phone_number: str, agent_id: str | None) -> Any:
        who = tenant.require_account()
        business_id = pick_business(who, business_id)
        held_as = await self.standings.standing_of(business_id)
        if not standing.is_good(held_as):
            raise standing.refusal(held_as, "taking a phone number")
        e164 = normalize_e164(phone_number)
        async with self.uow.transaction() as work:
            numbers = work.numbers
            row = await self._pool_row(numbers, e164)
            await self._check_agent(numbers, agent_id, business_id)
            in_trial = held_as == standing.TRIALING
            if in_trial:
                await self._check_trial_allowance(numbers, business_id)
            token = await numbers.take_lease(row.id, NUMBER_LEASE)
            if token is None:
                raise ServiceError("conflict", f"phone number {e164} is not available (another request is assigning "
                                   "it); pick another of the available numbers")
        imported = None
        try:
            imported = await self.voice.import_number(e164)
            async with self.uow.transaction() as work:
                if in_trial:
                    await self._check_trial_allowance(work.numbers, business_id)
                now = utcnow()
                row = await self._leased_update(work.numbers, row.id, token, business_id=business_id, agent_id=agent_id,
                                                provider_phone_number_id=imported, assigned_at=now)
                await work.stock.note_demand(row.country, row.area_code, now)
                work.emit(_number_event(events_pb2.PhoneNumberAssigned, row, business_id, agent_id),
                                business_id)
        except BaseException:
            if imported is not None:
                await undo_at_provider(self.voice.delete_number(imported),
                                       f"assigning {e164} failed; provider number {imported}")
            async with self.uow.transaction() as work:
                await work.numbers.release_lease(row.id, token)
            raise
        return row

    async def update(self, business_id: str | None, phone_number: str, *, agent_id: Any = UNCHANGED,
                     forward_to: Any = UNCHANGED, ring_seconds: int | None = None) -> Any:
        """Give a number of the business to another of its agents (None: to no agent) and/or set its ring-first
        forwarding (forward_to None: off; ring_seconds None: the default). A part left UNCHANGED stays as it is."""
        if agent_id is UNCHANGED and forward_to is UNCHANGED:
            raise invalid("an update names agent_id, forwarding or both")
        business_id = pick_business(tenant.require_account(), business_id)
        e164 = normalize_e164(phone_number)
        if forward_to is UNCHANGED:
            return await self._repoint(e164, business_id, agent_id)
        wanted = numbers_domain.check_forwarding(e164, forward_to, ring_seconds) if forward_to is not None else None
        async with self._number_lease(e164, business_id) as (row, token):
            values = {}
            if agent_id is not UNCHANGED and _agent_of(row) != agent_id:
                async with self.uow.read() as work:
                    await self._check_agent(work.numbers, agent_id, business_id)
                values["agent_id"] = agent_id
            current = _forwarding_of(row)
            changes_provider = current != wanted and row.provider_phone_number_id is not None
            if changes_provider:
                await self.voice.forward_first(row.provider_phone_number_id, wanted)
            try:
                async with self.uow.transaction() as work:
                    row = await self._leased_update(work.numbers, row.id, token, **values,
                                                    forward_to=wanted.to if wanted else None,
                                                    ring_seconds=wanted.ring_seconds if wanted else None)
                    if "agent_id" in values:
                        work.emit(_number_event(events_pb2.PhoneNumberAssigned, row, business_id,
                                                                    agent_id), business_id)
            except BaseException:
                if changes_provider:
                    await undo_at_provider(
                        self.voice.forward_first(row.provider_phone_number_id, current),
                        f"forwarding of {e164}; provider number {row.provider_phone_number_id}")
                raise
        return row

    async def _repoint(self, e164: str, business_id: str, agent_id: str | None) -> Any:
        """The agent part alone: ours only (the provider asks us who answers each call)."""
        async with self.uow.transaction() as work:
            numbers = work.numbers
            row = await self._business_row(numbers, e164, business_id, lock=True)
            if _agent_of(row) == agent_id:
                return row
            await self._check_agent(numbers, agent_id, business_id)
            row = await numbers.change(row.id, {"agent_id": agent_id})
            work.emit(_number_event(events_pb2.PhoneNumberAssigned, row, business_id, agent_id),
                            business_id)
        return row

    async def release(self, business_id: str | None, phone_number: str) -> tuple[str, str]:
        """Give a number back to the pool; (number, business) it was released from."""
        business_id = pick_business(tenant.require_account(), business_id)
        e164 = normalize_e164(phone_number)
        async with self._number_lease(e164, business_id) as (row, token):
            if row.provider_phone_number_id:
                await self.voice.delete_number(row.provider_phone_number_id)
            async with self.uow.transaction() as work:
                await self._leased_update(
                    work.numbers, row.id, token, business_id=None, agent_id=None, provider_phone_number_id=None,
                    assigned_at=None, pooled_at=utcnow(), forward_to=None, ring_seconds=None,
                    a2p_status=numbers_domain.initial_a2p_status(row.country, row.capabilities),
                    emergency_status=numbers_domain.initial_emergency_status(row.country, row.capabilities),
                    emergency_address=None)
                work.emit(_number_event(events_pb2.PhoneNumberReleased, row, business_id,
                                                            row.agent_id), business_id)
        return e164, business_id

    async def release_all(self, business_id: str) -> int:
        """Give every number of a torn-down business back to the pool; how many."""
        async with self.uow.read() as work:
            held = await work.numbers.held_by(business_id)
        for e164 in held:
            await self.release(business_id, e164)
        return len(held)

    # -- steps -----------------------------------------------------------------------------

    @asynccontextmanager
    async def _number_lease(self, e164: str, business_id: str) -> Any:
        """The lease of a number this business holds, with its row as it is under the lease."""
        async with self.uow.read() as work:
            row = await self._business_row(work.numbers, e164, business_id)
        async with leases.hold_with(self.uow, numbers_of, row.id, duration=NUMBER_LEASE,
                                    wait_seconds=LEASE_WAIT_SECONDS, what=f"phone number {e164}") as token:
            async with self.uow.read() as work:  # closed before the caller calls the provider
                row = await self._business_row(work.numbers, e164, business_id)
            yield row, token

    @staticmethod
    async def _leased_update(numbers: NumbersRepository, number_id: str, token: str, **values: Any) -> PhoneNumber:
        row = await numbers.change_leased(number_id, token, values)
        if row is None:
            raise ServiceError("conflict", "the provider took too long and another request changed this number "
                               "meanwhile; retry")
        return row

    @staticmethod
    async def _check_agent(numbers: NumbersRepository, agent_id: str | None, business_id: str) -> None:
        """An agent (if any) of this business, or not_found."""
        if agent_id is None:
            return
        require_uuid(agent_id, "agent_id")
        agent = await numbers.agent(tenant.require_account().business_ids, agent_id)
        if agent is None or str(agent.business_id) != business_id:
            raise not_found("agent")  # an agent of the caller's other business

    @staticmethod
    async def _business_row(numbers: NumbersRepository, e164: str, business_id: str, *, lock: bool = False) -> Any:
        """The row of a number this business holds, or not_found."""
        row = await numbers.business_number(e164, business_id, lock=lock)
        if row is None:
            raise not_found(f"phone number {e164} of this business")
        return row

    async def _check_trial_allowance(self, numbers: NumbersRepository, business_id: str) -> None:
        """Refuse a pool number beyond the trial's allowance: checked before the provider is asked, and again
        when the number is recorded, serialized per business, so concurrent requests cannot each take the last one
        (the loser's import is undone)."""
        held = await numbers.count_held(business_id)
        if held >= self.trial_numbers:
            raise ServiceError("forbidden", f"a business in its trial may hold at most {self.trial_numbers} pool "
                               f"numbers and this one holds {held}: release one (DELETE /api/v1/phone-numbers) or "
                               "take one once the trial has converted to a paid subscription")

    @staticmethod
    async def _pool_row(numbers: NumbersRepository, e164: str) -> Any:
        """The pool row of a number, locked; refused when it is not free."""
        row = await numbers.pool_number(e164)
        if row is None:
            raise not_found(f"phone number {e164} in the pool (pick one of the available numbers)")
        if row.blocked:
            raise ServiceError("conflict", f"phone number {e164} is blocked ({row.block_reason or 'by the carrier'}) "
                               "and cannot be assigned")
        if row.business_id is not None:
            if tenant.current().can_access(str(row.business_id)):
                raise ServiceError("conflict", f"phone number {e164} is already assigned to business "
                                   f"{row.business_id}; to give it to another agent, change the number's agent_id "
                                   "instead")
            raise ServiceError("conflict", f"phone number {e164} is not available; pick another from "
                               "the available numbers")
        return row
