"""Provider messages end to end: how many concurrent calls the stack carries with every message processed and
nothing lost, and how soon an end-of-call report becomes `call.completed` on the bus, against a bare receiver
in the same run.

--calls outbound calls are placed through the API (the simulator told to stay silent, so only this bench
speaks for the provider). Then, --concurrency at a time, the bench plays each call as the provider does:
a signed `status-update` (in-progress) and a signed `end-of-call-report` POSTed to
/api/v1/providers/voice/messages. It listens on NATS for `call.completed` and reports calls per second (first
report sent to last event received) and p50/p99 from a report's sending to its event's arrival; then, once the
consumers downstream (leads, scores, usage, the webhooks history) have caught up, the events of every type a call
led to, per call and per second. Every call must end with exactly its event, or the run is invalid. The baseline
is a bare aiohttp receiver in this process that only stores each message in Postgres (one INSERT), fed the same
messages with the same concurrency; the ratio is the stack's calls per second over the baseline's. It also prints the CPU each process spent per call,
downstream consumers included.

With --rate the stack's calls start at that steady rate (calls per second) instead of all at once, to read the
latency at a load it carries.

Run: `make bench-calls` (`--calls`, `--concurrency`, `--rate`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from typing import Any

import aiohttp
import asyncpg
import nats
from aiohttp import web
from nats.aio.msg import Msg

from bench.harness import INVALID, CpuMeter, judged, report, signed_up, with_stack
from core.nats_auth import TEST_ADMIN
from deploy.local.servers import free_port
from deploy.local.stack import Stack
from providers.voice.vapi.server_messages import MESSAGES_PATH, hmac_plan
from providers.voice.vapi.simulator.playback import sign

RATIO_GOAL, P99_GOAL_MS = 0.5, 400  # the burst: >= 0.5 of the bare receiver, p99 < 400 ms (issue 38)


def signed(secret: str, body: bytes) -> dict[str, Any]:
    """Headers as the provider signs a server message with our webhook credential's plan."""
    return {"Content-Type": "application/json", **sign(hmac_plan(secret), body, time.time())}


def messages(call: dict[str, Any]) -> list[bytes]:
    """What the provider sends for an answered call: in-progress, then the end-of-call report."""
    ref = {"id": call["conversation_id"], "assistantOverrides": {"metadata": {"switchboard_call_id": call["id"]}}}
    report = {"type": "end-of-call-report", "call": ref, "endedReason": "customer-ended-call",
              "startedAt": "2026-11-23T10:00:00.000Z", "endedAt": "2026-11-23T10:01:30.000Z", "cost": 0.12,
              "artifact": {"transcript": "AI: Hello\nUser: Hi, a quote please."},
              "analysis": {"summary": "Asked for a quote.", "structuredData": {"intent": "quote"}}}
    return [json.dumps({"message": {"type": "status-update", "status": "in-progress", "call": ref}}).encode(),
            json.dumps({"message": report}).encode()]


async def play(http: aiohttp.ClientSession, url: str, secret: str, calls: list[dict[str, Any]], concurrency: int,
               sent: dict[str, float], rate: float | None = None) -> int:
    """Post every call's messages, `concurrency` calls at a time, each call starting `rate` per second when given
    (else at once); returns how many posts were refused."""
    gate = asyncio.Semaphore(concurrency)
    refused = 0
    begin = time.time()

    async def one(n: int, call: dict[str, Any]) -> None:
        nonlocal refused
        if rate:
            await asyncio.sleep(max(0.0, begin + n / rate - time.time()))
        async with gate:
            for n, body in enumerate(messages(call)):
                if n == 1:
                    sent[call["id"]] = time.time()
                async with http.post(url, data=body, headers=signed(secret, body)) as r:
                    await r.read()
                    refused += r.status >= 300

    await asyncio.gather(*(one(n, c) for n, c in enumerate(calls)))
    return refused


