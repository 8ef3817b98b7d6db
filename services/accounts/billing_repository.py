"""Billing's storage (through store.py), on the connection of the caller's transaction or read (AccountsUnit.billing):
the payment provider's events seen, the businesses billing moves and the workspaces billed on an account's
subscription, and the x402 payments, as typed records (services.accounts.records)."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.records import or_none, record
from services.accounts import store
from services.accounts.records import Business, LiveWorkspace, PendingWorkspace, X402Payment
from services.accounts.schema import businesses


def business_record(row: Any) -> Business:
    """The record of a row of schema.businesses (AccountsRepository's reads of one too)."""
    return record(Business, row._mapping)


def _payment(row: Any) -> X402Payment:
    return record(X402Payment, row._mapping)


class SqlBilling:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    # -- businesses --

    async def business(self, business_id: str) -> Business | None:
        return or_none(business_record, await store.business_row(self.conn, business_id))

    async def lock_business_by(self, business_id: str | None, subscription_id: str | None,
                               customer_id: str | None) -> Business | None:
        """The business a provider event is about, held for update: by our id, else by the provider's subscription
        or customer."""
        return or_none(business_record, await store.lock_business_by(self.conn, business_id, subscription_id, customer_id))

    async def record_payment_event(self, event_id: str, kind: str, business_id: str | None, created_at: datetime,
                                   received_at: datetime) -> bool:
        """Remember a provider event; False when it was seen before (a redelivery)."""
        return await store.record_payment_event(self.conn, event_id, kind, business_id, created_at, received_at)

    async def billing_due(self, now: datetime, grace: timedelta) -> list[str]:
        """The workspaces billing may have to move now (payments_domain.billing_move decides)."""
        return [str(row.id) for row in await self.conn.execute(store.billing_due(now, grace))]

    async def renewals_to_remind(self, now: datetime, ahead: timedelta) -> list[str]:
        """Active x402 workspaces whose paid period ends within `ahead`, their owner not told yet."""
        return [str(row.id) for row in await self.conn.execute(store.renewals_to_remind(now, ahead))]

    async def delete_business(self, business_id: str) -> None:
        await store.delete_business(self.conn, business_id)

    # -- workspaces billed on the account's subscription --

    async def payer(self, account_id: str, *, lock: bool = True) -> Business | None:
        """The account's paying business (its signup's), held for update with `lock`."""
        return or_none(business_record, await store.lock_payer(self.conn, account_id, lock=lock))

    async def live_workspaces(self, account_id: str) -> list[LiveWorkspace]:
        """The account's workspaces not torn down."""
        return [record(LiveWorkspace, row._mapping) for row in await store.live_workspaces(self.conn, account_id)]

    async def billed_on(self, payer_id: str, *, lock: bool = False) -> list[Business]:
        """The workspaces billed on the payer's subscription, not torn down (held for update with `lock`)."""
        return [business_record(row) for row in await store.billed_on(self.conn, payer_id, lock=lock)]

    async def pending_workspaces(self, now: datetime) -> list[PendingWorkspace]:
        """Workspaces being added to their payer's subscription whose request's lease ran out."""
        return [record(PendingWorkspace, row._mapping)
                for row in await self.conn.execute(store.pending_workspaces(now))]

    async def take_lease(self, business_id: str, duration: timedelta) -> str | None:
        """The workspace's lease, if free: its token, or None when another writer holds it."""
        return await leases.take(self.conn, businesses, business_id, duration)

    async def delete_pending_workspace(self, business_id: str, token: str) -> None:
        """Undo a workspace the provider refused to bill, if `token` still holds its lease."""
        await store.delete_pending_workspace(self.conn, business_id, token)

    async def retry_pending_workspace(self, business_id: str, token: str, at: datetime) -> None:
        """Leave the workspace to the billing worker from `at`."""
        await store.retry_pending_workspace(self.conn, business_id, token, at)

    # -- x402 payments --

    async def add_x402_payment(self, **values: Any) -> bool:
        """False when its authorization (payer, nonce) is recorded already."""
        return await store.add_x402_payment(self.conn, **values)

    async def x402_payment(self, *, id: str | None = None, payer: str | None = None, nonce: str | None = None,
                           lock: bool = False) -> X402Payment | None:
        """One payment, by id or by its authorization (payer, nonce)."""
        return or_none(_payment, await store.x402_payment(self.conn, id=id, payer=payer, nonce=nonce, lock=lock))

    async def change_x402_payment(self, payment_id: str, values: dict[str, Any]) -> None:
        await store.update_x402_payment(self.conn, payment_id, values)

    async def business_of_x402_payment(self, payment_id: str) -> Business | None:
        return or_none(business_record, await store.business_of_x402_payment(self.conn, payment_id))

    async def has_pending_x402(self, business_id: str) -> bool:
        """Whether a payment of the business is pending or unresolved."""
        return await store.has_pending_x402(self.conn, business_id)

    async def claim_due_x402_payments(self, limit: int, retry_after: timedelta) -> list[X402Payment]:
        """Up to `limit` pending payments due to be asked about again, their next attempt pushed `retry_after` on."""
        return [_payment(row) for row in await self.conn.execute(store.claim_due_x402_payments(limit, retry_after))]
