"""Outbox relay and the durable consumer helper, on the stack's real PostgreSQL and NATS."""
import asyncio
import json
import uuid

import asyncpg
import nats
import pytest
import sqlalchemy as sa
from nats.js.api import DeliverPolicy

from core.bus import DurableConsumer, EventBus, Outgoing, PermanentError
from core.inbox import first_deliveries, first_delivery
from core.outbox import OutboxRelay, events_buffered, record_event
from tests.nats_admin import admin_bus, admin_connection
from tests.waiting import wait_until


async def _pending(database_url: str, business_id: str) -> list:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetch("SELECT type, published_at FROM accounts.outbox WHERE business_id = $1",
                                uuid.UUID(business_id))
    finally:
        await conn.close()


async def test_writes_succeed_while_nats_is_down_and_events_follow(api, account, stack):
    if stack.nats is None:
        pytest.skip("NATS_URL points at an external server this test cannot stop")
    bid = account["business_id"]
    port = stack.nats.port
    stack.nats.stop()
    try:
        status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=account["key"],
                                            json={"id": bid, "action": "pause"})
        assert status == 200 and body["lifecycle_state"] == "paused"
        await asyncio.sleep(1.0)  # the relay has tried and failed by now
        rows = await _pending(stack.database_url, bid)
        assert sorted((r["type"], r["published_at"]) for r in rows) == [("workspace.paused", None),
                                                                          ("workspace.standing_changed", None)]
    finally:
        stack.nats.start(port=port)
    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()
        deadline = asyncio.get_running_loop().time() + 30

        async def subscribed():
            try:
                return await js.subscribe("events.workspace.paused", ordered_consumer=True,
                                          deliver_policy=DeliverPolicy.ALL)
            except nats.js.errors.NotFoundError:
                return None
        sub = await wait_until(subscribed, "the stream EVENTS to come back (a relay reconnects)", timeout=30,
                               interval=0.2)
        while True:
            msg = await sub.next_msg(timeout=max(0.1, deadline - asyncio.get_running_loop().time()))
            event = json.loads(msg.data)
            if event["business_id"] == bid:
                break
        assert event["type"] == "workspace.paused" and event["data"]["lifecycle_state"] == "paused"
    finally:
        await nc.close()
    async def marked_published():
        rows = await _pending(stack.database_url, bid)
        return next(r for r in rows if r["type"] == "workspace.paused")["published_at"]
    # the relay marks the row after JetStream acknowledges, so a subscriber can see the event first
    await wait_until(marked_published, "the relay to mark workspace.paused published", timeout=10)
    stack.wait_ready(30)


async def test_relay_publishes_in_order_once_and_consumer_acks_naks_terms_and_dedupes(scratch):
    engine, bus, outbox, inbox = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    async with engine.begin() as conn:
        ids = [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in range(3)]
        poison = await record_event(conn, outbox, f"{kind}.poison", None, {})
    relay = OutboxRelay(engine, outbox, bus)
    assert await relay.publish_pending() == 4
    assert await relay.publish_pending() == 0
    # a second publish of the same event id is dropped by JetStream's dedup window
    assert await bus.publish_in_order([Outgoing(f"{kind}.ok", json.dumps(
        {"event_id": ids[0], "type": f"{kind}.ok", "data": {"n": 0}}).encode(), ids[0], {})]) == 1

    applied, attempts = [], {}

    async def handler(event):
        attempts[event["event_id"]] = attempts.get(event["event_id"], 0) + 1
        if event["type"].endswith("poison"):
            raise PermanentError("never processable")
        if event["data"]["n"] == 1 and attempts[event["event_id"]] == 1:
            raise RuntimeError("transient")  # nak'ed and redelivered
        async with engine.begin() as conn:
            if await first_delivery(conn, inbox, "test-consumer", event["event_id"]):
                applied.append(event["data"]["n"])

    consumer = DurableConsumer(bus, f"test-{uuid.uuid4().hex[:8]}", handler, filter_subject=f"events.{kind}.>")
    consumer.start()
    try:
        await wait_until(lambda: (sorted(applied), poison in attempts), "the events applied and the poison tried",
                         lambda seen: seen == ([0, 1, 2], True))
    finally:
        await consumer.stop()
    assert sorted(applied) == [0, 1, 2]
    assert attempts[ids[1]] == 2
    await asyncio.sleep(1.0)
    assert attempts[poison] == 1  # terminated, never redelivered
    # replaying an already-applied event changes nothing
    async with engine.begin() as conn:
        assert not await first_delivery(conn, inbox, "test-consumer", ids[0])
    info = await bus.js.consumer_info("EVENTS", consumer.durable)
    assert info.num_pending == 0 and info.num_ack_pending == 0


