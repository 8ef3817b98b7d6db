"""Dead letters on the stack's real NATS: a durable consumer gives up on a message into DEADLETTERS (core.bus,
core.deadletters), and the operator's command, signed in as its own NATS user, lists, replays and drops them."""
import asyncio
import json
import uuid

import nats
import pytest

from core import deadletters, nats_auth
from core.bus import DurableConsumer, Outgoing, PermanentError
from tests.deadletters import command, dead_letters_of
from tests.waiting import wait_until


def event(kind: str, name: str) -> Outgoing:
    event_id = str(uuid.uuid4())
    body = {"event_id": event_id, "type": f"{kind}.{name}", "data": {"name": name}}
    return Outgoing(f"{kind}.{name}", json.dumps(body).encode(), event_id, {"traceparent": f"00-{'a' * 32}-{'b' * 16}-01"})


async def test_a_consumer_gives_up_into_dead_letters_and_the_operator_replays_and_drops_them(stack, scratch):
    _, bus, _, _ = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    failing, poison, fine = event(kind, "failing"), event(kind, "poison"), event(kind, "fine")
    assert await bus.publish_in_order([failing, poison, fine]) == 3
    tries: dict[str, int] = {}
    applied: list[str] = []
    broken = True

    async def handler(message):
        tries[message["event_id"]] = tries.get(message["event_id"], 0) + 1
        if message["data"]["name"] == "poison":
            raise PermanentError("never applicable")
        if message["data"]["name"] == "failing" and broken:
            raise ConnectionError("the provider is down")
        applied.append(message["event_id"])

    durable = f"test-{uuid.uuid4().hex[:8]}"
    consumer = DurableConsumer(bus, durable, handler, filter_subject=f"events.{kind}.>", max_deliver=3,
                               retry_seconds=0.05)
    consumer.start()
    try:
        found = await wait_until(lambda: dead_letters_of(bus.js, durable), "both dead letters",
                                 lambda letters: len(letters) == 2)
        await asyncio.sleep(0.5)
        assert tries == {failing.event_id: 3, poison.event_id: 1, fine.event_id: 1}  # nothing redelivered after
        info = await bus.js.consumer_info("EVENTS", durable)
        assert info.num_pending == 0 and info.num_ack_pending == 0 and info.config.max_deliver == -1
        letters = {letter.subject: (sequence, letter) for sequence, letter in found}
        dead_failing = letters[f"events.{kind}.failing"][1]
        assert (dead_failing.consumer, dead_failing.deliveries, dead_failing.error_type, dead_failing.error) == (
            durable, 3, "ConnectionError", "the provider is down")
        assert json.loads(dead_failing.payload)["event_id"] == failing.event_id
        assert dead_failing.headers["Nats-Msg-Id"] == failing.event_id
        assert dead_failing.headers["traceparent"] == failing.headers["traceparent"]
        assert (letters[f"events.{kind}.poison"][1].deliveries, letters[f"events.{kind}.poison"][1].error_type) == (
            1, "PermanentError")

        # the operator's command: list (filtered), replay needs sequences or --all, show, replay, drop
        status, lines = await command(stack, "list", "--consumer", durable, "--error", "provider is DOWN")
        assert status == 0 and [json.loads(line)["subject"] for line in lines] == [f"events.{kind}.failing"], lines
        assert (await command(stack, "replay", "--consumer", durable))[0] == 2  # neither a sequence nor --all
        sequence = letters[f"events.{kind}.failing"][0]
        status, lines = await command(stack, "show", str(sequence))
        assert status == 0 and json.loads("\n".join(lines))["payload"]["event_id"] == failing.event_id, lines
        broken = False
        status, lines = await command(stack, "replay", str(sequence))
        assert status == 0 and lines == [f"replayed {sequence} to events.{kind}.failing"], lines
        # within the stream's duplicate window of the original: the replay has an id of its own, the same event id
        await wait_until(lambda: applied.count(failing.event_id), "the replayed event applied")
        assert [letter.subject for _, letter in await dead_letters_of(bus.js, durable)] == [f"events.{kind}.poison"]
        status, lines = await command(stack, "drop", "--consumer", durable, "--all")
        assert status == 0 and len(lines) == 1, lines
        assert await dead_letters_of(bus.js, durable) == []
    finally:
        await consumer.stop()


async def test_a_message_delivered_past_its_limit_with_no_outcome_is_a_dead_letter(stack, scratch):
    """Whoever had its last delivery died: JetStream delivers it again (its own limit is off), and the consumer
    stores it rather than handling it once more."""
    _, bus, _, _ = scratch
    kind = f"test.{uuid.uuid4().hex[:8]}"
    lost = event(kind, "lost")
    assert await bus.publish_in_order([lost]) == 1
    handled = []

    async def handler(message):
        handled.append(message["event_id"])

    durable = f"test-{uuid.uuid4().hex[:8]}"
    consumer = DurableConsumer(bus, durable, handler, filter_subject=f"events.{kind}.>", max_deliver=2,
                               ack_wait=1.0)
    # a process that took both deliveries and never answered
    sub = await bus.js.pull_subscribe(f"events.{kind}.>", durable=durable, stream="EVENTS", config=consumer.config)
    for delivery in (1, 2):
        [msg] = await sub.fetch(1, timeout=5)
        assert msg.metadata.num_delivered == delivery
    await sub.unsubscribe()
    consumer.start()
    try:
        [(sequence, dead)] = await wait_until(lambda: dead_letters_of(bus.js, durable), "the dead letter", timeout=15)
        assert dead.deliveries == 3 and "with no outcome" in dead.error and dead.error_type == ""
        assert handled == []
    finally:
        await consumer.stop()
    await deadletters.drop(bus.js, sequence)


async def test_the_operator_may_read_dead_letters_but_not_store_them_nor_touch_the_consumers(stack):
    nc = await nats.connect(stack.nats_url, **stack.nats_login(nats_auth.OPERATOR).options())
    try:
        js = nc.jetstream(timeout=2)
        await js.stream_info("DEADLETTERS")
        with pytest.raises(nats.errors.Error):
            await js.publish("deadletter.EVENTS.agents-workspace-teardown", b"{}", timeout=1)
        with pytest.raises(nats.errors.Error):
            await js.consumer_info("EVENTS", "agents-workspace-teardown")
    finally:
        await nc.close()


async def test_a_consumer_an_earlier_release_made_is_given_this_ones_limits(scratch):
    """Made with JetStream's own max_deliver (as before dead letters), it would drop a message after 20 deliveries
    with no dead letter: the consumer that binds to it updates it first."""
    _, bus, _, _ = scratch
    durable = f"test-{uuid.uuid4().hex[:8]}"
    kind = f"test.{uuid.uuid4().hex[:8]}"
    await bus.ensure_stream()
    await bus.js.add_consumer("EVENTS", config=nats.js.api.ConsumerConfig(
        durable_name=durable, ack_policy=nats.js.api.AckPolicy.EXPLICIT, max_deliver=20, ack_wait=60,
        filter_subject=f"events.{kind}.>"))
    applied = []

    async def handler(message):
        applied.append(message["event_id"])

    consumer = DurableConsumer(bus, durable, handler, filter_subject=f"events.{kind}.>")
    consumer.start()
    try:
        fine = event(kind, "fine")
        assert await bus.publish_in_order([fine]) == 1
        await wait_until(lambda: applied, "the event applied through the updated consumer")
        info = await bus.js.consumer_info("EVENTS", durable)
        assert (info.config.max_deliver, info.config.ack_wait) == (-1, 30.0)
    finally:
        await consumer.stop()
