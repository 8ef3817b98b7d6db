"""Where the retention a business set (services.messaging.data_retention) finds what is past it and redacts it: the
texts' and emails' content, and the evidence's numbers (kept as their suppression hashes)."""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from services.messaging import store


class DataRetentionRepository(Protocol):
    async def texts(self, business_id: str, before: datetime, limit: int) -> list[tuple[str, str | None]]:
        """Settled texts before `before` not redacted yet, oldest first: [(id, provider sid)]."""

    async def redact_texts(self, business_id: str, message_ids: list[str], now: datetime) -> int: ...

    async def emails(self, business_id: str, before: datetime, limit: int) -> list[str]:
        """Sent or failed emails before `before` with their content, oldest first: ids."""

    async def redact_emails(self, business_id: str, email_ids: list[str], now: datetime) -> int: ...

    async def consent(self, business_id: str, before: datetime, limit: int) -> list[tuple[int, str]]:
        """Consent events before `before` under a number (not its hash), oldest first: [(id, number)]."""

    async def redact_consent(self, hashed: list[tuple[int, str]]) -> int:
        """[(id, hash)]: the number hashed, the note dropped; how many."""

    async def decisions(self, business_id: str, before: datetime, limit: int) -> list[tuple[str, str]]:
        """Compliance decisions before `before` under a number, oldest first: [(id, number)]."""

    async def redact_decisions(self, hashed: list[tuple[str, str]]) -> int:
        """[(id, hash)]: the number hashed, in the message too; how many."""


class SqlDataRetention:
    """`DataRetentionRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def texts(self, business_id: str, before: datetime, limit: int) -> list[tuple[str, str | None]]:
        return [(str(r.id), r.provider_sid) for r in await store.texts_to_redact(self.conn, business_id, before, limit)]

    async def redact_texts(self, business_id: str, message_ids: list[str], now: datetime) -> int:
        return await store.redact_texts(self.conn, business_id, message_ids, now)

    async def emails(self, business_id: str, before: datetime, limit: int) -> list[str]:
        return await store.emails_to_redact(self.conn, business_id, before, limit)

    async def redact_emails(self, business_id: str, email_ids: list[str], now: datetime) -> int:
        return await store.redact_emails(self.conn, business_id, email_ids, now)

    async def consent(self, business_id: str, before: datetime, limit: int) -> list[tuple[int, str]]:
        return [(int(r.id), r.phone) for r in await store.consent_to_redact(self.conn, business_id, before, limit)]

    async def redact_consent(self, hashed: list[tuple[int, str]]) -> int:
        return await store.redact_consent(self.conn, hashed)

    async def decisions(self, business_id: str, before: datetime, limit: int) -> list[tuple[str, str]]:
        return [(str(r.id), r.phone) for r in await store.decisions_to_redact(self.conn, business_id, before, limit)]

    async def redact_decisions(self, hashed: list[tuple[str, str]]) -> int:
        return await store.redact_decisions(self.conn, hashed)
