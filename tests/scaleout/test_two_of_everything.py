"""Scaled out on one machine: two of every service, worker and gateway (Stack(replicas=2)). Requests alternate between
the gateways; both replicas of a service serve; a call, a text, webhook deliveries and a communication run each
happen once at the providers and the partner's receiver however many replicas could have done them; and the per-key
rate limit holds across the gateways (gateway.sharedlimit)."""
import asyncio
import itertools
import signal
import time
import uuid
from collections import Counter

import pytest

from core import costs, registry
from deploy.local.servers import stop_processes
from tests import runs
from tests.api import Api, new_account
from tests.calling import agent_with_number, place, provider_calls_to, settled
from tests.compliance import answering_callee
from tests.costs import spent_at
from tests.receiver import Receiver
from tests.texting import number, opt_in, send, settled_message, texts_to
from tests.waiting import wait_until

HOOKED = ("lead.created", "call.completed", "sms.sent")


@pytest.fixture(scope="module")
async def business(gateways):
    """An account signed up at one gateway, with an agent and a number made at the other."""
    account = await new_account(gateways[0])
    agent = await agent_with_number(gateways[1], account)
    yield account, agent
    await account["dashboard"].close()


def alternating(gateways: list[Api]):
    return itertools.cycle(gateways)


async def test_every_process_runs_twice_and_each_replica_serves(scaled, gateways, business):
    account, _ = business
    kinds = [registry.GATEWAY, *(s.name for s in registry.SERVICES), *(w.name for w in registry.WORKERS)]
    assert {kind: sum(p.proc.poll() is None for p in scaled.pools[kind]) for kind in kinds} == dict.fromkeys(kinds, 2)
    tag = uuid.uuid4().hex
    for api in itertools.islice(alternating(gateways), 12):
        status, body, _ = await api.request("GET", "/api/v1/workspaces", key=account["key"],
                                            headers={costs.HEADER: tag})
        assert status == 200, body
    for url in scaled.gateway_urls:  # both gateways took requests...
        async with gateways[0].session.get(f"{url}/_costs/{tag}") as r:
            assert (await r.json()).get(costs.RPC), f"{url} served none of the requests"
    served = [await spent_at(p.port, tag) for p in scaled.pools["accounts"]]
    assert all(served), f"a replica of accounts served none of the calls: {served}"  # ...and both accounts replicas


async def test_a_call_a_text_and_their_webhooks_happen_once(scaled, gateways, scaled_voice, business):
    account, agent = business
    key, first, second = account["key"], gateways[0], gateways[1]
    receiver = await Receiver().start()
    try:
        status, made, _ = await second.request("POST", "/api/v1/webhooks", key=key,
                                               json={"webhook_url": receiver.url, "events": list(HOOKED)})
        assert status == 201, made
        leads = []
        for api, n in zip(alternating(gateways), range(6), strict=False):
            status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
                "business_id": account["business_id"], "name": f"Lead {n}"})
            assert status == 201, lead
            leads.append(lead["id"])
        callee = answering_callee()
        status, call, _ = await place(first, key, agent_id=agent["id"], to=callee)
        assert status == 201, call
        assert (await settled(second, key, call["id"]))["status"] == "completed"
        to = number("0190")
        await opt_in(second, key, to)
        status, sent, _ = await send(first, key, agent, to)
        assert status == 200, sent
        assert (await settled_message(second, key, sent["message_sid"]))["status"] == "delivered"

        # the providers took each once: one call placed by one of the two calls replicas, one text by one of the two
        # messaging replicas
        assert len(await provider_calls_to(scaled_voice, callee)) == 1
        assert len(await texts_to(scaled, to)) == 1
        # every event of the business is recorded once (the provider's messages applied by one replica each) and
        # reaches the receiver, once, through two dispatchers
        async def recorded_events() -> dict[str, tuple[str, str]]:
            """Event id: what it is of, as the event log has them (it is fed from the stream, a moment behind)."""
            recorded = {}
            for kind, subject in (("lead.created", "id"), ("call.completed", "call_id"), ("sms.sent", "message_id")):
                status, page, _ = await first.request("GET", "/api/v1/events", key=key, params={"type": kind})
                assert status == 200, page
                recorded.update({e["event_id"]: (kind, e["data"][subject]) for e in page["events"]})
            return recorded

        expected = {*(("lead.created", lead) for lead in leads), ("call.completed", call["id"]),
                    ("sms.sent", sent["message_id"])}
        recorded = await wait_until(recorded_events, "every event in the event log",
                                    lambda found: expected <= set(found.values()))
        once = Counter(recorded.values())
        assert all(once[("lead.created", lead)] == 1 for lead in leads), once
        assert once[("call.completed", call["id"])] == 1 and once[("sms.sent", sent["message_id"])] == 1, once
        await receiver.wait_for(len(recorded))
        await asyncio.sleep(1.0)  # a second delivery by the other dispatcher would come within a lease (2 s) or so
        accepted = Counter(r["json"]["event_id"] for r in receiver.requests if r["accepted"])
        assert set(accepted) == set(recorded), "an event was lost or one not recorded was delivered"
        assert {event: n for event, n in accepted.items() if n > 1} == {}, "events delivered twice"
    finally:
        await receiver.stop()


