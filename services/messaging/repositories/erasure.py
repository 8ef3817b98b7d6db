"""Where a person's erasure (services.messaging.erasure) finds their records and redacts them: their texts and
threads, emails, the owner's approval of their address, the outbox's events about their texts, and their number in
the evidence logs and on the do-not-contact list (kept there as its suppression hash)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from services.messaging import store


@dataclass(frozen=True)
class FoundText:
    """A text of the person's, not erased yet."""

    id: str
    conversation_id: str
    provider_sid: str | None
    contact: str  # their number: who texted an inbound text, to whom an outbound one went


@dataclass(frozen=True)
class Evidence:
    """What carried the number in the evidence and the touch ledger, hashed now."""

    consent_events: int
    decisions: int
    touches: int


class ErasureRepository(Protocol):
    async def contacts(self, business_id: str, limit: int) -> tuple[list[str], list[str]]:
        """Up to `limit` of the business's contact numbers and email addresses not erased yet: (phones, emails)."""

    async def texts(self, business_id: str, phones: list[str], message_ids: list[str]) -> list[FoundText]:
        """The business's texts with one of `phones` or among `message_ids`, not erased yet, oldest first."""

    async def erase_texts(self, business_id: str, message_ids: list[str], contact: str, marker: str,
                          hashed: str) -> int:
        """Those of the texts with `contact`: body redacted, the number replaced (`marker`; `hashed` in their
        idempotency keys); how many."""

    async def erase_threads(self, business_id: str, phones: list[str], marker: str) -> int:
        """The threads with one of `phones`: the number replaced by `marker` and the thread's id; how many."""

    async def erase_emails(self, business_id: str, addresses: list[str], marker: str, now: datetime) -> int:
        """The emails to one of `addresses`: address, subject and body redacted, an unsent one failed; how many."""

    async def forget_recipients(self, business_id: str, addresses: list[str]) -> int:
        """The owner's approvals of the addresses deleted; how many."""

    async def events_naming(self, business_id: str, message_ids: list[str]) -> list[tuple[int, dict[str, Any]]]:
        """The outbox's events about the texts: [(row id, data)]."""

    async def rewrite_event(self, event_id: int, data: dict[str, Any]) -> None: ...

    async def hash_evidence(self, business_id: str, phone: str, hashed: str) -> Evidence:
        """The number replaced by its hash in the consent history, the decision log and the touch ledger."""

    async def hash_dnc(self, business_id: str, phone: str, hashed: str, now: datetime, by: str, why: str) -> int:
        """The number's entries on the list kept under its hash; how many."""

    async def suppress(self, **values: Any) -> bool:
        """A hash on the business's list (schema.dnc_entries' columns); False when listed already."""


class SqlErasure:
    """`ErasureRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def contacts(self, business_id: str, limit: int) -> tuple[list[str], list[str]]:
        return await store.business_contacts(self.conn, business_id, limit)

    async def texts(self, business_id: str, phones: list[str], message_ids: list[str]) -> list[FoundText]:
        return [FoundText(str(r.id), str(r.conversation_id), r.provider_sid, r.contact)
                for r in await store.messages_to_erase(self.conn, business_id, phones, message_ids)]

    async def erase_texts(self, business_id: str, message_ids: list[str], contact: str, marker: str,
                          hashed: str) -> int:
        return await store.erase_messages(self.conn, business_id, message_ids, contact, marker, hashed)

    async def erase_threads(self, business_id: str, phones: list[str], marker: str) -> int:
        return await store.erase_conversations(self.conn, business_id, phones, marker)

    async def erase_emails(self, business_id: str, addresses: list[str], marker: str, now: datetime) -> int:
        return await store.erase_emails(self.conn, business_id, addresses, marker, now)

    async def forget_recipients(self, business_id: str, addresses: list[str]) -> int:
        return await store.forget_recipients(self.conn, business_id, addresses)

    async def events_naming(self, business_id: str, message_ids: list[str]) -> list[tuple[int, dict[str, Any]]]:
        return [(int(r.id), dict(r.data)) for r in await store.events_naming(self.conn, business_id, message_ids)]

    async def rewrite_event(self, event_id: int, data: dict[str, Any]) -> None:
        await store.rewrite_event(self.conn, event_id, data)

    async def hash_evidence(self, business_id: str, phone: str, hashed: str) -> Evidence:
        return Evidence(*await store.hash_evidence(self.conn, business_id, phone, hashed))

    async def hash_dnc(self, business_id: str, phone: str, hashed: str, now: datetime, by: str, why: str) -> int:
        return await store.hash_dnc(self.conn, business_id, phone, hashed, now, by, why)

    async def suppress(self, **values: Any) -> bool:
        return await store.suppress(self.conn, **values)
