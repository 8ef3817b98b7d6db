"""Where the daily spend limits' counts live (spend.py): the day's use per business, the API emails of a window,
and ended calls' seconds. Touches are counted with their compliance decision (compliance.py: count_touch)."""
from __future__ import annotations

from datetime import date, datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from services.messaging import store


class SpendRepository(Protocol):
    async def spent_on(self, business_ids: list[str], day: date) -> dict[str, dict[str, int]]:
        """{business id: {what (a channel, or call_seconds): used}} on `day` (UTC), for those that spent."""

    async def api_emails_since(self, business_id: str, since: datetime) -> int:
        """How many emails API callers queued for the business since `since`."""

    async def add_call_seconds(self, ended: list[tuple[str, str, date, int]]) -> None:
        """Ended calls' seconds ((call id, business id, day, seconds)) in their businesses' spend of that day, each
        call once."""


class SqlSpend:
    """`SpendRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def spent_on(self, business_ids: list[str], day: date) -> dict[str, dict[str, int]]:
        return await store.spent_on(self.conn, business_ids, day)

    async def api_emails_since(self, business_id: str, since: datetime) -> int:
        count, _oldest = await store.api_emails_since(self.conn, business_id, since)
        return int(count)

    async def add_call_seconds(self, ended: list[tuple[str, str, date, int]]) -> None:
        await store.add_call_seconds(self.conn, ended)
