"""The stock job: the pool's numbers bought from the SMS provider, and given back when nobody wants them.

Every round (and at once when GET /available finds a place empty), each stock place with recent demand
(numbers_domain.StockRules) is refilled once it runs low: the job takes the place's lease (another replica's job
skips a leased place, so any number of replicas buy once), counts its free numbers again, asks the provider what is
for sale there and buys what is missing, with no transaction or pooled connection held; then, in one short
transaction, adds the numbers to the pool and notes the place `stocked` (or `unavailable`: the provider had none).
A purchase is never repeated: one that timed out is looked up among the account's numbers; numbers bought and not
recorded (the write failed) are released at once. Then bought numbers free too long, where nobody asked since, are
leased one at a time, released at the provider and deleted.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from core.background import Periodic
from core.contact import number_facts
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.compensation import undo_at_provider
from providers.messaging.adapter import ProviderError
from providers.messaging.numbers import NumberProvider, OfferedNumber, OwnedNumber
from services.agents import numbers_domain
from services.agents.numbers_domain import StockRules
from services.agents.records import PhoneNumber, StockPlace
from services.agents.repository import AgentsUnit

log = logging.getLogger(__name__)

# How long a refill or a release may hold its place or number (it outlasts the provider calls of one refill).
STOCK_LEASE = timedelta(minutes=5)
RELEASE_BATCH = 50
DAY = timedelta(days=1)  # the window of the purchase budget (StockRules.per_day)


def locality_of(offer: OfferedNumber) -> str | None:
    """Where an offered number is, as the pool writes it: "San Francisco, CA"."""
    return ", ".join(part for part in (offer.locality, offer.region) if part) or None


def pool_row(bought: OwnedNumber, now: Any, locality: str | None) -> dict[str, Any]:
    """A bought number's row for the pool (store.add_to_pool's columns), where its offer said it is."""
    facts = number_facts(bought.phone_number)
    caps = bought.capabilities
    capabilities = {"voice_inbound": caps.voice, "voice_outbound": caps.voice, "sms_inbound": caps.sms,
                    "sms_outbound": caps.sms, "mms": caps.mms}
    return {"phone_number": bought.phone_number, "country": facts.country, "area_code": facts.area_code,
            "locality": locality, "capabilities": capabilities, "blocked": False, "block_reason": None,
            "a2p_status": numbers_domain.initial_a2p_status(facts.country, capabilities),
            "emergency_status": numbers_domain.initial_emergency_status(facts.country, capabilities),
            "provider_ref": bought.reference, "pooled_at": now}


class NumberStock(Periodic):
    task_name = "number-stock"

    def __init__(self, uow: UnitOfWork[AgentsUnit], provider: NumberProvider, sms_url: str, rules: StockRules, *,
                 interval: float):
        self.uow, self.provider, self.sms_url, self.rules = uow, provider, sms_url, rules
        self.interval = interval

    async def round(self) -> bool:
        await self.refill()
        return await self.release_idle() == RELEASE_BATCH

    # -- refills ---------------------------------------------------------------------------------------------

    async def refill(self) -> int:
        """Refill every place with recent demand that runs low; how many numbers were bought."""
        async with self.uow.read() as work:
            places = await work.stock.wanted(numbers_domain.wanted_since(utcnow(), self.rules))
        bought = 0
        for place in places:
            bought += await self._refill(place)
        return bought

    async def _refill(self, place: StockPlace) -> int:
        async with self.uow.transaction() as work:
            token = await work.stock.take_lease(place.id, STOCK_LEASE)
        if token is None:
            return 0  # another replica refills it now
        bought: list[OwnedNumber] = []
        localities: dict[str, str | None] = {}  # each bought number's, from its offer
        try:
            async with self.uow.read() as work:
                free = await work.numbers.free_in_place(place.country, place.area_code,
                                                        numbers_domain.STOCK_CAPABILITIES)
                bought_last_day = await work.numbers.bought_since(utcnow() - DAY)
            wanted = numbers_domain.to_buy(free, self.rules)
            allowed = numbers_domain.within_budget(wanted, bought_last_day, self.rules)
            if allowed < wanted:
                log.warning("number stock: %d of the %d numbers %s needs wait: %d bought in the last 24 hours "
                            "(NUMBER_PURCHASES_PER_DAY %d)", wanted - allowed, wanted,
                            numbers_domain.place_name(place.country, place.area_code), bought_last_day,
                            self.rules.per_day)
            if allowed:
                bought = await self._buy(place, allowed, localities)
            state, message = numbers_domain.after_refill(
                free, len(bought), numbers_domain.place_name(place.country, place.area_code),
                held_back=allowed < wanted)
            now = utcnow()
            async with self.uow.transaction() as work:
                await work.numbers.add_to_pool([pool_row(b, now, localities.get(b.phone_number)) for b in bought], now)
                settled = await work.stock.settle(place.id, token, {"state": state, "message": message,
                                                                   "checked_at": now})
                if settled is None:
                    raise RuntimeError("the stock place's lease ran out during the refill")
        except BaseException as exc:
            for number in bought:
                await undo_at_provider(self.provider.release_number(number.reference),
                                       f"number {number.phone_number} bought but not recorded")
            async with self.uow.transaction() as work:
                await work.stock.release_lease(place.id, token)
            if isinstance(exc, ProviderError):  # the search failed: the place stays as it was, for the next round
                log.warning("number stock: cannot search %s: %s",
                            numbers_domain.place_name(place.country, place.area_code), exc.message)
                return 0
            raise
        if bought:
            log.info("number stock: bought %d in %s (%d were free)", len(bought),
                     numbers_domain.place_name(place.country, place.area_code), free)
        return len(bought)

    async def _buy(self, place: StockPlace, wanted: int, localities: dict[str, str | None]) -> list[OwnedNumber]:
        """Up to `wanted` numbers of the place bought (each offer's locality noted in `localities`); one the provider
        refuses (sold meanwhile) is skipped. A failed search raises."""
        offers = await self.provider.offered_numbers(place.country, place.area_code or None, limit=wanted)
        bought: list[OwnedNumber] = []
        for offer in offers[:wanted]:
            localities[offer.phone_number] = locality_of(offer)
            try:
                bought.append(await self.provider.buy_number(offer.phone_number, self.sms_url))
            except ProviderError as exc:
                found = await self._maybe_bought(offer.phone_number) if exc.maybe_done else None
                if found is not None:
                    bought.append(found)
                else:
                    log.warning("number stock: could not buy %s: %s", offer.phone_number, exc.message)
        return bought

    async def _maybe_bought(self, phone_number: str) -> OwnedNumber | None:
        """A purchase with no answer: the number, if the provider did sell it to us."""
        try:
            return await self.provider.owned_number(phone_number)
        except ProviderError:
            log.error("number stock: %s may have been bought and cannot be looked up; see the provider's numbers",
                      phone_number)
            return None

    # -- releases ------------------------------------------------------------------------------------------

    async def release_idle(self) -> int:
        """Give back one batch of bought numbers nobody wanted for too long; how many were looked at."""
        cutoff = numbers_domain.wanted_since(utcnow(), self.rules)
        async with self.uow.read() as work:
            idle = await work.numbers.idle(cutoff, RELEASE_BATCH)
        for number in idle:
            await self._release(number)
        return len(idle)

    async def _release(self, number: PhoneNumber) -> None:
        async with self.uow.transaction() as work:
            token = await work.numbers.take_lease(number.id, STOCK_LEASE)
            current = await work.numbers.pool_number(number.phone_number) if token is not None else None
            if token is not None and (current is None or current.business_id is not None):
                await work.numbers.release_lease(number.id, token)  # assigned since it was found idle
                token = None
        if token is None:
            return  # being assigned, or released by another replica, now
        assert number.provider_ref is not None  # idle() finds bought numbers only
        try:
            await self.provider.release_number(number.provider_ref)
        except ProviderError as exc:
            log.warning("number stock: cannot release %s yet: %s", number.phone_number, exc.message)
            async with self.uow.transaction() as work:
                await work.numbers.release_lease(number.id, token)
            return
        async with self.uow.transaction() as work:
            await work.numbers.remove_leased(number.id, token)
        log.info("number stock: released %s (free and unasked for since %s)", number.phone_number,
                 number.pooled_at or number.created_at)
