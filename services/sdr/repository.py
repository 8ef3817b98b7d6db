"""Where the lead use cases (service.py) keep leads and their interactions: a repository bound to one unit of
work's handle. It only stores and finds; the rules (scoring, what a write changes, a lead not found) stay in
domain.py and the use cases.

`SqlLeads` is the production one, over store.py on the unit of work's connection; the fast test tier has an
in-memory one (tests/memory/sdr.py), and the same behaviour tests run on both (tests/storage_contracts.py). The
list (prepared statements on the raw pool), the audit, analytics and the pipeline stay on store.py directly, and
so do the database's triggers on leads and interactions (the pipeline's signals), which the in-memory one does
not keep."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import records
from services.sdr import store
from services.sdr.store import leads


class LeadsRepository(Protocol):
    async def owned(self, business_ids: Iterable[str], lead_id: str, *, lock: bool = False) -> Any | None:
        """The lead with this id in one of these businesses (held for update with `lock`), or None."""

    async def add(self, business_id: str, values: dict[str, Any], now: datetime) -> Any:
        """Record a new lead of the business (store.leads' columns), created and updated `now`; its row."""

    async def change(self, lead_id: str, values: dict[str, Any]) -> Any | None:
        """The lead after `values`, or None when there is no such lead."""

    async def newest_by_phone(self, business_id: str, phone: str, *, lock: bool = False) -> Any | None:
        """The business's newest lead with this phone number (held for update with `lock`), or None."""

    async def lock_contact(self, business_id: str, phone: str) -> None:
        """Serialise contact upserts of one number of one business until the transaction ends."""

    async def add_interaction(self, lead: Any, channel: str, direction: str, reference: str, intent: str | None,
                              occurred_at: datetime) -> bool:
        """Record an interaction with the lead once per reference; False when it was recorded before."""


class SqlLeads:
    """`LeadsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def owned(self, business_ids: Iterable[str], lead_id: str, *, lock: bool = False) -> Any | None:
        return await records.owned(self.conn, leads, business_ids, lead_id, lock=lock)

    async def add(self, business_id: str, values: dict[str, Any], now: datetime) -> Any:
        return await store.insert_lead(self.conn, business_id, values, now)

    async def change(self, lead_id: str, values: dict[str, Any]) -> Any | None:
        return await store.update_lead(self.conn, lead_id, values)

    async def newest_by_phone(self, business_id: str, phone: str, *, lock: bool = False) -> Any | None:
        return await store.newest_by_phone(self.conn, business_id, phone, lock=lock)

    async def lock_contact(self, business_id: str, phone: str) -> None:
        await store.lock_contact(self.conn, business_id, phone)

    async def add_interaction(self, lead: Any, channel: str, direction: str, reference: str, intent: str | None,
                              occurred_at: datetime) -> bool:
        return await store.insert_interaction(self.conn, lead, channel, direction, reference, intent, occurred_at)