async def test_a_communication_run_executes_each_touch_once(scaled, gateways, scaled_voice, business):
    account, agent = business
    key = account["key"]
    called, texted = answering_callee(), answering_callee()
    for phone, api in zip((called, texted), gateways, strict=True):
        await opt_in(api, key, phone)
    body = runs.run_of(account, agent, runs.touch("call-1", called, seconds=1),
                       runs.touch("sms-1", texted, channel="sms", seconds=1, context={"body": "Your quote is ready."}))
    status, run, _ = await runs.create(gateways[1], key, body)
    assert status == 201, run
    done = await runs.settled(gateways[0], key, run["id"])
    assert done["status"] == "completed" and done["jobs"]["succeeded"] == 2, [
        (j["touch_id"], j["status"], j["code"]) for j in await runs.jobs_of(gateways[0], key, run["id"])]
    # two schedulers, each touch executed by one of them
    assert len(await provider_calls_to(scaled_voice, called)) == 1
    assert len(await texts_to(scaled, texted)) == 1
    assert len(await runs.events(gateways[1], key, "communication.touch_completed", run["id"], 2)) == 2


LIMIT = 20  # requests per minute per key
SENT = 48  # alternating between the two gateways, PACE apart
PACE = 0.08
SHARE = 0.5  # KEY_RATE_LIMIT_SHARE_SECONDS


async def test_the_per_key_rate_limit_holds_across_two_gateways(scaled, gateways, business):
    account, _ = business
    env = {"KEY_RATE_LIMIT_PER_MINUTE": str(LIMIT), "KEY_RATE_LIMIT_SHARE_SECONDS": str(SHARE)}
    limited = await asyncio.gather(*(asyncio.to_thread(scaled.add_gateway, f"gateway-limited-{n}", env)
                                     for n in (1, 2)))
    try:
        apis = [Api(gateways[0].session, f"http://127.0.0.1:{p.port}") for p in limited]
        key = (await account["dashboard"].create_key(scopes=["workspaces:read"]))["key"]
        for limited_api in apis:  # each shares its rate limit once it is on NATS
            await wait_until(lambda api=limited_api: api.request("GET", "/readyz"), "the limited gateways to be on NATS",
                             lambda reply: reply[0] == 200 and reply[1]["nats"] == "ok")
        started = time.monotonic()
        statuses = []
        for api in itertools.islice(alternating(apis), SENT):
            status, _, headers = await api.request("GET", "/api/v1/balance", key=key)
            statuses.append(status)
            if status == 429:
                assert int(headers["Retry-After"]) >= 1
            await asyncio.sleep(PACE)
        elapsed = time.monotonic() - started
        assert set(statuses) <= {200, 429}, Counter(statuses)
        allowed = statuses.count(200)
        # The bound (gateway.sharedlimit): the limit, what refilled meanwhile, and at most what the other gateway let
        # through in one sharing interval and a little (its counts are sent every SHARE seconds). Counted per replica
        # instead, each gateway would let through LIMIT and its refill: twice as many.
        refilled = elapsed * LIMIT / 60
        unheard = (SHARE + 0.2) / (2 * PACE) + 1
        assert LIMIT <= allowed <= LIMIT + refilled + unheard, (allowed, round(elapsed, 1))
    finally:
        stop_processes([p.proc for p in limited], signal.SIGTERM, 15)
        for p in limited:
            scaled.processes.remove(p)
