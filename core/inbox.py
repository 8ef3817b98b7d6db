"""Consumer-side dedup: remember which events a consumer has already applied."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core.columns import Ts, Uuid


def inbox_table(metadata: sa.MetaData, schema: str) -> sa.Table:
    return sa.Table(
        "inbox",
        metadata,
        sa.Column("consumer", sa.Text, primary_key=True),
        sa.Column("event_id", Uuid, primary_key=True),
        sa.Column("processed_at", Ts, server_default=sa.func.now(), nullable=False),
        sa.Index("inbox_processed", "processed_at"),  # the retention sweep's scan (core.retention.inbox_ids)
        schema=schema,
    )


async def first_delivery(conn: AsyncConnection, table: sa.Table, consumer: str, event_id: str) -> bool:
    """True the first time (consumer, event_id) is seen in a committed transaction.

    Call it in the transaction that applies the event: if that transaction
    rolls back, the event counts as unseen and its redelivery is applied.
    """
    return event_id in await first_deliveries(conn, table, consumer, [event_id])


async def first_deliveries(conn: AsyncConnection, table: sa.Table, consumer: str, event_ids: list[str]) -> set[str]:
    """Of a batch of events, those (consumer, event_id) sees for the first time, in one statement (see
    first_delivery)."""
    if not event_ids:
        return set()
    result = await conn.execute(insert(table).on_conflict_do_nothing().returning(table.c.event_id),
                                [{"consumer": consumer, "event_id": event_id} for event_id in event_ids])
    return {str(event_id) for event_id in result.scalars()}
