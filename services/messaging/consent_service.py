"""Consent and do-not-call: who may be texted by which business, and the evidence for it.

Consent is per business and phone, computed from its append-only history (domain.consent_state): opt-ins and
opt-outs recorded through the API or by keyword, and conversational evidence (the phone texted or called the
business). The do-not-call list is the business's own (API) plus the platform's (PLATFORM_DNC, a setting);
taking a phone off the business's list keeps the entry with the reason. What these allow is the outbound
compliance decision's (services.messaging.compliance_service) to say.

What an erased person left behind is kept under their number's suppression hash (services.messaging.suppression):
their consent history, their entry on the list. A phone's history, its entry (CheckDnc) and taking it off the list
(RemoveDnc) are of the number and of its hash.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from contracts import messaging as messaging_contract
from core import tenant
from core.contact import normalize_e164
from core.errors import invalid, not_found
from core.ids import new_id, utcnow
from core.pagination import Page, Paged
from core.text import optional_text
from core.uow import UnitOfWork
from services.messaging import domain
from services.messaging.records import ConsentEvent, DncEntry
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.suppression import Suppression


def evidence_of(history: Iterable[ConsentEvent]) -> list[domain.ConsentEvidence]:
    return [domain.ConsentEvidence(row.kind, row.created_at) for row in history]


def conversational_until(history: Iterable[ConsentEvent]) -> datetime | None:
    latest = max((row.created_at for row in history if row.kind == "conversational"), default=None)
    return latest + timedelta(days=messaging_contract.CONVERSATIONAL_CONSENT_DAYS) if latest else None


@dataclass(frozen=True)
class DncStanding:
    """A phone on a business's do-not-call list (its entry) and/or the platform's."""

    business_id: str
    phone: str
    entry: DncEntry | None
    platform: bool

    @property
    def listed(self) -> bool:
        return self.entry is not None or self.platform


class Consents:
    def __init__(self, uow: UnitOfWork[MessagingUnit], platform_dnc: frozenset[str], *,
                 suppression: Suppression | None = None):
        self.uow = uow
        self.platform_dnc = platform_dnc
        self.suppression = suppression  # the erased numbers' hashes are asked of too (None: numbers alone)

    def _kept_as(self, phone: str) -> list[str]:
        """What a phone's records are kept under: the number, and its suppression hash."""
        return [phone, self.suppression.hash(phone)] if self.suppression is not None else [phone]

    async def _history(self, work: MessagingUnit, business_id: str, phone: str) -> list[ConsentEvent]:
        """The phone's consent history under the number and its hash, oldest first."""
        found = [row for kept in self._kept_as(phone) for row in await work.consent.consent_history(business_id, kept)]
        return sorted(found, key=lambda row: (row.created_at, row.id))

    # -- consent ------------------------------------------------------------------------------

    async def get(self, phone: str, business_id: str | None) -> tuple[str, str, list[ConsentEvent]]:
        """(business, phone, history) for a phone of one of the caller's businesses."""
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        phone = normalize_e164(phone, "phone")
        async with self.uow.read() as work:
            return business_id, phone, await self._history(work, business_id, phone)

    async def record(self, phone: str, business_id: str | None, state: str,
                     note: str | None) -> tuple[str, str, list[ConsentEvent]]:
        who = tenant.require_account()
        business_id = tenant.pick_business(who, business_id)
        phone = normalize_e164(phone, "phone")
        if state not in messaging_contract.API_CONSENT:
            raise invalid(f"state must be one of {', '.join(messaging_contract.API_CONSENT)}")
        note = optional_text(note, "note", messaging_contract.NOTE_MAX)
        async with self.uow.transaction() as work:
            await work.consent.add_consent(business_id=business_id, phone=phone,
                                           kind=messaging_contract.API_CONSENT[state], source="api", actor=who.actor,
                                           note=note, created_at=utcnow())
            return business_id, phone, await self._history(work, business_id, phone)

    # -- do-not-call ----------------------------------------------------------------------------

    async def add_dnc(self, phone: str, business_id: str | None, reason: str | None) -> DncEntry:
        who = tenant.require_account()
        business_id = tenant.pick_business(who, business_id)
        async with self.uow.transaction() as work:
            return await work.consent.add_dnc(
                id=new_id(), business_id=business_id, phone=normalize_e164(phone, "phone"),
                reason=optional_text(reason, "reason", messaging_contract.REASON_MAX), added_by=who.actor,
                created_at=utcnow())

    async def check_dnc(self, phone: str, business_id: str | None) -> DncStanding:
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        phone = normalize_e164(phone, "phone")
        entry = None
        async with self.uow.read() as work:
            for kept in self._kept_as(phone):
                entry = entry or await work.consent.listed(business_id, kept)
        return DncStanding(business_id, phone, entry, phone in self.platform_dnc)

    async def list_dnc(self, business_id: str | None, page: Page) -> Paged:
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            return await work.consent.dnc_page(business_id, page)

    async def remove_dnc(self, phone: str, business_id: str | None, reason: str) -> DncEntry:
        who = tenant.require_account()
        business_id = tenant.pick_business(who, business_id)
        phone = normalize_e164(phone, "phone")
        if not reason:  # kept as given (the gateway requires a visible character; a query has no length limit)
            raise invalid("reason is required: say why the number may be contacted again")
        removed = None
        async with self.uow.transaction() as work:
            for kept in self._kept_as(phone):  # the number's entry, and the one kept under its hash
                removed = await work.consent.remove_dnc(business_id, kept, removed_at=utcnow(),
                                                        removed_reason=reason, removed_by=who.actor) or removed
        if removed is None:
            raise not_found(f"{phone} on this business's do-not-call list")
        return removed



