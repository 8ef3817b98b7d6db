"""The unit of work: how a use case reaches its service's database, with the transaction rules kept by the code.

`Database.transaction()` opens one transaction and yields its connection, on which the service's store
functions run and `core.outbox.add_event` records events; it commits when the block ends (rolls back when it
raises) and, when the committed work added events, wakes the outbox relay by itself. `Database.read()` is the
same for reads (a connection in autocommit: one round trip per statement, no BEGIN/ROLLBACK around them).

While either is open, a pooled connection is held, so nothing may wait on an external provider: the providers'
clients call `forbid_provider_call()` before each request, which raises `ProviderCallInTransaction` (in
production, where a false alarm must not fail a customer's request, it logs the error instead). The rule "take a
lease, call the provider, then write" is enforced, not remembered (core.leases).

A use case reaches its storage through a `UnitOfWork` alone: `async with self.uow.transaction() as work:` yields
the service's `Unit` (its repositories as attributes, `work.emit(event, business_id)` for the events it raises,
written to the service's outbox when the block commits); `async with self.uow.read() as work:` yields the same
repositories for reads outside a transaction (emitting there is refused). A unit is built per block rather than
the unit of work being entered itself (`async with uow:` in cosmicpython), because one service object serves many
requests at once. Under it, `Connections` is `Database` in production and the tests' in-memory database
(tests/memory) in the fast tier, which opens the same guard (`holding`).
"""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from typing import Any, Generic, Protocol, TypeVar

import asyncpg
import sqlalchemy as sa
from google.protobuf.message import Message
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from core import costs, outbox
from core.outbox import EVENTS_ADDED

log = logging.getLogger(__name__)


class ProviderCallInTransaction(RuntimeError):
    """A provider was called while a unit of work held a pooled connection: a programming error."""


class _Open:
    """One open unit of work. Tasks started inside it copy the context that names it; `closed` tells them it
    ended."""

    __slots__ = ("closed", "what")

    def __init__(self, what: str):
        self.what = what
        self.closed = False


_open_units: ContextVar[tuple[_Open, ...]] = ContextVar("open_units", default=())
_strict = True


def configure_guard(*, strict: bool) -> None:
    """Strict (raise) everywhere but production, where a provider call inside a unit of work is logged."""
    global _strict
    _strict = strict


def open_unit() -> str | None:
    """What kind of unit of work this task holds open ("transaction" or "read"), or None."""
    for unit in reversed(_open_units.get()):
        if not unit.closed:
            return unit.what
    return None


def forbid_provider_call(what: str) -> None:
    """Called by every provider client before it sends a request (`what` names it)."""
    costs.count(costs.PROVIDER, what)
    held = open_unit()
    if held is None:
        return
    message = (f"{what} was called while a database {held} is open: take a lease (core.leases) or end the "
               "transaction, call the provider, then write")
    if _strict:
        raise ProviderCallInTransaction(message)
    log.error("%s", message)


@asynccontextmanager
async def holding(what: str) -> AsyncIterator[None]:
    """Marks this task as holding a unit of work (`what`: "transaction" or "read") for the block: provider calls
    are refused until it ends."""
    unit = _Open(what)
    token = _open_units.set((*_open_units.get(), unit))
    try:
        yield
    finally:
        unit.closed = True
        _open_units.reset(token)


class Connections(Protocol):
    """A service's database under its units of work: a transaction and a read, each yielding the handle its
    repositories work on (`Database`, or the fast tier's in-memory one)."""

    def transaction(self) -> AbstractAsyncContextManager[Any]: ...

    def read(self) -> AbstractAsyncContextManager[Any]: ...


class Unit:
    """One unit of work as a use case sees it. A service's subclass (in its repository module) takes the handle of
    a transaction or read and sets its repositories as attributes; `emit` collects the events the use case or its
    domain objects raise, which `UnitOfWork.transaction` writes to the outbox before it commits."""

    def __init__(self) -> None:
        self._events: list[tuple[Message, str | None]] = []
        self._reading = False

    def emit(self, event: Message, business_id: str | None) -> None:
        """Raise `event` (a core.events payload) for `business_id`: published once the unit commits, never if it
        rolls back."""
        if self._reading:
            raise RuntimeError("a read raises no events: open the unit of work with transaction()")
        self._events.append((event, business_id))

    def refuse_events(self) -> None:
        """Make `emit` refuse: the unit serves a read, which has no commit to write events at."""
        self._reading = True

    def collect_new_events(self) -> list[tuple[Message, str | None]]:
        """The events raised so far, in order, and forgets them."""
        events, self._events = self._events, []
        return events


U = TypeVar("U", bound=Unit)


class UnitOfWork(Generic[U]):
    """A service's only way into its storage: `transaction()` and `read()` yield its `Unit` (`unit_on` builds one
    on a handle of `connections`); events raised in a transaction go to `events` (the service's outbox table) at
    commit."""

    def __init__(self, connections: Connections, unit_on: Callable[[Any], U], events: sa.Table | None = None):
        self.connections = connections
        self._unit_on = unit_on
        self._events = events

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[U]:
        """One unit of work: the raised events are written, then it commits; nothing of it stays when it raises."""
        async with self.connections.transaction() as handle:
            unit = self._unit_on(handle)
            yield unit
            raised = unit.collect_new_events()
            if raised:
                if self._events is None:
                    raise RuntimeError("this service has no outbox: its units of work raise no events")
                async with outbox.events_buffered(handle, self._events):  # one INSERT for all of them
                    for event, business_id in raised:
                        await outbox.add_event(handle, self._events, event, business_id)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[U]:
        """The same repositories for reads, outside a transaction (Database.read)."""
        async with self.connections.read() as handle:
            unit = self._unit_on(handle)
            unit.refuse_events()
            yield unit


class Database:
    """A service's database as its use cases reach it: units of work and reads. `wake` is called after a commit
    that added events (the outbox relay's; the outbox's NOTIFY trigger would wake it too, a round trip later).
    `pool`, the process's raw asyncpg pool, is reached by repositories alone, through `pooled()`."""

    def __init__(self, engine: AsyncEngine, wake: Callable[[], None] | None = None, pool: asyncpg.Pool | None = None):
        self.engine = engine
        self._wake = wake
        self._pool = pool
        # Reads run in autocommit: each statement is its own snapshot, as it is in a READ COMMITTED transaction,
        # without the BEGIN and ROLLBACK round trips around it.
        self._reads = engine.execution_options(isolation_level="AUTOCOMMIT")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """One unit of work: commits when the block ends, rolls back when it raises."""
        async with holding("transaction"), self.engine.begin() as conn:
            conn.info[EVENTS_ADDED] = False
            try:
                yield conn
                added = conn.info[EVENTS_ADDED]
            finally:
                conn.info.pop(EVENTS_ADDED, None)
        if added and self._wake is not None:
            self._wake()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reads, in autocommit (no transaction: writes go through `transaction()`)."""
        async with holding("read"), self._reads.connect() as conn:
            yield conn

    @asynccontextmanager
    async def pooled(self) -> AsyncIterator[asyncpg.Connection]:
        """A connection of the raw pool for a repository's hot-path statements (core.db.Prepared), as the
        pool's own fetchrow takes one: no SQLAlchemy work and no transaction around a statement. Under the same
        guard as a read: no provider call while it is held."""
        if self._pool is None:
            raise RuntimeError("this database was built without the raw pool")
        async with holding("read"), self._pool.acquire() as conn:
            yield conn
