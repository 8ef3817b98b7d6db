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

One event NATS never takes while it takes the others (a type the service's NATS user may not publish, a subject no
stream stores) would hold every later event of the service behind it, the relay publishing in order: once it has
been refused alone on `poison_after` passes (OUTBOX_POISON_AFTER; `poisoned`), the relay stores it as a dead letter
(core.deadletters, consumer `outbox-<schema>`, with the error NATS gave), marks its row published with the dead
letter's sequence in its headers (DEAD_LETTER_HEADER), logs it at ERROR, counts it (switchboard.dead_letters) and
goes on. While the dead letter cannot be stored either (NATS away), the row stays where it is: nothing is dropped
without a trace. An outage, failing every event, never counts toward it.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import sqlalchemy as sa
from google.protobuf.message import Message
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from core import costs, deadletters, events, metrics, registry, telemetry
from core.background import Background
from core.bus import STREAM, EventBus, Outgoing, subject_for
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


# Added to the headers of a row the relay set aside as a dead letter (marked published without having reached
# EVENTS): its sequence on DEADLETTERS (`python -m core.deadletters show <it>`).
DEAD_LETTER_HEADER = "Sb-Dead-Letter"


@dataclass(frozen=True)
class HeadFailures:
    """The outbox row the relay's passes stopped at (None: the last one stopped at none), and on how many of them
    NATS refused it while acknowledging events after it in the batch."""

    row: int | None = None
    passes: int = 0


def counted(previous: HeadFailures, stopped_at: int | None, others_taken: bool) -> HeadFailures:
    """The count after a pass that reached NATS: `stopped_at`, the row it stopped at (None when it published all it
    read); `others_taken`, whether NATS acknowledged some event after that row. Only a refusal of the row alone
    counts: a pass on which it failed with all after it (JetStream unavailable, a full stream refusing new
    messages, or the row the last one read) leaves the count as it was, and another row at the head starts it
    again. A pass that reached no NATS (disconnected) is not counted at all: the caller keeps the count."""
    if stopped_at is None:
        return HeadFailures()
    if stopped_at != previous.row:
        previous = HeadFailures(stopped_at)
    return HeadFailures(stopped_at, previous.passes + 1) if others_taken else previous


def poisoned(failures: HeadFailures, others_taken: bool, after: int) -> bool:
    """Whether the row at the head is poison, to be set aside as a dead letter: refused alone on this pass
    (`others_taken`) and on `after` passes in all (OUTBOX_POISON_AFTER)."""
    return failures.row is not None and others_taken and failures.passes >= after


class OutboxRelay(Background):
    task_name = "outbox-relay"

    def __init__(self, engine: AsyncEngine, table: sa.Table, bus: EventBus, *, listen_url: str = "", batch: int = 500,
                 idle_seconds: float = 0.5, poison_after: int = 5):
        """`listen_url`: where the LISTEN connection goes, a session of its own (settings.direct_database: never
        through a transaction pooler, which would drop it between transactions); the engine's URL by default.
        `poison_after`: OUTBOX_POISON_AFTER (`poisoned`)."""
        self.engine = engine
        self.listen_url = raw_url(listen_url or self.engine.url)
        self.table = table
        self.bus = bus
        self.batch = batch
        self.idle_seconds = idle_seconds
        self.poison_after = poison_after
        self.consumer = registry.relay_consumer(str(table.schema))  # the name its dead letters go under
        self.failures = HeadFailures()
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
        acknowledged; returns how many rows it marked. Raises ConnectionError when some could not be published:
        they stay pending, and the next try starts with them; unless the first of them is poison (`poisoned`):
        stored as a dead letter, its row is marked too (counted in the return) and the next pass goes on."""
        t = self.table
        async with self.engine.begin() as conn:
            rows = (
                await conn.execute(
                    sa.select(t).where(t.c.published_at.is_(None)).order_by(t.c.id).limit(self.batch).with_for_update(skip_locked=True)
                )
            ).all()
            if not rows:
                self.failures = HeadFailures()
                return 0
            outgoing = [Outgoing(row.type, json.dumps(events.Envelope(str(row.event_id), row.type, row.occurred_at,
                                                                      row.business_id and str(row.business_id),
                                                                      row.data).to_json()).encode(),
                                 str(row.event_id), dict(row.headers or {}))
                        for row in rows]
            acknowledged = await self.bus.publish_batch(outgoing)
            published = acknowledged.in_order
            if published:
                await conn.execute(t.update().where(t.c.id.in_([row.id for row in rows[:published]]))
                                   .values(published_at=utcnow()))
            head = rows[published] if published < len(rows) else None
            others_taken = acknowledged.later > 0
            self.failures = counted(self.failures, None if head is None else head.id, others_taken)
            if (head is not None and poisoned(self.failures, others_taken, self.poison_after)
                    and await self._set_aside(conn, head.id, outgoing[published], acknowledged.refusal)):
                self.failures = HeadFailures()
                self._wake.set()  # the rest at once
                return published + 1
        if published < len(rows):
            raise ConnectionError(f"event bus unavailable: {len(rows) - published} of {len(rows)} events wait "
                                  f"({acknowledged.refusal})")
        return published

    async def _set_aside(self, conn: AsyncConnection, row_id: int, event: Outgoing,
                         refusal: BaseException | None) -> bool:
        """Store the poison event as a dead letter on DEADLETTERS, then mark its row published (in the pass's
        transaction) with the dead letter's sequence in its headers; False, the row left pending, when the dead
        letter could not be stored (NATS away: tried again on a later pass)."""
        letter = deadletters.DeadLetter(
            stream=STREAM, consumer=self.consumer, subject=subject_for(event.event_type), sequence=row_id,
            deliveries=self.failures.passes, error_type=type(refusal).__name__ if refusal is not None else "",
            error=deadletters.truncated(str(refusal) if refusal is not None else "not acknowledged"),
            at=utcnow().isoformat(), payload=event.body, headers={**event.headers, "Nats-Msg-Id": event.event_id})
        js = self.bus.js
        try:
            if js is None:
                raise ConnectionError("not connected to NATS")
            await self.bus.ensure_stream(registry.DEADLETTER_STREAM)
            sequence = await deadletters.store(js, letter, self.bus.publish_timeout)
        except Exception as exc:  # noqa: BLE001 - the row stays, tried again; never dropped
            log.error("outbox relay: could not store %s %s (outbox row %s), refused on %d passes, as a dead letter "
                      "(%s); it stays and holds the events after it", event.event_type, event.event_id, row_id,
                      letter.deliveries, exc)
            return False
        t = self.table
        await conn.execute(t.update().where(t.c.id == row_id).values(
            published_at=utcnow(), headers={**event.headers, DEAD_LETTER_HEADER: str(sequence)}))
        log.error("outbox relay: %s %s (outbox row %s) refused on %d passes while NATS took the events after it: "
                  "%s: %s; stored on %s as dead letter %d, its row marked published, the events after it go on",
                  event.event_type, event.event_id, row_id, letter.deliveries, letter.error_type or "refused",
                  letter.error, letter.dead_subject, sequence)
        instruments = metrics.current()
        if instruments is not None:
            instruments.dead_letters.add(1, {"stream": STREAM, "consumer": self.consumer})
        return True

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