async def _stream_of(bus: EventBus, kind: str) -> list[dict]:
    """Every event of `kind` in the stream, in stream order."""
    sub = await bus.js.subscribe(f"events.{kind}.>", ordered_consumer=True, deliver_policy=DeliverPolicy.ALL)
    found = []
    try:
        while True:
            try:
                found.append(json.loads((await sub.next_msg(timeout=1.0)).data))
            except nats.errors.TimeoutError:
                return found
    finally:
        await sub.unsubscribe()


async def test_a_publish_failing_midway_leaves_the_rest_pending_and_order_holds(scratch):
    engine, bus, outbox, _ = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    async with engine.begin() as conn:
        ids = [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in range(2)]
        # larger than the server takes: the client refuses it, and the batch stops there
        ids.append(await record_event(conn, outbox, f"{kind}.ok", None, {"n": 2, "pad": "x" * bus.nc.max_payload}))
        ids += [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in (3, 4)]
    relay = OutboxRelay(engine, outbox, bus)
    with pytest.raises(ConnectionError):
        await relay.publish_pending()
    async with engine.connect() as conn:
        rows = (await conn.execute(sa.select(outbox.c.event_id, outbox.c.published_at).order_by(outbox.c.id))).all()
    assert [r.published_at is not None for r in rows] == [True, True, False, False, False]
    async with engine.begin() as conn:  # mended, as an operator would
        await conn.execute(outbox.update().where(outbox.c.event_id == ids[2]).values(data={"n": 2}))
    assert await relay.publish_pending() == 3
    assert [e["data"]["n"] for e in await _stream_of(bus, kind)] == [0, 1, 2, 3, 4]


async def test_a_burst_goes_out_in_order_and_once_even_when_relayed_twice(scratch):
    engine, bus, outbox, _ = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    async with engine.begin() as conn, events_buffered(conn, outbox):
        ids = [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in range(1200)]
    relay = OutboxRelay(engine, outbox, bus)
    assert [await relay.publish_pending() for _ in range(4)] == [500, 500, 200, 0]
    async with engine.begin() as conn:  # as if a relay died after publishing, before marking them
        await conn.execute(outbox.update().values(published_at=None))
    assert [await relay.publish_pending() for _ in range(4)] == [500, 500, 200, 0]
    assert [e["event_id"] for e in await _stream_of(bus, kind)] == ids  # Nats-Msg-Id dropped the repeats


async def test_a_batch_wider_than_the_clients_window_waits_for_acknowledgements(stack, monkeypatch):
    monkeypatch.setattr("core.bus.PUBLISH_ASYNC_MAX_PENDING", 8)  # the client's window; publishes past it wait
    bus = admin_bus(stack, "test-window")
    assert await bus.wait_connected(10)
    try:
        kind = f"test.{uuid.uuid4().hex[:8]}"
        ids = [str(uuid.uuid4()) for _ in range(50)]
        assert await bus.publish_in_order([Outgoing(f"{kind}.ok", json.dumps({"event_id": i}).encode(), i, {})
                                           for i in ids]) == 50
        assert [e["event_id"] for e in await _stream_of(bus, kind)] == ids
    finally:
        await bus.close()


