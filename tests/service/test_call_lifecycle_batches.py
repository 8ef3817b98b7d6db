"""The calls service's consumer of stored provider messages (Lifecycle.apply_stored) on the real database: a
fetched batch moves each call in stream order, writes it once and emits its events in order, whatever mix of
calls, repeats and strangers the batch holds."""
import uuid

import pytest

from core.bus import PermanentError
from core.ids import utcnow
from services.calls import schema, store
from services.calls.lifecycle_service import Lifecycle
from services.calls.repository import calls_units
from tests.service.conftest import vapi_port


@pytest.fixture
def lifecycle(cfg, database):
    return Lifecycle(calls_units(database), vapi_port(cfg))  # reads the messages: no request to the provider


async def new_call(engine, provider_call_id: str | None, status: str = "queued"):
    now = utcnow()
    async with engine.begin() as conn:
        return await store.insert_call(
            conn, id=str(uuid.uuid4()), business_id=str(uuid.uuid4()), agent_id=str(uuid.uuid4()),
            direction="outbound", status=status, to_number="+14155550100", max_duration=600, compliance="skip",
            variables={}, provider_call_id=provider_call_id, created_at=now, updated_at=now)


def ref(row, our_id: str | None = None, provider_id: str | None = None) -> dict:
    call = {"id": provider_id or row.provider_call_id}
    if our_id:
        call["assistantOverrides"] = {"metadata": {"switchboard_call_id": our_id}}
    return call


def status(call: dict, value: str) -> dict:
    return {"message": {"type": "status-update", "status": value, "call": call}}


def report(call: dict, reason: str) -> dict:
    return {"message": {"type": "end-of-call-report", "call": call, "endedReason": reason, "cost": 0.05,
                        "startedAt": "2026-11-23T10:00:00Z", "endedAt": "2026-11-23T10:01:00Z",
                        "analysis": {"summary": f"ended: {reason}"}}}


async def reread(engine, call_id):
    async with engine.connect() as conn:
        return (await conn.execute(schema.calls.select().where(schema.calls.c.id == call_id))).first()


async def events_of(engine, *rows) -> dict[str, list[str]]:
    """Each call's events in outbox order."""
    ids = [str(r.id) for r in rows]
    async with engine.connect() as conn:
        found = (await conn.execute(schema.outbox.select().where(schema.outbox.c.data["call_id"].astext.in_(ids))
                                    .order_by(schema.outbox.c.id))).all()
    return {i: [e.type for e in found if e.data["call_id"] == i] for i in ids}


async def test_a_batch_moves_each_call_in_order_once(lifecycle, engine):
    talked = await new_call(engine, f"pc-{uuid.uuid4()}")
    unanswered = await new_call(engine, f"pc-{uuid.uuid4()}", status="ringing")
    early = await new_call(engine, None)  # the provider's messages came before its reply to our request
    talked_ref = ref(talked, our_id=str(talked.id))
    # Only our id finds this call, spelled as any client may spell a UUID.
    early_ref = ref(early, our_id=str(early.id).upper(), provider_id=f"pc-{uuid.uuid4()}")
    await lifecycle.apply_stored([
        status(talked_ref, "ringing"), status(talked_ref, "in-progress"), status(early_ref, "in-progress"),
        report(ref(unanswered), "customer-did-not-answer"),
        report({"id": f"pc-not-ours-{uuid.uuid4()}"}, "customer-ended-call"),
        report(talked_ref, "customer-ended-call"),
        report(talked_ref, "silence-timed-out"),  # a repeat of the report: applied once
        status(talked_ref, "ringing"),  # late: would move the call backwards
    ])
    after = await reread(engine, talked.id)
    assert (after.status, after.answered, after.ended_reason, after.duration, after.cost_cents) == (
        "completed", True, "customer-ended-call", 60, 5)
    assert after.reported_at is not None and after.summary == "ended: customer-ended-call"
    assert (await reread(engine, unanswered.id)).status == "no-answer"
    moved_early = await reread(engine, early.id)
    assert (moved_early.status, moved_early.provider_call_id) == ("in-progress", early_ref["id"])
    assert await events_of(engine, talked, unanswered, early) == {
        str(talked.id): ["call.started", "call.completed"], str(unanswered.id): ["call.failed"],
        str(early.id): ["call.started"]}

    # The same batch again (a redelivery) changes nothing and emits nothing.
    await lifecycle.apply_stored([report(talked_ref, "customer-ended-call"), status(early_ref, "in-progress")])
    assert (await reread(engine, talked.id)).updated_at == after.updated_at
    assert (await events_of(engine, talked, early))[str(early.id)] == ["call.started"]


async def test_a_report_before_its_status_updates_is_the_outcome(lifecycle, engine):
    row = await new_call(engine, f"pc-{uuid.uuid4()}")
    call = ref(row, our_id=str(row.id))
    await lifecycle.apply_stored([report(call, "customer-ended-call"), status(call, "in-progress"),
                                  status(call, "ringing")])
    assert (await reread(engine, row.id)).status == "completed"
    assert (await events_of(engine, row))[str(row.id)] == ["call.started", "call.completed"]


async def test_a_stored_message_that_is_not_one_is_refused_for_good(lifecycle):
    with pytest.raises(PermanentError):
        await lifecycle.apply_stored([{"message": {"type": "status-update"}}])  # names no call
    with pytest.raises(PermanentError):
        await lifecycle.apply_stored([{"not": "a message"}])
