"""Where the webhook subscription use cases (service.py) keep subscriptions and the per-call webhook secrets: a
repository bound to one unit of work's handle. It only stores and finds; the rules stay in domain.py and the use
cases.

`SqlSubscriptions` is the production one, over store.py; the fast test tier has an in-memory one
(tests/memory/webhooks.py), and the same behaviour tests run on both (tests/storage_contracts.py). The event
history, deliveries, the test event and replays, and the dispatcher stay on store.py directly."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from services.webhooks import store


class SubscriptionsRepository(Protocol):
    async def subscription(self, business_id: str, subscription_id: str, *, lock: bool = False) -> Any | None:
        """The business's subscription with this id (held for update with `lock`), or None."""

    async def subscription_by_url(self, business_id: str, url: str) -> Any | None:
        """The business's subscription to this URL, held for update, or None."""

    async def subscriptions(self, business_id: str, *, active_only: bool = False) -> list[Any]:
        """The business's subscriptions (the active ones only, when asked), oldest first."""

    async def add_subscription(self, **values: Any) -> Any:
        """Record a subscription (schema.subscriptions' columns); its row. One per business and URL."""

    async def change_subscription(self, subscription_id: str, values: dict[str, Any]) -> Any | None:
        """The subscription after `values`, or None when there is none."""

    async def remove_subscription(self, subscription_id: str) -> None:
        """Delete it (SQL: and cancel its pending deliveries)."""

    async def call_secret(self, business_id: str, *, lock: bool = False) -> Any | None:
        """The business's per-call webhook secret (held for update with `lock`), or None."""

    async def put_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime,
                              previous_sealed: str | None = None,
                              previous_expires_at: datetime | None = None) -> Any:
        """Make the business's secret, or replace it keeping the previous one until `previous_expires_at`."""


class SqlSubscriptions:
    """`SubscriptionsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def subscription(self, business_id: str, subscription_id: str, *, lock: bool = False) -> Any | None:
        return await store.subscription_of(self.conn, business_id, subscription_id, lock=lock)

    async def subscription_by_url(self, business_id: str, url: str) -> Any | None:
        return await store.subscription_by_url(self.conn, business_id, url)

    async def subscriptions(self, business_id: str, *, active_only: bool = False) -> list[Any]:
        return await store.subscriptions_of(self.conn, business_id, active_only=active_only)

    async def add_subscription(self, **values: Any) -> Any:
        return await store.insert_subscription(self.conn, **values)

    async def change_subscription(self, subscription_id: str, values: dict[str, Any]) -> Any | None:
        return await store.update_subscription(self.conn, subscription_id, values)

    async def remove_subscription(self, subscription_id: str) -> None:
        await store.delete_subscription(self.conn, subscription_id)

    async def call_secret(self, business_id: str, *, lock: bool = False) -> Any | None:
        return await store.call_secret_of(self.conn, business_id, lock=lock)

    async def put_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime,
                              previous_sealed: str | None = None,
                              previous_expires_at: datetime | None = None) -> Any:
        return await store.put_call_secret(self.conn, business_id, sealed, tail, now, previous_sealed,
                                           previous_expires_at)
