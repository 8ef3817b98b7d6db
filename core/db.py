"""Database engine factory. Nothing connects at import time. SQL spans are OpenTelemetry's asyncpg
instrumentation's (core.telemetry), for the engine's statements and the raw pool's alike."""
from __future__ import annotations

import json
import uuid
from typing import Any, cast

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from core import costs, metrics


def async_url(database_url: str) -> str:
    """`postgresql://...` as given by users, with the asyncpg driver SQLAlchemy needs."""
    url = make_url(database_url)
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def raw_url(database_url: str | URL) -> str:
    """A URL (even one with SQLAlchemy's driver name) as asyncpg takes it."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


def create_engine(database_url: str, *, pool_size: int = 5, max_overflow: int = 3, statement_cache: bool = True,
                  application_name: str = "switchboard") -> AsyncEngine:
    """The process's SQLAlchemy engine: at most `pool_size` + `max_overflow` connections (settings.database_pool).
    A connection the server closed (a PostgreSQL restart) is replaced when checked out (`_replace_closed`), so it
    fails no request. `statement_cache=False` turns both drivers' prepared-statement caches off, for a transaction
    pooler that cannot keep prepared statements (settings.database_statement_cache)."""
    no_cache: dict[str, Any] = {} if statement_cache else {
        "statement_cache_size": 0, "prepared_statement_cache_size": 0,
        # unnamed statements cannot be used (the dialect prepares by name): unique names, which no other client of
        # the pooler's server connection can have used (SQLAlchemy's asyncpg dialect, "Prepared Statement Name")
        "prepared_statement_name_func": lambda: f"__asyncpg_{uuid.uuid4()}__"}
    engine = create_async_engine(
        async_url(database_url),
        pool_size=pool_size,
        max_overflow=max_overflow,
        # no pool_pre_ping: the asyncpg dialect's ping is BEGIN, ";" and ROLLBACK on every checkout, three round
        # trips no cost budget counts; `_replace_closed` catches the restart it would, for none
        connect_args={"server_settings": {"application_name": application_name}, **no_cache},
    )
    sa.event.listen(engine.sync_engine.pool, "checkout", _replace_closed)
    if costs.enabled:
        costs.instrument_engine(engine)
    metrics.instrument_engine(engine)  # each statement timed, when metrics are on
    return engine


def _replace_closed(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """On checkout: a connection whose server closed it (PostgreSQL restarted, or ended the backend) is replaced
    before use; SQLAlchemy retries the checkout with a new one (its "pessimistic disconnect handling" by event).
    asyncpg sees the server's close on the event loop, so this costs no round trip; asyncpg's own pool does the
    same on acquire."""
    if dbapi_connection.driver_connection.is_closed():
        raise DisconnectionError("the server closed this connection")


async def lock_until_commit(conn: AsyncConnection, namespace: str, key: str) -> None:
    """Hold a transaction-level advisory lock on `key` until the transaction ends. The namespace keeps locks of
    different purposes apart (every service's schema is in one database, where advisory locks are shared); the
    64-bit hash makes two keys sharing a lock unlikely."""
    await conn.execute(sa.select(sa.func.pg_advisory_xact_lock(
        sa.func.hashtextextended(sa.literal(f"{namespace}:{key}"), 0))))


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    if costs.enabled:
        costs.instrument_connection(conn)
    metrics.instrument_connection(conn)


async def create_pool(database_url: str, *, size: int = 5, statement_cache: bool = True,
                      application_name: str = "switchboard") -> asyncpg.Pool:
    """A raw asyncpg pool for `Prepared` hot-path reads (JSON columns decoded like SQLAlchemy does). Its acquire
    replaces a connection the server closed (asyncpg's Pool: `is_closed()`), as the engine's checkout does."""
    url = raw_url(database_url)
    # min_size=0: a service starts (and reports not-ready) while its database is down.
    # No idle-connection timer: asyncpg would re-arm it on every release.
    return await asyncpg.create_pool(url, min_size=0, max_size=size, init=_init_connection, reset=_keep_session,
                                     max_inactive_connection_lifetime=0,
                                     statement_cache_size=100 if statement_cache else 0,
                                     server_settings={"application_name": application_name})


async def _keep_session(conn: asyncpg.Connection) -> None:
    """This pool only runs single statements (`Prepared`), which leave no session state behind,
    so the default RESET ALL / UNLISTEN / CLOSE ALL round trip on every release is skipped.
    (asyncpg still rolls back any open transaction before calling this.)"""


class Prepared:
    """A SQLAlchemy Core statement compiled once to asyncpg SQL and run on the raw pool.

    For reads on the request hot path: it skips SQLAlchemy's per-execution work
    (greenlet hop, cache-key building, result processing, BEGIN/ROLLBACK around a
    read), while the query is still written against the same Table objects.
    Bind parameters are named with `sa.bindparam("name")`.
    """

    _dialect = asyncpg_dialect.dialect()  # type: ignore[no-untyped-call]  # SQLAlchemy leaves it unannotated

    def __init__(self, statement: ClauseElement) -> None:
        # a statement (not DDL) compiles with the dialect's SQL compiler, which has the positional names
        compiled = cast(SQLCompiler, statement.compile(dialect=self._dialect))
        self.sql = compiled.string
        self.params = tuple(compiled.positiontup or ())

    def _args(self, values: dict[str, Any]) -> list[Any]:
        return [values[name] for name in self.params]

    async def fetchrow(self, pool: asyncpg.Pool | asyncpg.Connection, **values: Any) -> asyncpg.Record | None:
        row: asyncpg.Record | None = await pool.fetchrow(self.sql, *self._args(values))
        return row

    async def fetch(self, pool: asyncpg.Pool | asyncpg.Connection, **values: Any) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await pool.fetch(self.sql, *self._args(values))
        return rows
