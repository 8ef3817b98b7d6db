"""Row leases: one writer at a time for a record whose write waits on an external provider, without holding a
database transaction, a row lock or a pooled connection while the provider answers.

A lease is two columns on the record's row (`lease_columns()`). A writer takes it in one short statement
(`take` inside a transaction that already checks the row, or `hold`, which waits with backoff while another
writer has it), calls the provider with no connection held, and writes its result in a short transaction whose
UPDATE is guarded by `held(table, token)` and clears the lease (`RELEASED`). Leaving `hold` releases it in
any case; a writer that crashed loses its lease when `lease_until` passes.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from core.errors import ServiceError
from core.ids import new_id
from core.uow import Database

# Values that end a lease, for the guarded final UPDATE.
RELEASED = {"lease_token": None, "lease_until": None}


def lease_columns() -> list[sa.Column[Any]]:
    return [sa.Column("lease_token", UUID(as_uuid=False)), sa.Column("lease_until", sa.DateTime(timezone=True))]


def free(table: sa.Table) -> sa.ColumnElement[bool]:
    """Nobody holds the row's lease (never taken, released, or run out)."""
    return sa.or_(table.c.lease_until.is_(None), table.c.lease_until < sa.func.now())


def held(table: sa.Table, token: str) -> sa.ColumnElement[bool]:
    """The row's lease is still the one `token` names (nobody took it over after it ran out)."""
    return table.c.lease_token == token


async def take(conn: AsyncConnection, table: sa.Table, row_id: object, duration: timedelta) -> str | None:
    """Take the lease of a row if it is free; its token, or None when another writer holds it."""
    token = new_id()
    taken = await conn.scalar(table.update().where(table.c.id == row_id, free(table))
                              .values(lease_token=token, lease_until=sa.func.now() + duration)
                              .returning(table.c.id))
    return token if taken is not None else None


async def release(db: Database, table: sa.Table, row_id: object, token: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(table.update().where(table.c.id == row_id, held(table, token)).values(**RELEASED))


@asynccontextmanager
async def hold(db: Database, table: sa.Table, row_id: object, *, duration: timedelta, wait_seconds: float,
               what: str) -> AsyncIterator[str]:
    """Hold the lease of a row for the block, waiting up to `wait_seconds` for another writer to finish
    (then 409 conflict naming `what`); yields the token."""
    deadline = time.monotonic() + wait_seconds
    pause = 0.02
    while True:
        async with db.transaction() as conn:
            token = await take(conn, table, row_id, duration)
        if token is not None:
            break
        if time.monotonic() >= deadline:
            raise ServiceError("conflict", f"{what} is being changed by another request; retry shortly")
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)
    try:
        yield token
    finally:
        await release(db, table, row_id, token)
