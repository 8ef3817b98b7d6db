"""core.uow.UnitOfWork: a use case's unit yields its repositories, and the events it raises reach the outbox when,
and only when, the unit commits."""
import pytest

from core.ids import new_id
from core.uow import Unit, UnitOfWork
from services.sdr.schema import outbox
from switchboard.v1 import events_pb2
from tests.memory import MemoryDatabase


class Notes(Unit):
    """A unit with one repository: the handle it was built on."""

    def __init__(self, handle):
        super().__init__()
        self.handle = handle


def lead_created(lead_id: str) -> events_pb2.LeadCreated:
    return events_pb2.LeadCreated(id=lead_id, source="api")


async def test_raised_events_are_written_at_commit_in_order():
    database = MemoryDatabase()
    uow = UnitOfWork(database, Notes, events=outbox)
    business_id, first, second = new_id(), new_id(), new_id()
    async with uow.transaction() as work:
        assert work.handle is not None
        work.emit(lead_created(first), business_id)
        work.emit(lead_created(second), business_id)
        assert database.events == []  # nothing before the commit
    assert [(e["type"], e["data"]["id"], e["business_id"]) for e in database.events] == [
        ("lead.created", first, business_id), ("lead.created", second, business_id)]


async def test_a_unit_that_raises_publishes_nothing():
    database = MemoryDatabase()
    uow = UnitOfWork(database, Notes, events=outbox)
    with pytest.raises(RuntimeError, match="refused"):
        async with uow.transaction() as work:
            work.emit(lead_created(new_id()), new_id())
            raise RuntimeError("refused")
    assert database.events == []


async def test_a_read_raises_no_events_and_a_service_without_an_outbox_none():
    database = MemoryDatabase()
    async with UnitOfWork(database, Notes, events=outbox).read() as work:
        with pytest.raises(RuntimeError, match="a read raises no events"):
            work.emit(lead_created(new_id()), new_id())
    with pytest.raises(RuntimeError, match="no outbox"):
        async with UnitOfWork(database, Notes).transaction() as work:
            work.emit(lead_created(new_id()), new_id())
    assert database.events == []
