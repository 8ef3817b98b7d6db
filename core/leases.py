"""Row leases: one writer at a time for a record whose write waits on an external provider, without holding a
database transaction, a row lock or a pooled connection while the provider answers.

A lease is two columns on the record's row (`lease_columns()`). A writer takes it in one short statement
(`take` inside a transaction that already checks the row, or `hold`, which waits with backoff while another
writer has it), calls the provider with no connection held, and writes its result in a short transaction whose
UPDATE is guarded by `held(table, token)` and clears the lease (`RELEASED`). Leaving `hold` releases it in
any case; a writer that crashed loses its lease when `lease_until` passes.

`hold_with` is the same wait over a `Lessor`, for a use case that reaches its rows through a repository (which
takes and releases the lease with `take` and `release_on`, or in memory in the fast test tier).
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core.columns import Ts, Uuid
from core.errors import ServiceError
from core.ids import new_id
from core.uow import Connections

# Values that end a lease, for the guarded final UPDATE.
RELEASED = {"lease_token": None, "lease_until": None}


def lease_columns() -> list[sa.Column[Any]]:
    return [sa.Column("lease_token", Uuid), sa.Column("lease_until", Ts)]


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


async def release_on(conn: AsyncConnection, table: sa.Table, row_id: object, token: str) -> None:
    """End the row's lease if it is still `token`'s."""
    await conn.execute(table.update().where(table.c.id == row_id, held(table, token)).values(**RELEASED))


async def release(db: Connections, table: sa.Table, row_id: object, token: str) -> None:
    async with db.transaction() as conn:
        await release_on(conn, table, row_id, token)


class Lessor(Protocol):
    """Takes and releases the leases of one kind of row on a unit of work's handle (a repository)."""

    async def take_lease(self, row_id: Any, duration: timedelta) -> str | None:
        """The lease's token, or None when another writer holds it."""

    async def release_lease(self, row_id: Any, token: str) -> None: ...


class _TableLessor:
    def __init__(self, conn: AsyncConnection, table: sa.Table):
        self.conn, self.table = conn, table

    async def take_lease(self, row_id: Any, duration: timedelta) -> str | None:
        return await take(self.conn, self.table, row_id, duration)

    async def release_lease(self, row_id: Any, token: str) -> None:
        await release_on(self.conn, self.table, row_id, token)


def hold(db: Connections, table: sa.Table, row_id: object, *, duration: timedelta, wait_seconds: float,
         what: str) -> AbstractAsyncContextManager[str]:
    """Hold the lease of a row of `table` for the block, waiting up to `wait_seconds` for another writer to
    finish (then 409 conflict naming `what`); yields the token."""
    return hold_with(db, lambda conn: _TableLessor(conn, table), row_id, duration=duration,
                     wait_seconds=wait_seconds, what=what)


@asynccontextmanager
async def hold_with(db: Connections, lessor: Callable[[Any], Lessor], row_id: object, *, duration: timedelta,
                    wait_seconds: float, what: str) -> AsyncIterator[str]:
    """`hold` over `lessor(handle)`, made on each of the short transactions that take and release the lease."""
    deadline = time.monotonic() + wait_seconds
    pause = 0.02
    while True:
        async with db.transaction() as conn:
            token = await lessor(conn).take_lease(row_id, duration)
        if token is not None:
            break
        if time.monotonic() >= deadline:
            raise ServiceError("conflict", f"{what} is being changed by another request; retry shortly")
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)
    try:
        yield token
    finally:
        async with db.transaction() as conn:
            await lessor(conn).release_lease(row_id, token)
