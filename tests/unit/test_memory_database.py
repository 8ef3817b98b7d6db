"""The fast tier's unit of work (tests/memory) keeps core.uow's rules: a transaction commits or leaves nothing,
a read only reads, the provider-call guard is open while either is (tests/storage_contracts.py), events
recorded through core.outbox are collected once their transaction commits, and a use case that still runs SQL
fails."""
import asyncio

import pytest
import sqlalchemy as sa

from core.outbox import events_buffered, record_event
from services.calls.schema import calls, outbox
from tests.storage_contracts import UnitOfWorkContract


async def test_a_commit_keeps_its_rows_and_events_and_a_raise_neither(database):
    async with database.transaction() as conn:
        conn.rows(calls)[("call-1",)] = {"id": "call-1"}
        await record_event(conn, outbox, "test.one", "business-1", {"n": 1})
        assert database.events == [] and database.tables == {}  # not before the commit
    with pytest.raises(LookupError):
        async with database.transaction() as conn:
            conn.rows(calls)[("call-2",)] = {"id": "call-2"}
            await record_event(conn, outbox, "test.lost", None, {})
            raise LookupError("the use case refused")
    async with database.transaction() as conn:
        async with events_buffered(conn, outbox):
            await record_event(conn, outbox, "test.two", None, {"n": 2})
            await record_event(conn, outbox, "test.three", None, {"n": 3})
    assert list(database.tables[calls.fullname]) == [("call-1",)]
    assert [(e["type"], e["data"]) for e in database.events] == [("test.one", {"n": 1}), ("test.two", {"n": 2}),
                                                                 ("test.three", {"n": 3})]
    assert database.events[0]["business_id"] == "business-1" and len({e["event_id"] for e in database.events}) == 3


async def test_a_read_sees_what_was_committed_and_may_not_write(database):
    async with database.transaction() as conn:
        conn.rows(calls)[("call-1",)] = {"id": "call-1", "status": "queued"}
    async with database.read() as conn:
        assert conn.rows(calls)[("call-1",)]["status"] == "queued"
        assert conn.rows(outbox) == {}  # a table read and found empty is no write
    for write in (lambda conn: conn.rows(calls)[("call-1",)].update(status="failed"),
                  lambda conn: conn.rows(calls).pop(("call-1",)),
                  lambda conn: conn.rows(outbox).update({(1,): {"id": 1}})):
        with pytest.raises(RuntimeError, match="writes go through transaction"):
            async with database.read() as conn:
                write(conn)
    with pytest.raises(RuntimeError, match="writes go through transaction"):
        async with database.read() as conn:
            await record_event(conn, outbox, "test.read", None, {})
    assert database.tables[calls.fullname] == {("call-1",): {"id": "call-1", "status": "queued"}}
    assert database.events == []


async def test_sql_is_refused_for_a_repository(database):
    for unit in (database.transaction, database.read):
        async with unit() as conn:
            with pytest.raises(TypeError, match="without its repository"):
                await conn.execute(sa.select(calls))


async def test_transactions_take_turns_and_one_inside_another_of_its_task_is_refused(database):
    order = []

    async def write(name: str, pause: float) -> None:
        async with database.transaction() as conn:
            order.append(f"{name} begins")
            count = len(conn.rows(calls))
            await asyncio.sleep(pause)
            conn.rows(calls)[(name,)] = {"id": name, "seen": count}
            order.append(f"{name} ends")

    await asyncio.gather(write("first", 0.02), write("second", 0))
    assert order == ["first begins", "first ends", "second begins", "second ends"]
    assert database.tables[calls.fullname][("second",)]["seen"] == 1  # it saw the first's commit
    with pytest.raises(RuntimeError, match="inside another"):
        async with database.transaction(), database.transaction():
            pass


class TestMemoryDatabase(UnitOfWorkContract):
    """The provider-call guard, as core.uow.Database keeps it (tests/integration/test_unit_of_work.py)."""