async def test_the_relay_wakes_on_a_commit_without_waiting_for_its_poll(scratch):
    engine, bus, outbox, _ = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    relay = OutboxRelay(engine, outbox, bus, idle_seconds=60)  # its poll alone would take a minute
    relay.start()
    try:
        await wait_until(lambda: relay.listening, "the relay to listen for commits", timeout=5, interval=0.05)
        sub = await bus.js.subscribe(f"events.{kind}.>", ordered_consumer=True)
        await asyncio.sleep(0.5)  # the relay's first pass (nothing pending) is over: it waits now
        async with engine.begin() as conn:  # another writer: only the commit's NOTIFY can wake the relay
            event_id = await record_event(conn, outbox, f"{kind}.ok", None, {"n": 1})
        assert json.loads((await sub.next_msg(timeout=5)).data)["event_id"] == event_id
        await sub.unsubscribe()
    finally:
        await relay.stop()


async def test_a_batch_is_applied_together_and_a_bad_event_alone(scratch):
    engine, bus, outbox, inbox = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    async with engine.begin() as conn:
        ids = [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in range(4)]
        poison = await record_event(conn, outbox, f"{kind}.poison", None, {})
        ids += [await record_event(conn, outbox, f"{kind}.ok", None, {"n": n}) for n in range(4, 8)]
    assert await OutboxRelay(engine, outbox, bus).publish_pending() == 9
    batches, applied, alone = [], [], []

    async def apply(events: list[dict]) -> None:
        batches.append(len(events))
        if len(events) == 1:
            alone.append(events[0]["event_id"])
        async with engine.begin() as conn:
            fresh = await first_deliveries(conn, inbox, "test-batch", [e["event_id"] for e in events])
            if any(e["type"].endswith("poison") for e in events):
                if len(events) == 1:
                    raise PermanentError("never processable")
                raise RuntimeError("the batch's transaction fails")
            applied.extend(e["data"]["n"] for e in events if e["event_id"] in fresh)

    consumer = DurableConsumer(bus, f"test-{uuid.uuid4().hex[:8]}", apply, filter_subject=f"events.{kind}.>",
                               batch=20, batched=True)
    consumer.start()
    try:
        await wait_until(lambda: (sorted(applied), poison in alone), "the events applied and the poison alone",
                         lambda seen: seen == (list(range(8)), True))
        await asyncio.sleep(1.0)  # a redelivery of the poison would have come by now
    finally:
        await consumer.stop()
    assert sorted(applied) == list(range(8))  # each once: the failed batch's inbox rows were rolled back
    assert max(batches) > 1 and alone.count(poison) == 1
    info = await bus.js.consumer_info("EVENTS", consumer.durable)
    assert info.num_pending == 0 and info.num_ack_pending == 0


async def test_buffered_events_are_inserted_together_in_order_and_dropped_with_a_failure(scratch):
    engine, bus, outbox, inbox = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"

    async def stored() -> list[str]:
        async with engine.connect() as conn:
            return [r.event_id for r in (await conn.execute(
                sa.select(outbox.c.event_id).where(outbox.c.type == kind).order_by(outbox.c.id))).all()]

    async with engine.begin() as conn:
        async with events_buffered(conn, outbox):
            ids = [await record_event(conn, outbox, kind, None, {"n": n}) for n in range(3)]
            assert (await conn.execute(sa.select(sa.func.count()).select_from(outbox)
                                       .where(outbox.c.type == kind))).scalar() == 0  # kept until the block ends
        ids.append(await record_event(conn, outbox, kind, None, {"n": 3}))  # after it: inserted at once
    assert await stored() == ids
    with pytest.raises(RuntimeError):
        async with engine.begin() as conn, events_buffered(conn, outbox):
            await record_event(conn, outbox, kind, None, {"n": 4})
            raise RuntimeError("the batch failed")
    assert await stored() == ids


async def test_an_existing_stream_keeps_its_copies_and_a_differing_setting_is_said(stack, caplog):
    bus = admin_bus(stack, "test-replicas", stream_replicas=3)
    assert await bus.wait_connected(10)
    try:
        with caplog.at_level("WARNING", logger="core.bus"):
            await bus.ensure_stream()
        assert "stream EVENTS keeps 1 copies, not the 3 of NATS_STREAM_REPLICAS" in caplog.text
        assert bus.js is not None and (await bus.js.stream_info("EVENTS")).config.num_replicas == 1
    finally:
        await bus.close()
