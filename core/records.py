"""Reading one record of the caller's businesses: a record of another business is not found. And `record`, which
makes a repository's typed record (a frozen dataclass) of a row: repositories return those, never the driver's
rows."""
from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core import tenant
from core.errors import not_found
from core.ids import require_uuid


async def find_owned(conn: AsyncConnection, table: sa.Table, record_id: str, what: str, *, field: str = "id",
                     lock: bool = False) -> sa.Row[Any]:
    """The row of `table` (with `id` and `business_id` columns) the caller may see, or 404 `what` not found;
    `field` names the request field in the 400 for a malformed id; `lock` takes the row for update."""
    require_uuid(record_id, field)
    row = await owned(conn, table, tenant.require_account().business_ids, record_id, lock=lock)
    if row is None:
        raise not_found(what)
    return row


async def owned(conn: AsyncConnection, table: sa.Table, business_ids: Iterable[str], record_id: str, *,
                lock: bool = False) -> sa.Row[Any] | None:
    """The row of `table` with this id in one of these businesses, or None (a repository's lookup; the id is a
    checked UUID)."""
    query = sa.select(table).where(table.c.id == record_id, table.c.business_id.in_(business_ids))
    return (await conn.execute(query.with_for_update() if lock else query)).first()


R = TypeVar("R")


def record(cls: type[R], values: Mapping[Any, Any], prefix: str = "") -> R:
    """A `cls` (a record dataclass) from a row's mapping: its fields' columns (named `prefix` + field). Ids are
    strings whichever driver read them (asyncpg gives uuid.UUID, SQLAlchemy's UUID(as_uuid=False) strings)."""
    found = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # R is a dataclass by contract
        value = values[prefix + field.name]
        found[field.name] = str(value) if isinstance(value, uuid.UUID) else value
    return cls(**found)


def or_none(read: Callable[[Any], R], row: Any | None) -> R | None:
    """`read(row)`, or None for no row (a repository's lookup that found nothing)."""
    return read(row) if row is not None else None
