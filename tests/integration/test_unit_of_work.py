"""The unit of work (core.uow) on the stack's PostgreSQL: it commits or rolls back, wakes the relay only after a
commit that added events, and refuses a provider call while it holds a connection."""
import asyncio
import logging

import pytest
import sqlalchemy as sa

from core import uow
from core.outbox import events_buffered, record_event
from core.uow import Database, ProviderCallInTransaction
from providers.voice.client import VapiClient


@pytest.fixture
def woken():
    return []


@pytest.fixture
def database(scratch, woken) -> Database:
    engine = scratch[0]
    return Database(engine, wake=lambda: woken.append(True))


async def count(database: Database, outbox) -> int:
    async with database.read() as conn:
        return await conn.scalar(sa.select(sa.func.count()).select_from(outbox))


async def test_a_commit_that_added_events_wakes_the_relay_and_one_without_does_not(scratch, database, woken):
    outbox = scratch[2]
    async with database.transaction() as conn:
        await conn.execute(sa.select(1))
    assert woken == []
    async with database.transaction() as conn:
        await record_event(conn, outbox, "test.one", None, {})
        assert woken == []  # not before the commit
    assert woken == [True] and await count(database, outbox) == 1
    async with database.transaction() as conn:
        async with events_buffered(conn, outbox):
            await record_event(conn, outbox, "test.two", None, {})
    assert woken == [True, True] and await count(database, outbox) == 2


async def test_a_unit_that_raises_rolls_back_and_wakes_nobody(scratch, database, woken):
    outbox = scratch[2]
    with pytest.raises(LookupError):
        async with database.transaction() as conn:
            await record_event(conn, outbox, "test.lost", None, {})
            raise LookupError("the use case refused")
    assert woken == [] and await count(database, outbox) == 0
    async with database.transaction() as conn:  # the pooled connection does not carry the flag over
        await conn.execute(sa.select(1))
    assert woken == []


async def test_a_provider_call_inside_a_unit_of_work_fails_loudly_and_outside_it_is_sent(scratch, database):
    voice = VapiClient("http://127.0.0.1:9", "key", max_attempts=1)  # nothing listens: a sent request fails
    try:
        for unit in (database.transaction, database.read):
            async with unit() as conn:
                await conn.execute(sa.select(1))
                with pytest.raises(ProviderCallInTransaction, match="VapiClient was called while a database"):
                    await voice.get_call("call-1")
        with pytest.raises(Exception) as sent:  # outside: the request goes out (and finds nobody)
            await voice.get_call("call-1")
        assert not isinstance(sent.value, ProviderCallInTransaction)
    finally:
        await voice.close()


async def test_a_task_started_inside_a_unit_may_call_providers_once_the_unit_ended(database):
    ended = asyncio.Event()

    async def later() -> str | None:
        inside = uow.open_unit()
        await ended.wait()
        return inside, uow.open_unit()

    async with database.transaction():
        task = asyncio.create_task(later())
        await asyncio.sleep(0)
    ended.set()
    assert await task == ("transaction", None)


async def test_production_logs_a_provider_call_in_a_unit_instead_of_failing_the_request(database, caplog):
    uow.configure_guard(strict=False)
    try:
        async with database.read():
            with caplog.at_level(logging.ERROR, logger="core.uow"):
                uow.forbid_provider_call("the payments provider")
    finally:
        uow.configure_guard(strict=True)
    assert "the payments provider was called while a database read is open" in caplog.text
