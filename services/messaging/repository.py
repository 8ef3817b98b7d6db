"""Where the send use case (service.py: Texts.place/send), the compliance decisions' facts and log
(compliance_service.py) and consent and do-not-call (consent_service.py) keep their rows: a repository bound to one
unit of work's handle. It only stores and finds; the rules stay in domain.py, core.compliance and the use cases.

`SqlMessaging` is the production one, over store.py; the fast test tier has an in-memory one
(tests/memory/messaging.py), and the same behaviour tests run on both (tests/storage_contracts.py). The thread and
message reads, inbound texts and status callbacks (provider_service.py), the standings of many callees at once
and reconciliation still run store.py's queries directly; daily spend and the email queue have repositories of
their own on `MessagingUnit` (repositories/)."""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.compliance.decision import Counted
from core.pagination import Page, Paged, fetch_page
from services.messaging import domain, store
from services.messaging.schema import dnc_entries


class MessagingRepository(Protocol):
    async def add_to_thread(self, *, business_number: str, contact_number: str, **values: Any) -> Any | None:
        """The message (`values`: schema.messages' columns, a fresh id) on the thread of the business number and
        the contact: the thread made on first use or moved on (its counts, latest message, and the agent and lead
        it had none of), the message's lead the thread's when it has none. None when the business has a message
        with its idempotency key (the thread has moved on all the same: the caller rolls back)."""

    async def message_by_key(self, business_id: str, key: str) -> Any | None:
        """The business's message with this idempotency key, or None."""

    async def message_for_callback(self, message_id: str | None, sid: str) -> Any | None:
        """The message with our id (held for update), else the one with the provider's sid, or None."""

    async def change_message(self, message_id: str, values: dict[str, Any]) -> Any | None:
        """The message after `values`, or None when there is none."""

    async def add_decision(self, **values: Any) -> Any:
        """Log a compliance decision (schema.compliance_decisions' columns); its row."""

    async def standing(self, business_id: str, phone: str) -> tuple[Any | None, list[Any], store.National | None]:
        """The phone's listed do-not-call entry of the business (or None), its consent history, oldest first, and
        what the national registry's loaded data says of it (None when its area code was never imported)."""

    async def lock_callee(self, business_id: str, phone: str) -> None:
        """Serialize the decisions on one business's callee until the transaction ends (its touches are counted and
        a slot taken under it, so two touches racing cannot both take the last slot)."""

    async def recent_touches(self, business_id: str, phone: str, since: datetime) -> list[Counted]:
        """The touches of the ledger to the phone placed after `since` and not released, oldest first."""

    async def count_touch(self, *, decision_id: str, business_id: str, phone: str, channel: str,
                          placed_at: datetime, within: domain.Allowance) -> bool:
        """The touch a logged decision let through, in the ledger and its business's spend of the day, if `within`
        the day's limits; False (nothing written) when they are reached."""

    async def spent_on(self, business_ids: list[str], day: date) -> dict[str, dict[str, int]]:
        """{business id: {what (a channel, or call_seconds): used}} on `day` (UTC)."""

    async def release_touch(self, decision_id: str, business_ids, at: datetime) -> bool:
        """Free the slot of a touch never placed; False when the businesses hold no such slot."""

    async def add_consent(self, **values: Any) -> None:
        """Record a consent event (schema.consent_events' columns)."""

    async def consent_history(self, business_id: str, phone: str) -> list[Any]:
        """The phone's consent events with the business, oldest first."""

    async def listed(self, business_id: str, phone: str) -> Any | None:
        """The phone's entry on the business's do-not-call list (not removed), or None."""

    async def add_dnc(self, **values: Any) -> Any:
        """List a phone (schema.dnc_entries' columns); the entry listed: this one, or the one already there."""

    async def remove_dnc(self, business_id: str, phone: str, **values: Any) -> Any | None:
        """Take the phone's listed entry off (`values`: removed_at, removed_reason, removed_by); the entry after,
        or None when the phone is not listed."""

    async def dnc_page(self, business_id: str, page: Page) -> Paged:
        """The business's listed entries, newest first."""


class SqlMessaging:
    """`MessagingRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_to_thread(self, *, business_number: str, contact_number: str, **values: Any) -> Any | None:
        return await store.add_to_thread(self.conn, business_number=business_number, contact_number=contact_number,
                                         **values)

    async def message_by_key(self, business_id: str, key: str) -> Any | None:
        return await store.message_by_key(self.conn, business_id, key)

    async def message_for_callback(self, message_id: str | None, sid: str) -> Any | None:
        return await store.message_for_callback(self.conn, message_id, sid)

    async def change_message(self, message_id: str, values: dict[str, Any]) -> Any | None:
        return await store.update_message(self.conn, message_id, values)

    async def add_decision(self, **values: Any) -> Any:
        return await store.add_decision(self.conn, **values)

    async def standing(self, business_id: str, phone: str) -> tuple[Any | None, list[Any], store.National | None]:
        entry, history, national = await store.standing(self.conn, business_id, phone)
        return entry, history, national

    async def lock_callee(self, business_id: str, phone: str) -> None:
        await store.lock_callee(self.conn, business_id, phone)

    async def recent_touches(self, business_id: str, phone: str, since: datetime) -> list[Counted]:
        return (await store.recent_touches_of(self.conn, business_id, [phone], since))[phone]

    async def count_touch(self, *, decision_id: str, business_id: str, phone: str, channel: str,
                          placed_at: datetime, within: domain.Allowance) -> bool:
        return await store.count_touch(self.conn, decision_id=decision_id, business_id=business_id, phone=phone,
                                       channel=channel, placed_at=placed_at, within=within)

    async def spent_on(self, business_ids: list[str], day: date) -> dict[str, dict[str, int]]:
        return await store.spent_on(self.conn, business_ids, day)

    async def release_touch(self, decision_id: str, business_ids, at: datetime) -> bool:
        return await store.release_touch(self.conn, decision_id, business_ids, at)

    async def add_consent(self, **values: Any) -> None:
        await store.add_consent(self.conn, **values)

    async def consent_history(self, business_id: str, phone: str) -> list[Any]:
        return await store.consent_history(self.conn, business_id, phone)

    async def listed(self, business_id: str, phone: str) -> Any | None:
        return await store.listed(self.conn, business_id, phone)

    async def add_dnc(self, **values: Any) -> Any:
        return await store.add_dnc(self.conn, **values)

    async def remove_dnc(self, business_id: str, phone: str, **values: Any) -> Any | None:
        return await store.remove_dnc(self.conn, business_id, phone, **values)

    async def dnc_page(self, business_id: str, page: Page) -> Paged:
        return await fetch_page(self.conn, store.dnc_of(business_id), dnc_entries.c.created_at, dnc_entries.c.id,
                                page)
