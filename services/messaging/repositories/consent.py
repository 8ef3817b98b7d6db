"""Where consent and the businesses' do-not-call lists live (schema.consent_events, dnc_entries): recorded through
the API (consent_service.py), by inbound texts and calls (provider_service.py) and by the provider's refusals of a
text (service.py)."""
from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.pagination import Page, Paged, fetch_page
from core.records import record
from services.messaging import store
from services.messaging.records import ConsentEvent, DncEntry
from services.messaging.schema import dnc_entries


class ConsentRepository(Protocol):
    async def add_consent(self, **values: Any) -> None:
        """Record a consent event (schema.consent_events' columns)."""

    async def consent_history(self, business_id: str, phone: str) -> list[ConsentEvent]:
        """The phone's consent events with the business, oldest first."""

    async def listed(self, business_id: str, phone: str) -> DncEntry | None:
        """The phone's entry on the business's do-not-call list (not removed), or None."""

    async def add_dnc(self, **values: Any) -> DncEntry:
        """List a phone (schema.dnc_entries' columns); the entry listed: this one, or the one already there."""

    async def remove_dnc(self, business_id: str, phone: str, **values: Any) -> DncEntry | None:
        """Take the phone's listed entry off (`values`: removed_at, removed_reason, removed_by); the entry after,
        or None when the phone is not listed."""

    async def dnc_page(self, business_id: str, page: Page) -> Paged:
        """The business's listed entries, newest first: `DncEntry`s."""


class SqlConsent:
    """`ConsentRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_consent(self, **values: Any) -> None:
        await store.add_consent(self.conn, **values)

    async def consent_history(self, business_id: str, phone: str) -> list[ConsentEvent]:
        return [record(ConsentEvent, row._mapping) for row in await store.consent_history(self.conn, business_id,
                                                                                           phone)]

    async def listed(self, business_id: str, phone: str) -> DncEntry | None:
        return entry_of(await store.listed(self.conn, business_id, phone))

    async def add_dnc(self, **values: Any) -> DncEntry:
        listed = entry_of(await store.add_dnc(self.conn, **values))
        if listed is None:
            raise LookupError("the phone's listed entry was taken off meanwhile")
        return listed

    async def remove_dnc(self, business_id: str, phone: str, **values: Any) -> DncEntry | None:
        return entry_of(await store.remove_dnc(self.conn, business_id, phone, **values))

    async def dnc_page(self, business_id: str, page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.dnc_of(business_id), dnc_entries.c.created_at, dnc_entries.c.id,
                                 page)
        return paged.map(lambda row: record(DncEntry, row._mapping))


def entry_of(row: Any | None) -> DncEntry | None:
    return record(DncEntry, row._mapping) if row is not None else None
