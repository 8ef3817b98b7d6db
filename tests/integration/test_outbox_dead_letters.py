"""An event the calls service's NATS user may not publish, written to its outbox as its role, ahead of a legitimate
one: the stack's own calls relay sets it aside as a dead letter once refused alone on OUTBOX_POISON_AFTER passes (2
on the tests' stack), marks its row, counts it, and the event after it is relayed and marked (core.outbox)."""
import json
import uuid

from nats.js.api import DeliverPolicy

from core import deadletters, registry
from core.db import create_engine
from core.outbox import DEAD_LETTER_HEADER, add_event, record_event
from services.calls import schema as calls_schema
from switchboard.v1 import events_pb2
from tests.nats_admin import admin_connection
from tests.scrape import scrape, value
from tests.waiting import wait_until

CONSUMER = registry.relay_consumer("calls")


async def test_an_event_nats_refuses_is_set_aside_as_a_dead_letter_and_the_next_ones_flow(stack, db):
    kind = f"test.{uuid.uuid4().hex[:8]}.forbidden"  # not a type calls declares: its NATS user may not publish it
    counted = {"stream": "EVENTS", "consumer": CONSUMER}
    metrics_port = stack.process("calls").metrics_port
    before = value(await scrape(metrics_port), "switchboard_dead_letters_total", **counted)
    nc = await admin_connection(stack)
    engine = create_engine(stack.database_url_of("calls"))
    sequence = None
    try:
        js = nc.jetstream(timeout=5)
        seen = await js.subscribe("events.call.started", ordered_consumer=True, deliver_policy=DeliverPolicy.NEW)
        async with engine.begin() as conn:  # as the calls service writes it: its role, its outbox
            poison = await record_event(conn, calls_schema.outbox, kind, None, {"n": 1})
            fine = await add_event(conn, calls_schema.outbox, events_pb2.CallStarted(
                call_id=str(uuid.uuid4()), conversation_id="c", agent_id=str(uuid.uuid4()), direction="outbound",
                to="+14155550100"), str(uuid.uuid4()))

        async def rows():
            found = await db.fetch("SELECT event_id::text, published_at, headers FROM calls.outbox "
                                   "WHERE event_id = ANY($1::uuid[])", [poison, fine])
            return {r["event_id"]: r for r in found}
        marked = await wait_until(rows, "both rows marked published",
                                  lambda found: len(found) == 2 and all(r["published_at"] for r in found.values()),
                                  timeout=20, interval=0.2)
        # the legitimate event reached EVENTS (its consumers read it there)
        while True:
            msg = await seen.next_msg(timeout=5)
            if json.loads(msg.data)["event_id"] == fine:
                break
        assert DEAD_LETTER_HEADER not in json.loads(marked[fine]["headers"])
        sequence = int(json.loads(marked[poison]["headers"])[DEAD_LETTER_HEADER])

        [(stored_at, letter)] = [(s, d) for s, d in await deadletters.stored(js, deadletters.Filter(consumer=CONSUMER))
                                 if json.loads(d.payload)["event_id"] == poison]
        assert stored_at == sequence
        assert (letter.stream, letter.subject, letter.deliveries) == ("EVENTS", f"events.{kind}", 2)
        assert "permissions violation" in letter.error.lower() and f'"events.{kind}"' in letter.error, letter
        assert letter.headers["Nats-Msg-Id"] == poison and json.loads(letter.payload)["data"] == {"n": 1}
        assert value(await scrape(metrics_port), "switchboard_dead_letters_total", **counted) - before == 1
    finally:
        if sequence is not None:
            await deadletters.drop(nc.jetstream(), sequence)
        await nc.close()
        await engine.dispose()
