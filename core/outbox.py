"""Transactional outbox: events written with the change, relayed to JetStream.

`add_event` inserts into the service's own `outbox` table inside the caller's
transaction, so an event exists if and only if the change committed. `OutboxRelay`
publishes pending rows in order with `Nats-Msg-Id = event_id` (JetStream drops
duplicates inside its window), a batch at a time with the acknowledgements awaited
together, and marks them published. If NATS is down, rows wait and the relay retries
with backoff; nothing is lost. Several relay replicas may run: `FOR UPDATE SKIP LOCKED`
gives each batch to one of them.

The relay wakes when a commit adds rows: the outbox's trigger (created with the table,
`outbox_table`) NOTIFYs `channel(schema)`, which the relay LISTENs on, so it hears
of commits made by any replica or tool; `wake()` does the same within the process, and
a poll every `idle_seconds` covers a lost listening connection.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import sqlalchemy as sa
from google.protobuf.message import Message
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from core import costs, events, registry, telemetry
from core.background import Background
from core.bus import EventBus, Outgoing
from core.columns import Ts, Uuid
from core.db import raw_url
from core.ddl import created_with
from core.ids import new_id, utcnow

log = logging.getLogger(__name__)


def outbox_table(metadata: sa.MetaData, schema: str) -> sa.Table:
    """The schema's outbox; created with the trigger that wakes the relays on commit (`notify_trigger`)."""
    table = sa.Table(
        "outbox",
        metadata,
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("event_id", Uuid, nullable=False, unique=True),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("business_id", Uuid),
        sa.Column("occurred_at", Ts, nullable=False),
        sa.Column("data", JSONB, nullable=False),
        sa.Column("headers", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("published_at", Ts),
        sa.Index("outbox_pending", "id", postgresql_where=sa.text("published_at IS NULL")),
        # the retention sweep's scan (core.retention.published_outbox)
        sa.Index("outbox_published", "published_at", postgresql_where=sa.text("published_at IS NOT NULL")),
        schema=schema,
    )
    created_with(table, *notify_trigger(schema))
    return table


async def add_event(conn: AsyncConnection, table: sa.Table, payload: Message, business_id: str | None) -> str:
    """Record an event (its type follows from the payload message, core.events) in the same transaction as the
    change; returns its event_id. The service (the outbox's schema) must declare the type (core.registry.BUS): its
    relay's NATS user may publish only those."""
    event_type = events.type_of(payload)
    if not registry.may_publish_event(str(table.schema), event_type):
        raise LookupError(f"{table.schema} does not declare that it publishes {event_type} (core.registry.BUS): its "
                          "NATS user would not be let through")
    return await record_event(conn, table, event_type, business_id, events.to_data(payload))


async def record_event(conn: AsyncConnection, table: sa.Table, type_: str, business_id: str | None,
                       data: dict[str, Any]) -> str:
    """The outbox row itself, for any type and data (producers use add_event)."""
    row = _row(type_, business_id, data)
    conn.info[EVENTS_ADDED] = True  # the unit of work wakes the relay once it commits (core.uow)
    buffered = conn.info.get(_BUFFER)
    if buffered is not None and buffered[0] is table:
        buffered[1].append(row)
    else:
        await conn.execute(_insert(table), row)
    event_id: str = row["event_id"]
    return event_id


_BUFFER = "outbox_buffer"
# Set on a connection's info when an event is recorded in its transaction: core.uow wakes the relay after the commit.
EVENTS_ADDED = "events_added"


@functools.cache
def _insert(table: sa.Table) -> sa.Insert:
    """The outbox's insert, built once per table and run with each row's values (its compiled form and cache key
    are then reused: an event is written on every change)."""
    return table.insert()


@contextlib.asynccontextmanager
async def events_buffered(conn: AsyncConnection, table: sa.Table) -> AsyncIterator[None]:
    """Within the block, the events added to `table` on this connection are kept and inserted together, in order,
    with one statement when the block ends (and dropped if it raises): for a consumer that applies a batch of
    events in one transaction through use cases that each add their own."""
    rows: list[dict[str, Any]] = []
    conn.info[_BUFFER] = (table, rows)
    try:
        yield
    finally:
        del conn.info[_BUFFER]
    if rows:
        await conn.execute(_insert(table), rows)


def _row(type_: str, business_id: str | None, data: dict[str, Any]) -> dict[str, Any]:
    return {"event_id": new_id(), "type": type_, "business_id": business_id, "occurred_at": utcnow(), "data": data,
            "headers": telemetry.inject(costs.carried())}


def channel(schema: str) -> str:
    """The NOTIFY channel of a schema's outbox."""
    return f"{schema}_outbox"


def notify_trigger(schema: str) -> list[str]:
    """The statements that make a commit adding rows to the schema's outbox NOTIFY `channel(schema)` (once per
    statement, and PostgreSQL folds a transaction's notifications into one); run by each service's migration."""
    return [f'''CREATE FUNCTION "{schema}".outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_notify('{channel(schema)}', ''); RETURN NULL; END $$''',
            f'''CREATE TRIGGER outbox_notify AFTER INSERT ON "{schema}".outbox
                FOR EACH STATEMENT EXECUTE FUNCTION "{schema}".outbox_notify()''']


async def pending_age(engine: AsyncEngine, table: sa.Table) -> float:
    """Seconds since the oldest event still waiting to be relayed occurred, 0 when none waits: a metrics probe
    (core.metrics.Sampler), one indexed read (the `outbox_pending` index) every few seconds."""
    t = table
    async with engine.connect() as conn:
        oldest = (await conn.execute(sa.select(t.c.occurred_at).where(t.c.published_at.is_(None))
                                     .order_by(t.c.id).limit(1))).scalar()
    return 0.0 if oldest is None else max(0.0, (utcnow() - oldest).total_seconds())


class OutboxRelay(Background):
    task_name = "outbox-relay"

    def __init__(self, engine: AsyncEngine, table: sa.Table, bus: EventBus, *, listen_url: str = "", batch: int = 500,
                 idle_seconds: float = 0.5):
        """`listen_url`: where the LISTEN connection goes, a session of its own (settings.direct_database: never
        through a transaction pooler, which would drop it between transactions); the engine's URL by default."""
        self.engine = engine
        self.listen_url = raw_url(listen_url or self.engine.url)
        self.table = table
        self.bus = bus
        self.batch = batch
        self.idle_seconds = idle_seconds
        self._wake = asyncio.Event()
        self._listener: asyncpg.Connection | None = None
        self._listen_again_at = 0.0  # monotonic time of the next attempt after a failed one

    def wake(self) -> None:
        """Called after a commit that added events, so they go out without waiting for the poll."""
        self._wake.set()

    @property
    def listening(self) -> bool:
        """Whether the relay hears of the outbox's commits (else it only polls)."""
        return self._listener is not None and not self._listener.is_closed()

    async def _listen(self) -> None:
        """(Re)open the connection that LISTENs for the outbox's commits, if it is not open; without it the relay
        polls."""
        if self.listening or time.monotonic() < self._listen_again_at:
            return
        listener = None
        try:
            listener = await asyncpg.connect(self.listen_url, timeout=5)
            # every service's outbox is in its own schema (str() only types it)
            await listener.add_listener(channel(str(self.table.schema)), lambda *_: self._wake.set())
        except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
            log.warning("outbox relay: cannot listen for commits (%s); polling every %.1fs", exc, self.idle_seconds)
            if listener is not None:
                listener.terminate()
            self._listener, self._listen_again_at = None, time.monotonic() + 10.0
            return
        self._listener = listener

    async def stop(self) -> None:
        await super().stop()
        listener = self._listener
        if listener is not None and not listener.is_closed():  # self.listening
            await listener.close(timeout=2)

    async def publish_pending(self) -> int:
        """Publish one batch of pending events in order (acknowledgements awaited together) and mark those
        acknowledged; returns how many. Raises ConnectionError when some could not be published: they stay
        pending, and the next try starts with them."""
        t = self.table
        async with self.engine.begin() as conn:
            rows = (
                await conn.execute(
                    sa.select(t).where(t.c.published_at.is_(None)).order_by(t.c.id).limit(self.batch).with_for_update(skip_locked=True)
                )
            ).all()
            if not rows:
                return 0
            published = await self.bus.publish_in_order([
                Outgoing(row.type, json.dumps(events.Envelope(str(row.event_id), row.type, row.occurred_at,
                                                              row.business_id and str(row.business_id),
                                                              row.data).to_json()).encode(),
                         str(row.event_id), dict(row.headers or {}))
                for row in rows])
            if published:
                await conn.execute(t.update().where(t.c.id.in_([row.id for row in rows[:published]]))
                                   .values(published_at=utcnow()))
        if published < len(rows):
            raise ConnectionError(f"event bus unavailable: {len(rows) - published} of {len(rows)} events wait")
        return published

    async def run(self) -> None:
        backoff = 0.2
        while True:
            await self._listen()
            self._wake.clear()  # before reading: a commit made while this pass runs wakes the next one
            try:
                published = await self.publish_pending()
                backoff = 0.2
                if published == self.batch:
                    continue
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the relay must survive outages
                log.warning("outbox relay: %s; retrying in %.1fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.idle_seconds)
