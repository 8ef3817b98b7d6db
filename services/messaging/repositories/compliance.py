"""Where the outbound compliance decisions (compliance_service.py) find their facts and keep their records: what is
kept of each callee (the business's do-not-call list, consent history and the national registry's loaded data), the
touch ledger under the callee's lock, and the decisions' log. Daily spend is the spend repository's."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.compliance.decision import Counted
from core.pagination import Page, Paged, fetch_page
from core.records import record
from services.messaging import domain, store
from services.messaging.records import CalleeFacts, LoggedDecision
from services.messaging.schema import compliance_decisions


def facts_of(stored: store.Standing) -> CalleeFacts:
    entry, history, national = stored
    return CalleeFacts(entry.created_at if entry is not None else None,
                       [domain.ConsentEvidence(row.kind, row.created_at) for row in history], national)


class ComplianceRepository(Protocol):
    async def standing(self, business_id: str, phone: str) -> CalleeFacts:
        """What is kept of the phone for the business."""

    async def standings(self, business_id: str, phones: list[str]) -> dict[str, CalleeFacts]:
        """{phone: what is kept of it} of each phone, in one statement."""

    async def lock_callee(self, business_id: str, phone: str) -> None:
        """Serialize the decisions on one business's callee until the transaction ends (its touches are counted and
        a slot taken under it, so two touches racing cannot both take the last slot)."""

    async def recent_touches(self, business_id: str, phone: str, since: datetime) -> list[Counted]:
        """The touches of the ledger to the phone placed after `since` and not released, oldest first."""

    async def recent_touches_of(self, business_id: str, phones: list[str],
                                since: datetime) -> dict[str, list[Counted]]:
        """{phone: its recent touches (as `recent_touches`)} of each phone, in one statement."""

    async def add_decision(self, **values: Any) -> LoggedDecision:
        """Log a compliance decision (schema.compliance_decisions' columns)."""

    async def count_touch(self, *, decision_id: str, business_id: str, phone: str, channel: str,
                          placed_at: datetime, within: domain.Allowance) -> bool:
        """The touch a logged decision let through, in the ledger and its business's spend of the day, if `within`
        the day's limits; False (nothing written) when they are reached."""

    async def release_touch(self, decision_id: str, business_ids: Iterable[str], at: datetime) -> bool:
        """Free the slot of a touch never placed; False when the businesses hold no such slot."""

    async def decisions_page(self, business_id: str, phone: str | None, lead_id: str | None, page: Page) -> Paged:
        """The business's logged decisions (about one phone, one lead, when given), latest first:
        `LoggedDecision`s."""


class SqlCompliance:
    """`ComplianceRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def standing(self, business_id: str, phone: str) -> CalleeFacts:
        return facts_of(await store.standing(self.conn, business_id, phone))

    async def standings(self, business_id: str, phones: list[str]) -> dict[str, CalleeFacts]:
        return {phone: facts_of(stored) for phone, stored in (await store.standings(self.conn, business_id,
                                                                                    phones)).items()}

    async def lock_callee(self, business_id: str, phone: str) -> None:
        await store.lock_callee(self.conn, business_id, phone)

    async def recent_touches(self, business_id: str, phone: str, since: datetime) -> list[Counted]:
        return (await store.recent_touches_of(self.conn, business_id, [phone], since))[phone]

    async def recent_touches_of(self, business_id: str, phones: list[str],
                                since: datetime) -> dict[str, list[Counted]]:
        return await store.recent_touches_of(self.conn, business_id, phones, since)

    async def add_decision(self, **values: Any) -> LoggedDecision:
        return record(LoggedDecision, (await store.add_decision(self.conn, **values))._mapping)

    async def count_touch(self, *, decision_id: str, business_id: str, phone: str, channel: str,
                          placed_at: datetime, within: domain.Allowance) -> bool:
        return await store.count_touch(self.conn, decision_id=decision_id, business_id=business_id, phone=phone,
                                       channel=channel, placed_at=placed_at, within=within)

    async def release_touch(self, decision_id: str, business_ids: Iterable[str], at: datetime) -> bool:
        return await store.release_touch(self.conn, decision_id, business_ids, at)

    async def decisions_page(self, business_id: str, phone: str | None, lead_id: str | None, page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.decisions_of(business_id, phone, lead_id),
                                 compliance_decisions.c.decided_at, compliance_decisions.c.id, page)
        return paged.map(lambda row: record(LoggedDecision, row._mapping))
