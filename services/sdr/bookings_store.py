"""The queries on a business's availability and bookings (schema.availability, schema.bookings), each taking a
connection; the bookings repository (services.sdr.repository.SqlBookings) alone calls them."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from contracts.bookings import CONFIRMED
from core.db import lock_until_commit
from services.sdr.schema import availability, bookings


async def availability_of(conn: AsyncConnection, business_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(availability).where(availability.c.business_id == business_id))).first()


async def save_availability(conn: AsyncConnection, business_id: str, values: dict[str, Any],
                            now: datetime) -> sa.Row[Any]:
    statement = insert(availability).values(business_id=business_id, updated_at=now, **values)
    row: sa.Row[Any] = (await conn.execute(statement.on_conflict_do_update(
        index_elements=[availability.c.business_id], set_={**values, "updated_at": now})
        .returning(availability))).one()
    return row


async def lock_bookings(conn: AsyncConnection, business_id: str) -> None:
    """Serialise the writes of one business's bookings until the transaction ends (on every replica: the lock is
    the database's), so that the overlap check and the write that follows it are one step."""
    await lock_until_commit(conn, "sdr-bookings", business_id)


async def confirmed_between(conn: AsyncConnection, business_id: str, since: datetime, until: datetime,
                            but: str | None = None) -> list[sa.Row[Any]]:
    """The business's confirmed bookings that end after `since` and start before `until` (other than `but`)."""
    c = bookings.c
    query = sa.select(bookings).where(c.business_id == business_id, c.status == CONFIRMED, c.ends_at > since,
                                      c.starts_at < until)
    if but is not None:
        query = query.where(c.id != but)
    return list((await conn.execute(query.order_by(c.starts_at))).all())


async def insert_booking(conn: AsyncConnection, values: dict[str, Any]) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(bookings.insert().values(**values).returning(bookings))).one()
    return row


async def update_booking(conn: AsyncConnection, booking_id: str, values: dict[str, Any]) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(bookings.update().where(bookings.c.id == booking_id).values(**values)
                                           .returning(bookings))).one()
    return row


def bookings_of(business_ids: list[str], since: datetime | None, until: datetime | None,
                status: str | None) -> sa.Select[Any]:
    """These businesses' bookings starting in [since, until), of one status when given (to page by starts_at)."""
    c = bookings.c
    query = sa.select(bookings).where(c.business_id.in_(business_ids))
    if since is not None:
        query = query.where(c.starts_at >= since)
    if until is not None:
        query = query.where(c.starts_at < until)
    if status is not None:
        query = query.where(c.status == status)
    return query
