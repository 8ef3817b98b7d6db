"""The calls reaper as a component: on the real database and the voice simulator, with no gRPC."""
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from core.ids import utcnow
from deploy.local.servers import free_port
from providers.voice.vapi.client import VapiClient
from services.calls import reaper as reaper_module
from services.calls import schema, store
from services.calls.lifecycle_service import Lifecycle
from services.calls.reaper import NEVER_PLACED, NOT_AT_PROVIDER, Reaper
from services.calls.repository import calls_units
from tests.service.conftest import vapi_port


@pytest.fixture
async def reaper(cfg, database):
    voice = vapi_port(cfg)
    # A margin that makes calls overdue well before the stack's own reaper (margin 1 s) would take them.
    yield Reaper(calls_units(database), voice, Lifecycle(calls_units(database), voice), interval=60, margin=-550)
    await voice.close()


async def overdue_call(engine, provider_call_id: str | None, status: str = "ringing", at=None):
    at = at or utcnow() - timedelta(seconds=100)  # overdue for this reaper only
    async with engine.begin() as conn:
        return await store.insert_call(
            conn, id=str(uuid.uuid4()), business_id=str(uuid.uuid4()), agent_id=str(uuid.uuid4()), direction="outbound",
            status=status, to_number="+14155550100", max_duration=600, compliance="skip", variables={},
            provider_call_id=provider_call_id, created_at=at, updated_at=at)


async def reread(engine, call_id):
    async with engine.connect() as conn:
        return (await conn.execute(schema.calls.select().where(schema.calls.c.id == call_id))).first()


async def test_calls_the_provider_does_not_know_and_calls_never_placed_are_closed_failed(reaper, engine):
    lost = await overdue_call(engine, f"gone-{uuid.uuid4()}")
    unplaced = await overdue_call(engine, None, status="queued")
    fresh = await overdue_call(engine, None, status="queued")
    async with engine.begin() as conn:  # not overdue: created just now
        await store.update_call(conn, fresh.id, {"created_at": utcnow()})
    assert await reaper.sweep() >= 2
    for row, reason in ((lost, NOT_AT_PROVIDER), (unplaced, NEVER_PLACED)):
        closed = await reread(engine, row.id)
        assert (closed.status, closed.ended_reason) == ("failed", reason) and closed.reported_at is not None
    assert (await reread(engine, fresh.id)).status == "queued"
    async with engine.connect() as conn:
        events = (await conn.execute(schema.outbox.select().where(
            schema.outbox.c.data["call_id"].astext.in_([str(lost.id), str(unplaced.id)])))).all()
    assert sorted(e.type for e in events) == ["call.failed", "call.failed"]


async def test_a_call_no_sweep_could_close_is_counted_stuck_until_one_does(cfg, database, engine, monkeypatch):
    """Stuck: without an outcome past max_duration (600 s) plus twice the margin and an interval (870 s here), by when
    a sweep closes any call it reaches. The reaper's clock is set three years back, before every other test's calls,
    so that the count is this test's alone."""
    start = utcnow() - timedelta(days=3 * 365)
    clock = {"now": start + timedelta(seconds=800)}
    monkeypatch.setattr(reaper_module, "utcnow", lambda: clock["now"])
    unreachable = vapi_port(cfg, VapiClient(f"http://127.0.0.1:{free_port()}", "key", max_attempts=1))
    reachable = vapi_port(cfg)
    try:
        def reaper(voice):
            return Reaper(calls_units(database), voice, Lifecycle(calls_units(database), voice), interval=30,
                          margin=120)

        lost = await overdue_call(engine, f"gone-{uuid.uuid4()}", at=start)
        await overdue_call(engine, None, status="completed", at=start)  # it has its outcome
        assert await reaper(unreachable).stuck() == 0  # silent (past 720 s), but a sweep may still close it
        clock["now"] = start + timedelta(seconds=900)
        assert await reaper(unreachable).stuck() == 1
        assert await reaper(unreachable).sweep() == 1  # the provider unreachable: the call stays
        assert (await reread(engine, lost.id)).status == "ringing"
        assert await reaper(unreachable).stuck() == 1
        assert await reaper(reachable).sweep() == 1  # it answers: it does not know the call
        assert (await reread(engine, lost.id)).status == "failed"
        assert await reaper(reachable).stuck() == 0
    finally:
        await unreachable.close()
        await reachable.close()


async def test_the_stuck_count_reads_the_open_calls_index(engine):
    query = store.count_silent(utcnow(), 270.0).compile(dialect=postgresql.dialect(),
                                                       compile_kwargs={"literal_binds": True})
    async with engine.connect() as conn:
        await conn.execute(sa.text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join((await conn.execute(sa.text(f"EXPLAIN {query}"))).scalars())
    assert "calls_open" in plan and "Index Cond" in plan, plan
