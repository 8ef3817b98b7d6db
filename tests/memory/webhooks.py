"""services.webhooks.repository.SubscriptionsRepository in memory, on a MemoryDatabase's handle
(store.subscriptions and store.call_secrets). The fast tier holds no deliveries (they stay on SQL), so removing a
subscription has none to cancel."""
from __future__ import annotations

from services.webhooks.schema import call_secrets, subscriptions
from tests.memory import MemoryConnection, Record, insert, update


class MemorySubscriptions:
    def __init__(self, conn: MemoryConnection):
        self.subscription_rows = conn.rows(subscriptions)
        self.secret_rows = conn.rows(call_secrets)

    async def subscription(self, business_id, subscription_id, *, lock=False):
        row = self.subscription_rows.get((subscription_id,))
        return Record(row) if row is not None and row["business_id"] == business_id else None

    async def subscription_by_url(self, business_id, url):
        return next((Record(row) for row in self.subscription_rows.values()
                     if (row["business_id"], row["url"]) == (business_id, url)), None)

    async def subscriptions(self, business_id, *, active_only=False):
        return [Record(row) for row in sorted(self.subscription_rows.values(), key=lambda row: row["created_at"])
                if row["business_id"] == business_id and (row["is_active"] or not active_only)]

    async def add_subscription(self, **values):
        return Record(insert(self.subscription_rows, subscriptions, values))

    async def change_subscription(self, subscription_id, values):
        row = self.subscription_rows.get((subscription_id,))
        return update(subscriptions, row, values) if row is not None else None

    async def remove_subscription(self, subscription_id) -> None:
        self.subscription_rows.pop((subscription_id,), None)

    async def call_secret(self, business_id, *, lock=False):
        row = self.secret_rows.get((business_id,))
        return Record(row) if row is not None else None

    async def put_call_secret(self, business_id, sealed, tail, now, previous_sealed=None, previous_expires_at=None):
        values = {"secret_sealed": sealed, "secret_tail": tail, "previous_secret_sealed": previous_sealed,
                  "previous_secret_expires_at": previous_expires_at, "updated_at": now}
        row = self.secret_rows.get((business_id,))
        if row is not None:
            return update(call_secrets, row, values)
        return Record(insert(self.secret_rows, call_secrets, {"business_id": business_id, "created_at": now, **values}))