class BareReceiver:
    """The baseline: stores each message it is sent in Postgres, nothing else."""

    def __init__(self, database_url: str):
        self.database_url, self.port = database_url, free_port()
        self.pool: Any = None  # an asyncpg pool (untyped) once started
        self.stored: dict[str, float] = {}

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        message = json.loads(body)["message"]
        await self.pool.execute("INSERT INTO bench_messages (call_id, type, body) VALUES ($1, $2, $3)",
                                message["call"]["assistantOverrides"]["metadata"]["switchboard_call_id"],
                                message["type"], body.decode())
        if message["type"] == "end-of-call-report":
            self.stored[message["call"]["assistantOverrides"]["metadata"]["switchboard_call_id"]] = time.time()
        return web.json_response({})

    async def start(self) -> web.AppRunner:
        self.pool = await asyncpg.create_pool(self.database_url, min_size=4, max_size=10)
        await self.pool.execute("CREATE TABLE IF NOT EXISTS bench_messages (id bigserial PRIMARY KEY, call_id text, "
                                "type text, body text, at timestamptz DEFAULT now())")
        app = web.Application()
        app.router.add_post("/messages", self.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        return runner

    async def stop(self, runner: web.AppRunner) -> None:
        await runner.cleanup()
        await self.pool.execute("DROP TABLE bench_messages")
        await self.pool.close()


async def history_size(database_url: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        count: int = await conn.fetchval("SELECT count(*) FROM webhooks.events")
        return count
    finally:
        await conn.close()


async def settled_history(database_url: str, quiet: float = 2.0) -> tuple[int, float]:
    """The webhooks history's size once the consumers downstream of the calls (leads, scores, usage, history)
    have caught up, and when it last grew: it has not grown for `quiet` seconds."""
    size, grew = await history_size(database_url), time.time()
    while time.time() - grew < quiet:
        await asyncio.sleep(0.2)
        now = await history_size(database_url)
        if now != size:
            size, grew = now, time.time()
    return size, grew


def line(name: str, count: int, seconds: float, latencies: list[float]) -> tuple[float, float, float]:
    """Print a path's line; its calls/s, p50 and p99 in ms."""
    rate = count / seconds if seconds > 0 else 0.0
    ms = sorted(x * 1000 for x in latencies) or [0.0]
    p50, p99 = statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"  {name:<22} {rate:>9.1f} {p50:>9.1f} {p99:>9.1f} {count:>7}")
    return rate, p50, p99


async def setup(http: aiohttp.ClientSession, base: str, database_url: str) -> tuple[str, str]:
    signup, key = await signed_up(http, base, "Bench Calls", "calls-bench@example.com", database_url)
    auth = {"Authorization": f"Bearer {key}"}
    async with http.post(f"{base}/api/v1/agents", headers=auth, json={
            "business_id": signup["business_id"], "name": "Bench", "system_prompt": "Answer."}) as r:
        agent = await r.json()
    async with http.get(f"{base}/api/v1/phone-numbers/available", headers=auth, params={"country": "US"}) as r:
        number = (await r.json())["numbers"][0]["phone_number"]
    async with http.post(f"{base}/api/v1/phone-numbers", headers=auth, json={
            "phone_number": number, "agent_id": agent["id"]}) as r:
        assert r.status == 201, await r.text()
    return key, agent["id"]


async def run(args: argparse.Namespace, stack: Stack) -> int:
    secret = stack.env()["VOICE_WEBHOOK_SECRET"]  # as the launcher gives it to the gateway and the calls service
    sim = f"http://127.0.0.1:{stack.process('voice-simulator').port}"
    completed: dict[str, float] = {}
    bus = await nats.connect(stack.nats_url, **stack.nats_login(TEST_ADMIN).options())

    async def on_event(msg: Msg) -> None:
        completed.setdefault(json.loads(msg.data)["data"]["call_id"], time.time())

    await bus.subscribe("events.call.completed", cb=on_event)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        key, agent_id = await setup(http, stack.base_url, stack.database_url)
        async with http.post(f"{sim}/_simulator/playback", json={"silent": True, "times": args.calls + 10}) as r:
            assert r.status == 201
        print(f"placing {args.calls} calls ...", flush=True)
        gate = asyncio.Semaphore(20)

        async def place(n: int) -> dict[str, Any]:
            async with gate, http.post(f"{stack.base_url}/api/v1/calls", headers={"Authorization": f"Bearer {key}"},
                                       json={"agent_id": agent_id, "to": f"+1415555{1000 + n:04d}"}) as r:
                assert r.status == 201, await r.text()
                call: dict[str, Any] = await r.json()
                return call

        calls = await asyncio.gather(*(place(n) for n in range(args.calls)))
        print(f"{args.calls} calls, {2 * args.calls} provider messages, {args.concurrency} calls at a time; "
              "calls/s from the first report to the last event, latency report sent -> event (stack) or "
              "report stored (bare) in ms")
        print(f"  {'path':<22} {'calls/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'calls':>7}")
        bare = BareReceiver(stack.database_url)
        runner = await bare.start()
        try:
            sent_bare: dict[str, float] = {}
            started = time.time()
            await play(http, f"http://127.0.0.1:{bare.port}/messages", secret, calls, args.concurrency, sent_bare)
            baseline = line("bare receiver", len(bare.stored), max(bare.stored.values()) - started,
                            [bare.stored[c] - sent_bare[c] for c in bare.stored])[0]
        finally:
            await bare.stop(runner)
        sent: dict[str, float] = {}
        cpu = CpuMeter(stack)
        events_before = await history_size(stack.database_url)
        cpu_before, started = cpu.read(), time.time()
        refused = await play(http, stack.base_url + MESSAGES_PATH, secret, calls, args.concurrency, sent, args.rate)
        ids = [c["id"] for c in calls]
        for _ in range(600):
            if all(i in completed for i in ids):
                break
            await asyncio.sleep(0.1)
        events_after, events_done = await settled_history(stack.database_url)
        cpu_after = cpu.read()
    await bus.close()
    missing = [i for i in ids if i not in completed]
    path = f"provider messages of {args.calls} calls to call.completed, {args.concurrency} at a time" + (
        f", started at {args.rate:g} calls/s" if args.rate else "")
    # The goal is the burst's: a steady rate has no ratio to the bare receiver's burst.
    goal = "none (steady rate)" if args.rate else f">= {RATIO_GOAL} of bare, p99 < {P99_GOAL_MS} ms"
    if refused or missing:
        print(f"  INVALID: {refused} messages refused, {len(missing)} calls without call.completed")
        report("bench.calls", path, None, "calls/s", baseline, None, goal, INVALID)
        return 1
    last = max(completed[i] for i in ids)
    rate, p50, p99 = line(f"stack, {args.rate:g} calls/s" if args.rate else "stack", len(ids), last - started,
                          [completed[i] - sent[i] for i in ids])
    events = events_after - events_before
    print(f"    provider messages in: {2 * len(ids) / (last - started):.0f}/s; events out (every type, counted in the "
          f"webhooks history once the consumers caught up): {events / len(ids):.1f} per call, "
          f"{events / (events_done - started):.0f}/s")
    print(cpu.per_unit(cpu_before, cpu_after, len(ids), "call") + " (until the consumers caught up)")
    if args.rate:
        print("every call ended once with its event (a steady rate: no ratio to the bare receiver's burst)")
        report("bench.calls", path, rate, "calls/s", baseline, None, goal, judged(None), p50_ms=p50, p99_ms=p99)
    else:
        print(f"ratio to the bare receiver: {rate / baseline:.2f}; every call ended once with its event")
        report("bench.calls", path, rate, "calls/s", baseline, rate / baseline, goal,
               judged(rate / baseline >= RATIO_GOAL and p99 < P99_GOAL_MS), p50_ms=p50, p99_ms=p99)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.calls", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls to play (default 300)")
    parser.add_argument("--concurrency", type=int, default=50, help="calls in flight at once (default 50)")
    parser.add_argument("--rate", type=float, help="start calls at this steady rate per second instead of all at once "
                        "(the stack only)")
    args = parser.parse_args()
    return with_stack("calls", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
