"""Where the email queue keeps its emails and the addresses an owner approved (email_service.py): the API callers'
emails and the owner's notifications, their approval and their delivery under a lease (core.leases)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.db import lock_until_commit
from core.pagination import Page, Paged, fetch_page
from core.records import record
from services.messaging import store
from services.messaging.schema import emails


@dataclass(frozen=True)
class Email:
    """One email of the queue (schema.emails, without its lease)."""

    id: str
    business_id: str
    kind: str
    to_address: str
    subject: str
    body: str
    status: str
    reference: str | None
    created_by: str | None
    approved_by: str | None
    approved_at: datetime | None
    attempts: int
    next_attempt_at: datetime | None
    last_error: str | None
    message_id: str | None
    recipient: str | None
    on_behalf_of: str | None
    reply_to: str | None
    sent_at: datetime | None
    created_at: datetime
    updated_at: datetime


def email_of(row: Any) -> Email:
    return record(Email, row._mapping)


class EmailRepository(Protocol):
    async def lock_quota(self, business_id: str) -> None:
        """Serialize the business's queueing until the transaction ends (its quota is counted under it)."""

    async def api_emails_since(self, business_id: str, since: datetime) -> tuple[int, datetime | None]:
        """How many emails API callers queued for the business since `since`, and the oldest one's time."""

    async def is_approved_recipient(self, business_id: str, address: str) -> bool:
        """Whether the owner approved the address for the business."""

    async def approve_recipient(self, business_id: str, address: str, approved_by: str,
                                approved_at: datetime) -> None:
        """Record the owner's approval of an address (the first one stands)."""

    async def queue(self, **values: Any) -> Email | None:
        """The queued email (schema.emails' columns); None when its business already has one with that
        reference."""

    async def email(self, business_ids: tuple[str, ...], email_id: str) -> Email | None:
        """The email of one of the businesses, or None."""

    async def approve(self, email_id: str, business_ids: tuple[str, ...], **values: Any) -> Email | None:
        """Approve an email pending approval; None when the businesses have none such."""

    async def page(self, business_ids: tuple[str, ...], status: str | None, page: Page) -> Paged:
        """The businesses' emails (of `status`, if given), newest first."""

    async def claim_due(self, now: datetime, duration: timedelta, limit: int) -> list[tuple[Email, str]]:
        """Take the lease of up to `limit` due approved emails: [(email, lease token)]."""

    async def leased_update(self, email_id: str, token: str, values: dict[str, Any]) -> Email | None:
        """Change a leased email and release its lease; None when the lease is no longer `token`'s."""


class SqlEmails:
    """`EmailRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def lock_quota(self, business_id: str) -> None:
        await lock_until_commit(self.conn, "email-quota", business_id)

    async def api_emails_since(self, business_id: str, since: datetime) -> tuple[int, datetime | None]:
        return await store.api_emails_since(self.conn, business_id, since)

    async def is_approved_recipient(self, business_id: str, address: str) -> bool:
        return await store.is_approved_recipient(self.conn, business_id, address)

    async def approve_recipient(self, business_id: str, address: str, approved_by: str,
                                approved_at: datetime) -> None:
        await store.approve_recipient(self.conn, business_id, address, approved_by, approved_at)

    async def queue(self, **values: Any) -> Email | None:
        row = await store.queue_email(self.conn, **values)
        return email_of(row) if row is not None else None

    async def email(self, business_ids: tuple[str, ...], email_id: str) -> Email | None:
        row = (await self.conn.execute(store.emails_of(business_ids, None, email_id))).first()
        return email_of(row) if row is not None else None

    async def approve(self, email_id: str, business_ids: tuple[str, ...], **values: Any) -> Email | None:
        row = await store.approve_email(self.conn, email_id, business_ids, **values)
        return email_of(row) if row is not None else None

    async def page(self, business_ids: tuple[str, ...], status: str | None, page: Page) -> Paged:
        found = await fetch_page(self.conn, store.emails_of(business_ids, status), emails.c.created_at,
                                 emails.c.id, page)
        return found.map(email_of)

    async def claim_due(self, now: datetime, duration: timedelta, limit: int) -> list[tuple[Email, str]]:
        return [(email_of(row), token) for row, token in await store.claim_due_emails(self.conn, now, duration, limit)]

    async def leased_update(self, email_id: str, token: str, values: dict[str, Any]) -> Email | None:
        row = await store.leased_email_update(self.conn, email_id, token, values)
        return email_of(row) if row is not None else None
