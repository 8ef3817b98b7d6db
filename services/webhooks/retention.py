"""The webhooks' retention (core.retention): a finished delivery (delivered, failed or canceled) goes with its
attempts once older than RETENTION_WEBHOOK_DELIVERIES_DAYS; a pending one stays whatever its age. The event history
(`events`) is the businesses' data, not bounded here."""
from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core.retention import Rule, claimed
from services.webhooks.schema import attempts, deliveries

PENDING = "pending"


async def _delete_finished(conn: AsyncConnection, cutoff: datetime, limit: int) -> int:
    """A batch of finished deliveries older than the cutoff, and their attempts, in the caller's transaction."""
    due = sa.and_(deliveries.c.status != PENDING, deliveries.c.created_at < cutoff)  # the deliveries_finished index
    gone = (await conn.execute(claimed(deliveries, due, limit).returning(deliveries.c.id))).scalars().all()
    if gone:
        await conn.execute(attempts.delete().where(attempts.c.delivery_id.in_(gone)))
    return len(gone)


def rules(keep: timedelta) -> list[Rule]:
    return [Rule("webhooks.deliveries", keep, _delete_finished)]
