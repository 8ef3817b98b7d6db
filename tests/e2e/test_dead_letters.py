"""A teardown while the voice provider is down: the agents service's teardown consumer gives up on releasing the
numbers after its last delivery, the message lands in the dead letters with the provider's error and is counted,
and once the provider is back an operator's replay releases them (core.deadletters; README, "Operations: dead
letters")."""
import asyncio
import json
import uuid

import pytest

from deploy.local.servers import free_port, wait_for_port
from services.agents.teardown_consumer import CONSUMER
from tests.calling import agent_with_number
from tests.deadletters import command, dead_letters_of
from tests.nats_admin import admin_connection
from tests.scrape import scrape, value
from tests.waiting import wait_until

DELIVERIES = 3


@pytest.fixture
async def impatient_agents(stack, api, account):
    """The agents service replaced, on its own port, by one whose consumers give up on a message after
    DELIVERIES deliveries a fifth of a second apart (the stack's own wait CONSUMER_MAX_DELIVER's 20, about 14
    minutes), its metrics served on a port of its own; returned once the gateway reaches it."""
    agents = stack.process("agents")
    stack.stop_process(agents)
    replica = stack.add_replica("agents", f"agents-impatient-{uuid.uuid4().hex[:6]}", {
        "CONSUMER_MAX_DELIVER": str(DELIVERIES), "CONSUMER_RETRY_SECONDS": "0.2", "METRICS_PORT": str(free_port())},
        port=agents.port)

    async def reached():
        return (await api.request("GET", "/api/v1/agents", key=account["key"]))[0] == 200
    try:
        await wait_until(reached, "the gateway to reach the new agents replica", timeout=30, interval=0.3)
        yield replica
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)
        stack.spawn(agents)
        assert agents.proc is not None and agents.log is not None
        wait_for_port(agents.port, 30, agents.proc, agents.name, agents.log)
        # the next tests find the stack's own agents service as it was
        await wait_until(reached, "the gateway to reach the agents service again", timeout=30, interval=0.3)
        await asyncio.to_thread(stack.wait_ready, 30)  # its database and NATS too: /api/v1/health asks them next


async def held_numbers(api, key) -> list[str]:
    status, numbers, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
    assert status == 200, numbers
    return [n["phone_number"] for n in numbers["phone_numbers"]]


async def test_a_teardown_while_the_voice_provider_is_down_is_a_dead_letter_an_operator_replays(
        api, stack, account, voice, impatient_agents):
    key, business_id = account["key"], account["business_id"]
    agent = await agent_with_number(api, account)
    metrics_port = int(impatient_agents.env["METRICS_PORT"])
    counted = {"stream": "EVENTS", "consumer": CONSUMER}
    before = value(await scrape(metrics_port), "switchboard_dead_letters_total", **counted)
    # the provider answers 503 to every release of the number, its client's retries included
    await voice.fail_next("DELETE", f"/phone-number/{agent['provider_number']}", 503, times=1000)
    for action in ("cancel", "teardown"):
        status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                            json={"id": business_id, "action": action})
        assert status == 200, body

    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()

        async def ours():
            return [(sequence, letter) for sequence, letter in await dead_letters_of(js, CONSUMER)
                    if json.loads(letter.payload)["business_id"] == business_id]
        [(sequence, dead)] = await wait_until(ours, "the teardown's dead letter", timeout=60, interval=0.5)
    finally:
        await nc.close()
    assert (dead.subject, dead.deliveries, dead.error_type) == (
        "events.workspace.teardown_completed", DELIVERIES, "ProviderError")
    assert "503" in dead.error, dead.error
    assert json.loads(dead.payload)["type"] == "workspace.teardown_completed"
    assert value(await scrape(metrics_port), "switchboard_dead_letters_total", **counted) - before == 1
    assert await held_numbers(api, key) == [agent["phone_number"]]  # given up: nothing retries it any more

    status, lines = await command(stack, "list", "--consumer", CONSUMER, "--subject", "events.workspace.*")
    listed = {json.loads(line)["dead_letter"]: json.loads(line) for line in lines}
    assert status == 0 and listed[sequence]["error"].startswith("ProviderError: ") and listed[sequence]["at"], lines

    await voice.clear_faults()  # the provider is back
    status, lines = await command(stack, "replay", str(sequence))
    assert status == 0 and lines == [f"replayed {sequence} to events.workspace.teardown_completed"], lines

    async def released():
        return await held_numbers(api, key) == []
    await wait_until(released, "the replayed teardown to release the number", timeout=30, interval=0.3)
    status, lines = await command(stack, "list", "--consumer", CONSUMER)
    assert status == 0 and sequence not in [json.loads(line)["dead_letter"] for line in lines]
