"""The fast tier's database: a unit of work in memory (`MemoryDatabase`, a core.uow.Connections) and the row
keeping its repositories share (tests/memory/<service>.py, each the in-memory twin of a service's
repository.py; tests/storage_contracts.py holds both to the same behaviour).

A transaction works on a copy of the committed tables and replaces them when it ends (nothing of it stays when it
raises); transactions run one at a time, and a read sees what was committed (and may not change it). Both open the provider-call guard
the way core.uow.Database does (`holding`). The handle they yield stands in for the connection: the repositories
keep their rows in it, and core.outbox records events on it (`execute` takes an outbox insert, and nothing else:
a use case that still runs SQL fails here); committed events are collected in `MemoryDatabase.events`.
"""
from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from core import leases
from core.ids import new_id, utcnow
from core.pagination import Page, Paged, decode_cursor, split_page
from core.uow import holding

Rows = dict[tuple, dict[str, Any]]  # a table's rows by primary key


class Record:
    """A row as the SQL repositories return one: its columns as attributes and in `_mapping`, a copy of the
    stored values (changing it changes nothing stored)."""

    __slots__ = ("_mapping",)

    def __init__(self, values: dict[str, Any]):
        object.__setattr__(self, "_mapping", copy.deepcopy(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._mapping[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a row is read-only")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._mapping == other._mapping

    __hash__ = None

    def __repr__(self) -> str:
        return f"Record({self._mapping!r})"


class MemoryConnection:
    """What a MemoryDatabase's transaction or read yields where core.uow.Database yields a connection."""

    def __init__(self, tables: dict[str, Rows]):
        self.tables = tables
        self.info: dict[str, Any] = {}  # core.outbox marks a recorded event here
        self.events: list[dict[str, Any]] = []

    def rows(self, table: sa.Table) -> Rows:
        """The rows of `table` (by primary key), to read and change in place."""
        return self.tables.setdefault(table.fullname, {})

    async def execute(self, statement: Any, parameters: dict[str, Any] | list[dict[str, Any]] | None = None) -> None:
        """core.outbox's insert of one event (or, buffered, of several), with its rows as parameters; any other
        statement is refused."""
        if not (isinstance(statement, sa.Insert) and statement.table.name == "outbox"):
            raise TypeError(f"the in-memory unit of work runs no SQL ({statement}): this use case reaches storage "
                            "without its repository")
        self.events.extend(copy.deepcopy(parameters if isinstance(parameters, list) else [parameters]))


class MemoryDatabase:
    """core.uow.Connections in memory; `events` are those of the committed transactions, in order."""

    def __init__(self) -> None:
        self.tables: dict[str, Rows] = {}
        self.events: list[dict[str, Any]] = []
        self._writing = asyncio.Lock()
        self._writer: asyncio.Task | None = None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[MemoryConnection]:
        if self._writer is not None and self._writer is asyncio.current_task():
            raise RuntimeError("a transaction opened inside another of the same task would wait for itself here")
        async with holding("transaction"), self._writing:
            self._writer = asyncio.current_task()
            try:
                conn = MemoryConnection(copy.deepcopy(self.tables))
                yield conn
                self.tables = conn.tables
                self.events.extend(conn.events)
            finally:
                self._writer = None

    @asynccontextmanager
    async def read(self) -> AsyncIterator[MemoryConnection]:
        """The committed tables, to read: a block that changed them or recorded an event fails (writes go through
        `transaction()`; core.uow.Database's reads run in autocommit, where they would stay)."""
        async with holding("read"):
            seen = copy.deepcopy(self.tables)
            conn = MemoryConnection(copy.deepcopy(seen))
            yield conn
            if conn.events or {k: v for k, v in conn.tables.items() if v or k in seen} != seen:
                raise RuntimeError("a read changed what it read: writes go through transaction()")


def key_of(table: sa.Table, row: dict[str, Any]) -> tuple:
    return tuple(row[column.name] for column in table.primary_key)


def _checked(table: sa.Table, values: dict[str, Any]) -> None:
    unknown = set(values) - set(table.c.keys())
    if unknown:
        raise KeyError(f"{table.fullname} has no column {', '.join(sorted(unknown))}")


def _server_default(column: sa.Column) -> Any:
    arg = column.server_default.arg
    if isinstance(arg, sa.sql.elements.False_ | sa.sql.elements.True_):
        return isinstance(arg, sa.sql.elements.True_)
    if isinstance(column.type, sa.Integer):
        return int(arg)
    if isinstance(column.type, JSONB):
        return json.loads(arg)
    if isinstance(column.type, sa.Text):
        return arg
    if isinstance(column.type, sa.DateTime) and str(arg) == "'epoch'":
        return datetime(1970, 1, 1, tzinfo=UTC)
    raise TypeError(f"no in-memory value for the server default of {column}")


def insert(rows: Rows, table: sa.Table, values: dict[str, Any]) -> dict[str, Any]:
    """Store a new row of `table`: the values given, the columns' server defaults, None elsewhere; refused as
    the database refuses it (IntegrityError) when it lacks a NOT NULL value or repeats a unique key."""
    _checked(table, values)
    row = {}
    for column in table.c:
        if column.name in values:
            row[column.name] = values[column.name]
        elif column.server_default is not None:
            row[column.name] = _server_default(column)
        else:
            row[column.name] = None
        if row[column.name] is None and not column.nullable:
            raise sa.exc.IntegrityError("INSERT (in memory)", values, ValueError(f"{column} is NOT NULL"))
    taken = _clash(rows, table, row)
    if taken is not None:
        raise sa.exc.IntegrityError("INSERT (in memory)", values, ValueError(
            f"{table.fullname} has {taken[1]} already ({taken[0]})"))
    rows[key_of(table, row)] = row
    return row


def _clash(rows: Rows, table: sa.Table, row: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The unique key (primary key or unique constraint) `row` would repeat, as its name (a named constraint's, as
    the database's error names it) and {column: value}, or None."""
    keys = [table.primary_key] + sorted((c for c in table.constraints if isinstance(c, sa.UniqueConstraint)),
                                        key=lambda c: str(c.name))  # a set: in one order, run after run
    for key in keys:
        value = {column.name: row[column.name] for column in key.columns}
        if None not in value.values() and any(all(other[n] == v for n, v in value.items())
                                               for other in rows.values()):
            return str(key.name) if key.name else f"unique ({', '.join(value)})", value
    return None


def update(table: sa.Table, row: dict[str, Any], values: dict[str, Any]) -> Record:
    """Change a stored row; the row after."""
    _checked(table, values)
    row.update(copy.deepcopy(values))
    return Record(row)


def take_lease(table: sa.Table, row: dict[str, Any] | None, duration: timedelta) -> str | None:
    """core.leases.take on a stored row (None: no row): its new token, or None while another writer holds it."""
    if row is None or (row["lease_until"] is not None and row["lease_until"] >= utcnow()):
        return None
    token = new_id()
    update(table, row, {"lease_token": token, "lease_until": utcnow() + duration})
    return token


def release_lease(table: sa.Table, row: dict[str, Any] | None, token: str) -> None:
    """core.leases.release_on on a stored row: its lease ends if it is still `token`'s."""
    if row is not None and row["lease_token"] == token:
        update(table, row, leases.RELEASED)


def page_of(rows: Iterable[dict[str, Any]], at: sa.Column, id_col: sa.Column, page: Page,
            columns: Iterable[sa.Column] | None = None) -> Paged:
    """The rows as core.pagination.fetch_page pages a query: newest first by (at, id), strictly after the page's
    cursor (or older than its `after`); of `columns` only, when given."""
    def place(row: dict[str, Any]) -> tuple:
        return row[at.name], row[id_col.name]

    if page.cursor:
        cursor = decode_cursor(page.cursor, id_col)
        rows = [row for row in rows if place(row) < cursor]
    elif page.after is not None:
        rows = [row for row in rows if row[at.name] < page.after]
    names = [c.name for c in columns] if columns is not None else None
    chosen = sorted(rows, key=place, reverse=True)[:page.limit + 1]
    return split_page([Record({n: row[n] for n in names} if names else row) for row in chosen], page.limit,
                      (at.name, id_col.name))
