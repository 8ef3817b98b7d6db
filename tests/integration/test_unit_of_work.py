"""The unit of work (core.uow) on the stack's PostgreSQL: it commits or rolls back, wakes the relay only after a
commit that added events, and refuses a provider call while it holds a connection."""
import pytest
import sqlalchemy as sa

from core.outbox import events_buffered, record_event
from core.uow import Database
from tests.storage_contracts import UnitOfWorkContract


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


class TestDatabase(UnitOfWorkContract):
    """The provider-call guard (tests/storage_contracts.py), on this module's `database`."""
