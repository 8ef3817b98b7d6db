"""The outbound compliance decisions: made with what the messaging service knows of a person (its do-not-call lists
and consent history), logged append-only, and every touch let through counted in the touch ledger against the
callee's frequency caps.

The decision itself is core.compliance.decision (pure); this module loads its facts and keeps its records. Every
decision is made under a lock on the business's callee (`decide_locked`), in the transaction that records its
touch: the touches counted and the slot an allowed touch takes are read and written under it, so touches racing
from two runs, or a call and a text, cannot both take the last slot. A call's decision is DecideCall, asked by the
calls service before anything reaches the voice provider, for every call: a call placed with compliance skip is
counted and logged too, never refused. A call the provider then refused frees its slot (ReleaseCallSlot), so the
count is of touches actually placed. A text's decision is made by Texts.send in the transaction that writes the
message (services.messaging.service).

The facts can also be read without deciding (GetStandings, for a communication run previewing its plan with the
pure decision): for many callees at once, in a constant number of queries.

A callee's facts are those kept under their number and under its suppression hash (services.messaging.suppression),
merged: a person erased after saying STOP, or erased with suppression, stays refused, and the refusal is logged
under the hash (their number is not written back into the log).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core import plans, tenant
from core.compliance import decision as compliance
from core.compliance import zones
from core.compliance.rules import CALL, Hours
from core.contact import normalize_e164
from core.errors import invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.standings import Standings, carried_only
from core.uow import UnitOfWork
from services.messaging import domain, spend
from services.messaging.national_registry import NONE, Subscription, standing_fields
from services.messaging.records import CalleeFacts, LoggedDecision
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.suppression import Suppression, merged

DECISIONS_PAGE = (50, 100)
STANDINGS_MAX = 10_000  # phones per GetStandings


@dataclass(frozen=True)
class CalleeStanding:
    phone: str
    standing: compliance.Standing
    recent: list[compliance.Counted]  # the touches counted against the frequency caps, oldest first


def accessible_business(business_id: str) -> str:
    """A business of the caller's, checked; another's is not_found (its existence is not the caller's to learn)."""
    who = tenant.require_account()
    business_id = require_uuid(business_id, "business_id")
    if not who.can_access(business_id):
        raise not_found("business")
    return business_id


class Compliance:
    def __init__(self, uow: UnitOfWork[MessagingUnit], platform_dnc: frozenset[str], policy: compliance.Policy, *,
                 subscription: Subscription = NONE, standings: Standings | None = None,
                 suppression: Suppression | None = None):
        self.uow, self.platform_dnc, self.policy = uow, platform_dnc, policy
        self.suppression = suppression  # the erased numbers' hashes are asked of too (None: numbers alone)
        # Each business's plan, for its daily limits (spend.py); `standings` is the callees' compliance standings.
        self.workspaces = standings or carried_only()
        self.subscription = subscription  # the national registry's area codes the operator subscribes to

    def _standing(self, phone: str, facts: CalleeFacts, now: datetime) -> compliance.Standing:
        """What a phone's facts say of it."""
        return compliance.Standing(platform_dnc=phone in self.platform_dnc,
                                   business_dnc_since=facts.listed_since,
                                   consent=domain.consent_state(facts.consent, now),
                                   **standing_fields(phone, facts.national, self.subscription))

    def _hashes(self, phones: list[str]) -> dict[str, str]:
        """{phone: its suppression hash} (none without a key)."""
        return {p: self.suppression.hash(p) for p in phones} if self.suppression is not None else {}

    async def _facts(self, work: MessagingUnit, business_id: str, phones: list[str]) -> dict[str, CalleeFacts]:
        """{phone: what is kept of it, under the number and its hash}, in one statement."""
        hashes = self._hashes(phones)
        found = await work.compliance.standings(business_id, [*phones, *hashes.values()])
        return {p: merged([found[p], found[hashes[p]]]) if p in hashes else found[p] for p in phones}

    async def _recent(self, work: MessagingUnit, business_id: str, phones: list[str],
                      since: datetime) -> dict[str, list[compliance.Counted]]:
        """{phone: its touches counted since `since`, under the number and its hash, oldest first}."""
        hashes = self._hashes(phones)
        found = await work.compliance.recent_touches_of(business_id, [*phones, *hashes.values()], since)
        return {p: sorted([*found[p], *(found[hashes[p]] if p in hashes else [])], key=lambda t: t.at)
                for p in phones}

    async def standings(self, business_id: str, phones: list[str]) -> list[CalleeStanding]:
        """Each distinct phone's standing and its touches in the last 24 hours (what a decision reads), in the order
        asked; three queries however many phones, nothing logged and no slot taken."""
        business_id = accessible_business(business_id)
        if len(phones) > STANDINGS_MAX:
            raise invalid(f"phones: at most {STANDINGS_MAX} per request ({len(phones)} given)")
        checked = list(dict.fromkeys(normalize_e164(p, f"phones[{i}]") for i, p in enumerate(phones)))
        now = utcnow()
        async with self.uow.read() as work:
            found = await self._facts(work, business_id, checked)
            recent = await self._recent(work, business_id, checked, now - compliance.DAY)
        return [CalleeStanding(phone, self._standing(phone, found[phone], now), recent[phone]) for phone in checked]

    async def decide_call(self, call: domain.CallToDecide) -> LoggedDecision:
        """The logged decision."""
        business_id = accessible_business(call.business_id)
        if call.actor not in compliance.ACTORS:
            raise invalid(f"actor must be one of {', '.join(compliance.ACTORS)}")
        callee = compliance.Callee(
            phone=normalize_e164(call.phone, "phone"),
            timezone=zones.check_zone(call.timezone, "timezone") if call.timezone is not None else None,
            lead_id=require_uuid(call.lead_id, "lead_id") if call.lead_id is not None else None,
            lead_state=call.lead_state or None, lead_status=call.lead_status or None,
            converted_at=call.lead_converted_at, last_inbound_at=call.lead_last_inbound_at)
        business_hours = domain.calling_hours(call.business_hours)
        plan_id = await self.plan_of(business_id)
        async with self.uow.transaction() as work:
            decided, now = await self.decide_locked(work, business_id, CALL, callee, sender=call.sender or None,
                                                    business_hours=business_hours)
            if call.actor == compliance.UNCHECKED:
                decided = compliance.counted_only(decided)
            return await self.record(work, business_id, CALL, callee, decided, call.actor, call.reference or None,
                                     now, plan_id)

    async def decide_locked(self, work: MessagingUnit, business_id: str, channel: str, callee: compliance.Callee, *,
                            sender: str | None, business_hours: Hours | None) -> tuple[compliance.Decision, datetime]:
        """(the decision on a touch of `channel` now, and that now) in the caller's transaction, which holds the
        callee's lock from here to its end: record the touch (and its slot) before it ends."""
        await work.compliance.lock_callee(business_id, callee.phone)
        now = utcnow()  # after the lock: a racer that held it first has a slot stamped no later than this
        phone = callee.phone
        standing = self._standing(phone, (await self._facts(work, business_id, [phone]))[phone], now)
        recent = (await self._recent(work, business_id, [phone], now - compliance.DAY))[phone]
        touch = compliance.Touch(channel, now, sender=sender, business_hours=business_hours, recent=tuple(recent))
        return compliance.decide(touch, callee, standing, self.policy), now

    async def plan_of(self, business_id: str) -> str:
        """The business's plan (asked of the accounts service, kept briefly: core.standings), asked before a
        decision's transaction: its daily limits bound the touches counted (spend.py)."""
        return (await self.workspaces.facts(business_id)).plan_id

    async def record(self, work: MessagingUnit, business_id: str, channel: str, callee: compliance.Callee,
                     decided: compliance.Decision, actor: str, reference: str | None, now: datetime,
                     plan_id: str) -> LoggedDecision:
        """The decision logged, and the touch it lets through counted in the ledger and in the business's
        spend of the day; past the day's limit of its plan, 429 rate_limited (the transaction, and with it the
        decision's row, is rolled back)."""
        phone, message = await self._logged_as(work, business_id, callee.phone, decided)
        logged = await work.compliance.add_decision(
            id=new_id(), business_id=business_id, channel=channel, phone=phone, lead_id=callee.lead_id,
            outcome=decided.outcome, rule=decided.rule, source=decided.source, code=decided.code,
            message=message, not_before=decided.not_before, actor=actor, reference=reference,
            inputs=decided.inputs, decided_at=now)
        if decided.allowed:
            limits = plans.daily_limits(plan_id)
            if not await work.compliance.count_touch(decision_id=logged.id, business_id=business_id,
                                                     phone=callee.phone, channel=channel, placed_at=now,
                                                     within=spend.allowance(channel, limits, now)):
                spent = await work.spend.spent_on([business_id], spend.day_of(now))
                raise spend.refusal(channel, plan_id, limits, spent.get(business_id, {}), now)
        return logged

    async def _logged_as(self, work: MessagingUnit, business_id: str, phone: str,
                         decided: compliance.Decision) -> tuple[str, str]:
        """(the phone, the message) a decision is logged with: a touch refused to an erased person (something is
        kept of them under the hash) is logged under the hash, so that trying to reach them does not write their
        number back into the log (the caller's answer names it all the same)."""
        if decided.allowed or self.suppression is None:
            return phone, decided.message
        hashed = self.suppression.hash(phone)
        kept = await work.compliance.standing(business_id, hashed)
        if kept.listed_since is None and not kept.consent:
            return phone, decided.message
        return hashed, decided.message.replace(phone, hashed)

    async def release_touch(self, decision_id: str) -> None:
        who = tenant.require_account()
        require_uuid(decision_id, "decision_id")
        async with self.uow.transaction() as work:
            if not await work.compliance.release_touch(decision_id, who.business_ids, utcnow()):
                raise not_found("call slot")

    async def decisions(self, business_id: str | None, phone: str | None, lead_id: str | None, page: Page) -> Paged:
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        phone = normalize_e164(phone, "phone") if phone else None
        lead_id = require_uuid(lead_id, "lead_id") if lead_id else None
        async with self.uow.read() as work:
            return await work.compliance.decisions_page(business_id, phone, lead_id, page)
