"""What a torn-down business's deletion (services.webhooks.erasure.Erasure.erase_business) deletes of it here: its
deliveries with their attempts, its event history, its subscriptions and its per-call signing secret, at most
`limit` rows of each per statement. SQL only (the deletion's tests run on the stack)."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from services.webhooks.schema import attempts, call_secrets, deliveries, events, subscriptions


class SqlBusinessData:
    """On a unit of work's connection (WebhooksUnit.business_data)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def delete_deliveries(self, business_id: str, limit: int) -> int:
        """Up to `limit` of the business's deliveries deleted with their attempts; how many."""
        d = deliveries.c
        picked = [row.id for row in (await self.conn.execute(
            sa.select(d.id).where(d.business_id == business_id).limit(limit).with_for_update(skip_locked=True))).all()]
        if not picked:
            return 0
        await self.conn.execute(attempts.delete().where(attempts.c.delivery_id.in_(picked)))
        return (await self.conn.execute(deliveries.delete().where(d.id.in_(picked)))).rowcount

    async def delete_events(self, business_id: str, limit: int) -> int:
        """Up to `limit` of the business's stored events deleted; how many."""
        e = events.c
        picked = sa.select(e.event_id).where(e.business_id == business_id).limit(limit).scalar_subquery()
        return (await self.conn.execute(events.delete().where(e.event_id.in_(picked)))).rowcount

    async def delete_subscriptions(self, business_id: str) -> int:
        """The business's subscriptions and per-call secret deleted; how many subscriptions."""
        await self.conn.execute(call_secrets.delete().where(call_secrets.c.business_id == business_id))
        return (await self.conn.execute(subscriptions.delete().where(
            subscriptions.c.business_id == business_id))).rowcount
