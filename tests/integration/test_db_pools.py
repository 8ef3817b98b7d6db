"""The process's pools (core.db) replace a connection the server closed before it serves a request, at no round
trip: a backend ended by the server (as a PostgreSQL restart ends them all) costs the next request nothing."""
import asyncio

import asyncpg
import sqlalchemy as sa

from core import db


async def _end_backend(stack, pid: int) -> None:
    """End one server process as PostgreSQL's shutdown does (the client is told and its socket closed), and give
    the client's event loop the moment it takes to read the close."""
    admin = await asyncpg.connect(stack.database_url)
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
    await asyncio.sleep(0.3)


async def test_the_engine_replaces_a_connection_the_server_closed_on_checkout(stack):
    engine = db.create_engine(stack.database_url, pool_size=1, max_overflow=0)
    try:
        async with engine.connect() as conn:
            first = await conn.scalar(sa.select(sa.func.pg_backend_pid()))
        await _end_backend(stack, first)
        async with engine.connect() as conn:  # the same pooled connection, dead: replaced, not failed
            second = await conn.scalar(sa.select(sa.func.pg_backend_pid()))
        assert second != first
    finally:
        await engine.dispose()


async def test_the_raw_pool_replaces_a_connection_the_server_closed_on_acquire(stack):
    pool = await db.create_pool(stack.database_url, size=1)
    try:
        first = await pool.fetchval("SELECT pg_backend_pid()")
        await _end_backend(stack, first)
        assert await pool.fetchval("SELECT pg_backend_pid()") != first
    finally:
        await pool.close()


async def test_without_the_statement_caches_every_statement_is_still_answered(stack):
    """DATABASE_STATEMENT_CACHE=false (behind a pooler that cannot keep prepared statements): the same statements,
    with parameters, run again and again on both pools, none left prepared by name on the server by the raw pool."""
    engine = db.create_engine(stack.database_url, pool_size=1, max_overflow=0, statement_cache=False)
    pool = await db.create_pool(stack.database_url, size=1, statement_cache=False)
    try:
        for n in range(3):
            async with engine.connect() as conn:
                assert await conn.scalar(sa.select(sa.literal(n) + 1)) == n + 1
            assert await pool.fetchval("SELECT $1::int + 1", n) == n + 1
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM pg_prepared_statements") == 0
    finally:
        await pool.close()
        await engine.dispose()

