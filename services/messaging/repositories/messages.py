"""Where texts and their threads live (schema.conversations, messages): the send use case (service.py: Texts), the
provider's callbacks and inbound texts (provider_service.py), the reconciliation of texts of unknown outcome
(reconciliation.py) and the thread and message reads."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.pagination import Page, Paged, fetch_page
from core.records import record
from services.messaging import store
from services.messaging.records import Conversation, Message
from services.messaging.schema import conversations, messages


def message_of(row: Any) -> Message:
    return record(Message, row._mapping)


def found(row: Any | None) -> Message | None:
    return message_of(row) if row is not None else None


class MessagesRepository(Protocol):
    async def add_to_thread(self, *, business_number: str, contact_number: str, **values: Any) -> Message | None:
        """The message (`values`: schema.messages' columns, a fresh id) on the thread of the business number and
        the contact: the thread made on first use or moved on (its counts, latest message, and the agent and lead
        it had none of), the message's lead the thread's when it has none. None when the business has a message
        with its idempotency key (the thread has moved on all the same: the caller rolls back)."""

    async def message_by_key(self, business_id: str, key: str) -> Message | None:
        """The business's message with this idempotency key, or None."""

    async def message_by_sid(self, sid: str) -> Message | None:
        """The message with the provider's sid, or None."""

    async def message_for_callback(self, message_id: str | None, sid: str) -> Message | None:
        """The message with our id (held for update), else the one with the provider's sid, or None."""

    async def change_message(self, message_id: str, values: dict[str, Any]) -> Message | None:
        """The message after `values`, or None when there is none."""

    async def unknown_messages(self, settled_before: datetime, limit: int) -> list[Message]:
        """Outbound texts of unknown outcome whose last change is older than `settled_before`, oldest first."""

    async def unsettled_messages(self, now: datetime, after: timedelta, since: datetime, limit: int) -> list[Message]:
        """Outbound texts the provider took with no outcome yet, sent since `since`, whose status check is due
        (store.unsettled_messages), oldest first."""

    async def checked(self, message_id: str, checks: int, next_due: datetime) -> None:
        """The provider was asked about the text (`checks` times now); ask again at `next_due`."""

    async def known_sids(self, sids: list[str], besides: str) -> set[str]:
        """Those of `sids` that messages other than `besides` already carry."""

    async def conversations_page(self, business_ids: Iterable[str], conversation_id: str | None,
                                 page: Page) -> Paged:
        """The businesses' threads (one when `conversation_id` is given), latest first: `Conversation`s."""

    async def messages_page(self, business_ids: Iterable[str], conversation_id: str | None, direction: str | None,
                            page: Page) -> Paged:
        """The businesses' messages (of one thread, of one direction, when given), newest first: `Message`s."""

    async def mark_read(self, conversation_id: str) -> None:
        """The thread has no unread message."""


class SqlMessages:
    """`MessagesRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_to_thread(self, *, business_number: str, contact_number: str, **values: Any) -> Message | None:
        return found(await store.add_to_thread(self.conn, business_number=business_number,
                                               contact_number=contact_number, **values))

    async def message_by_key(self, business_id: str, key: str) -> Message | None:
        return found(await store.message_by_key(self.conn, business_id, key))

    async def message_by_sid(self, sid: str) -> Message | None:
        return found(await store.message_by_sid(self.conn, sid))

    async def message_for_callback(self, message_id: str | None, sid: str) -> Message | None:
        return found(await store.message_for_callback(self.conn, message_id, sid))

    async def change_message(self, message_id: str, values: dict[str, Any]) -> Message | None:
        return found(await store.update_message(self.conn, message_id, values))

    async def unknown_messages(self, settled_before: datetime, limit: int) -> list[Message]:
        return [message_of(row) for row in await store.unknown_messages(self.conn, settled_before, limit)]

    async def unsettled_messages(self, now: datetime, after: timedelta, since: datetime, limit: int) -> list[Message]:
        return [message_of(row) for row in await store.unsettled_messages(self.conn, now, after, since, limit)]

    async def checked(self, message_id: str, checks: int, next_due: datetime) -> None:
        await store.checked(self.conn, message_id, checks, next_due)

    async def known_sids(self, sids: list[str], besides: str) -> set[str]:
        return await store.known_sids(self.conn, sids, besides)

    async def conversations_page(self, business_ids: Iterable[str], conversation_id: str | None,
                                 page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.conversations_of(business_ids, conversation_id),
                                 conversations.c.last_message_at, conversations.c.id, page)
        return paged.map(lambda row: record(Conversation, row._mapping))

    async def messages_page(self, business_ids: Iterable[str], conversation_id: str | None, direction: str | None,
                            page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.messages_of(business_ids, conversation_id, direction),
                                 messages.c.created_at, messages.c.id, page)
        return paged.map(message_of)

    async def mark_read(self, conversation_id: str) -> None:
        await store.mark_read(self.conn, conversation_id)
