"""Retention of the platform's own records: what is past its time is deleted, a batch at a time.

The records bounded here are the platform's bookkeeping, not the businesses' data: published outbox rows, inbox
ids past the dedup window, the webhooks' finished deliveries and their attempts, the usage log's request entries
(settings: RETENTION_*). Each service's process runs one `RetentionSweep` over its schema's rules (core.grpc_server
adds the outbox's and inbox's; a service adds its own with `Runtime.retain`).

Any number of replicas run it: each batch claims its rows (FOR UPDATE SKIP LOCKED) in the one statement that
deletes them, so each row is deleted once, and a transaction holds at most `batch` row locks for one indexed
statement: never a lock on the table beyond the ordinary ROW EXCLUSIVE its writers take too.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement

from core import metrics
from core.background import Periodic
from core.ids import utcnow

log = logging.getLogger(__name__)

# Rows one transaction deletes at most, and how often the sweep looks when nothing was due.
BATCH = 1000
INTERVAL_SECONDS = 300.0

# Deletes up to `limit` rows older than `cutoff` in the caller's transaction; how many.
Delete = Callable[[AsyncConnection, datetime, int], Awaitable[int]]


@dataclass(frozen=True)
class Rule:
    """What one table keeps: rows past `keep` go, as `delete` selects them."""
    name: str  # schema.table, as logged and counted
    keep: timedelta
    delete: Delete


class _ArrayOf(ColumnElement[Any]):
    """`ARRAY(subquery)`: the subquery's rows as one array, computed once before the statement reads the table."""
    inherit_cache = True

    def __init__(self, select: sa.Select[Any]):
        self.select = select


@compiles(_ArrayOf)
def _array_of(element: _ArrayOf, compiler: SQLCompiler, **kw: Any) -> str:
    return f"ARRAY({compiler.process(element.select, **kw)})"


def claimed(table: sa.Table, due: sa.ColumnElement[bool], limit: int) -> sa.Delete:
    """DELETE of up to `limit` rows of `table` matching `due`, claimed with SKIP LOCKED (a row another sweep or
    writer holds is left for a later batch). `ctid = ANY(ARRAY(...))`: the rows are chosen first (through the index
    that `due` matches) and then deleted where they lie (a TID scan), whatever the table's key; `key IN (...)` would
    let the planner join against a scan of the whole table. A row's ctid cannot change while this transaction
    holds its lock."""
    ctid: ColumnElement[Any] = sa.literal_column("ctid")
    chosen = (sa.select(ctid).select_from(table).where(due).limit(limit).with_for_update(skip_locked=True)
              .correlate(None))  # its own scan of the table, not the DELETE's row
    return table.delete().where(ctid == sa.func.any(_ArrayOf(chosen)))


def older_than(table: sa.Table, column: sa.Column[datetime], *also: sa.ColumnElement[bool]) -> Delete:
    """Rows whose `column` is before the cutoff (and that match `also`)."""
    async def delete(conn: AsyncConnection, cutoff: datetime, limit: int) -> int:
        return (await conn.execute(claimed(table, sa.and_(column < cutoff, *also), limit))).rowcount
    return delete


def published_outbox(outbox: sa.Table, keep: timedelta) -> Rule:
    """Outbox rows published longer ago than `keep`; a row not yet published stays, however old (core.outbox)."""
    return Rule(f"{outbox.schema}.outbox", keep, older_than(outbox, outbox.c.published_at))


def inbox_ids(inbox: sa.Table, keep: timedelta) -> Rule:
    """Consumers' dedup ids (core.inbox) older than `keep`, which must outlast any redelivery: the EVENTS stream's
    max_age (settings: RETENTION_INBOX_DAYS is checked against it)."""
    return Rule(f"{inbox.schema}.inbox", keep, older_than(inbox, inbox.c.processed_at))


class RetentionSweep(Periodic):
    """Each round deletes one batch per rule, each in its own short transaction; a full batch runs the next round
    at once."""

    task_name = "retention-sweep"

    def __init__(self, engine: AsyncEngine, rules: list[Rule], *, interval: float = INTERVAL_SECONDS,
                 batch: int = BATCH):
        self.engine, self.rules, self.interval, self.batch = engine, rules, interval, batch

    async def round(self) -> bool:
        deleted = await self.sweep()
        return any(n == self.batch for n in deleted.values())

    async def sweep(self) -> dict[str, int]:
        """One batch of each rule; how many rows each deleted."""
        deleted = {}
        for rule in self.rules:
            async with self.engine.begin() as conn:
                deleted[rule.name] = await rule.delete(conn, utcnow() - rule.keep, self.batch)
            if deleted[rule.name]:
                log.info("retention: %d rows of %s older than %s deleted", deleted[rule.name], rule.name, rule.keep)
                instruments = metrics.current()
                if instruments is not None:
                    instruments.retention_deleted.add(deleted[rule.name], {"table": rule.name})
        return deleted
