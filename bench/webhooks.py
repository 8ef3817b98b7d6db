"""Webhook delivery end to end, in a burst with one and with two dispatchers and at a steady rate, against a
bare sender in the same run.

Events are committed into the sdr outbox (as the service writes them: `lead.created`, with the NOTIFY its
commits send) and the bench's own receiver counts them arriving: outbox -> relay -> NATS JetStream ->
dispatcher (history, deliveries) -> signed POST.
- burst: --events at once; events per second (first commit to last receipt) and p50/p99 from commit to
  receipt; with one dispatcher, then with a second one started beside it (2 over 1);
- steady: --rate events per second for --seconds (one commit every 20 ms), one dispatcher; the achieved rate and
  p50/p99 from commit to receipt.
Each round also prints where the time went (p50/p99 after commit of publishing by the relay, fan-out into a
delivery and delivery, from the stack's own timestamps), the CPU each part of the machine spent per event and
the bytes PostgreSQL wrote to its log per event.
The baseline is a bare loop in this process that signs the same bodies and POSTs them to the same receiver
with the same concurrency, nothing else; the ratio is dispatcher throughput over that. Every event must
arrive exactly once after dedup, or the run is invalid.

Run: `make bench-webhooks` (`--events`, `--rate`, `--seconds`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import aiohttp
import asyncpg
from aiohttp import web

from bench.harness import INVALID, CpuMeter, judged, report, signed_up, with_stack
from core import signing
from deploy.local.servers import free_port
from deploy.local.stack import Stack

COMMIT_EVERY = 0.02  # seconds between commits in the steady round
SCALING_GOAL = 1.6  # two dispatchers' burst over one's (issue 38)


class CountingReceiver:
    def __init__(self, port: int):
        self.port = port
        self.seen: dict[str, float] = {}  # event_id -> receipt time (epoch seconds)
        self.latency: dict[str, float] = {}  # event_id -> seconds from its commit (occurred_at) to its receipt
        self.duplicates = 0

    async def handle(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        now = time.time()
        if body["event_id"] in self.seen:
            self.duplicates += 1
        else:
            self.seen[body["event_id"]] = now
            occurred = datetime.fromisoformat(body["occurred_at"].replace("Z", "+00:00")).timestamp()
            self.latency[body["event_id"]] = now - occurred
        return web.Response(text="ok")

    async def start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/hooks", self.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        return runner

    async def wait_all(self, ids: list[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(i in self.seen for i in ids):
                return True
            await asyncio.sleep(0.05)
        return False


class Outbox:
    """Commits `lead.created` events into the sdr outbox, as the service does (one COPY and its NOTIFY)."""

    def __init__(self, conn: asyncpg.Connection, business_id: str):
        self.conn, self.business_id = conn, uuid.UUID(business_id)

    async def commit(self, count: int) -> list[str]:
        ids = [str(uuid.uuid4()) for _ in range(count)]
        now = datetime.now(UTC)
        async with self.conn.transaction():
            await self.conn.copy_records_to_table(
                "outbox", schema_name="sdr", columns=["event_id", "type", "business_id", "occurred_at", "data"],
                records=[(uuid.UUID(i), "lead.created", self.business_id, now,
                          json.dumps({"id": i, "name": "Bench", "email": None, "phone": None, "source": "api"}))
                         for i in ids])
        return ids


async def stages(database_url: str, ids: list[str]) -> str:
    """Where the events' time went, from the stack's own timestamps: p50/p99 from commit (occurred_at) to
    published by the relay (sdr.outbox), to fanned out into a delivery (webhooks.deliveries.created_at) and to
    delivered."""
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT extract(epoch FROM o.published_at - o.occurred_at) AS published, "
            "extract(epoch FROM d.created_at - o.occurred_at) AS fanned, "
            "extract(epoch FROM d.delivered_at - o.occurred_at) AS delivered "
            "FROM sdr.outbox o JOIN webhooks.deliveries d USING (event_id) WHERE o.event_id = ANY($1::uuid[])", ids)
    finally:
        await conn.close()

    def cut(stage: str) -> str:
        q = statistics.quantiles([float(r[stage]) for r in rows if r[stage] is not None], n=100)
        return f"{q[49] * 1000:.0f}/{q[98] * 1000:.0f}"

    return f"    p50/p99 ms after commit: published {cut('published')}, fanned out {cut('fanned')}, " \
           f"delivered {cut('delivered')}"


def summary(name: str, count: int, seconds: float, latencies: list[float]) -> tuple[float, float, float]:
    """Print a round's line; its events/s, p50 and p99 in ms."""
    cuts = statistics.quantiles(latencies, n=100)
    rate, p50, p99 = count / seconds, cuts[49] * 1000, cuts[98] * 1000
    print(f"  {name:<18} {rate:>9.1f} {p50:>9.1f} {p99:>9.1f} {count:>7d}", flush=True)
    return rate, p50, p99


async def bare_baseline(url: str, count: int, concurrency: int) -> tuple[float, list[float]]:
    bodies = [json.dumps({"event_id": str(uuid.uuid4()), "event": "lead.created",
                          "occurred_at": datetime.now(UTC).isoformat(), "data": {}}).encode()
              for _ in range(count)]
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for b in bodies:
        queue.put_nowait(b)
    latencies: list[float] = []
    async with aiohttp.ClientSession() as http:
        async def worker() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                started = time.perf_counter()
                stamp = int(time.time())
                header = signing.signature_header(["whsec_bench"], stamp, body)
                async with http.post(url, data=body, headers={"X-Service-Signature": header}) as r:
                    await r.read()
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies


class Rounds:
    def __init__(self, stack: Stack, receiver: CountingReceiver, outbox: Outbox):
        self.stack, self.receiver, self.outbox = stack, receiver, outbox
        self.cpu = CpuMeter(stack)  # each dispatcher on its own: both must work

    async def costs(self) -> tuple[dict[str, float], int]:
        """CPU seconds per part so far, and the WAL position (bytes PostgreSQL has written to its log)."""
        return self.cpu.read(), await self.outbox.conn.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")

    async def finish(self, name: str, ids: list[str], started: float, before: tuple[dict[str, float], int]) \
            -> tuple[float, float, float] | None:
        """Wait for every event, print the round's line, its stages and its costs; the rate, p50 and p99 (ms), or
        None if some never arrived."""
        if not await self.receiver.wait_all(ids, 300):
            print(f"  {name}: not every event arrived; INVALID")
            return None
        last = max(self.receiver.seen[i] for i in ids)
        figures = summary(name, len(ids), last - started, [self.receiver.latency[i] for i in ids])
        print(await stages(self.stack.database_url, ids), flush=True)
        await asyncio.sleep(0.5)  # the last attempts are recorded
        cpu, wal = await self.costs()
        print(self.cpu.per_unit(before[0], cpu, len(ids), "event"), flush=True)
        print(f"    PostgreSQL WAL per event: {(wal - before[1]) / len(ids):.0f} bytes", flush=True)
        return figures

    async def burst(self, name: str, count: int) -> tuple[float, float, float] | None:
        before, started = await self.costs(), time.time()
        return await self.finish(name, await self.outbox.commit(count), started, before)

    async def steady(self, name: str, rate: int, seconds: float) -> tuple[float, float, float] | None:
        per_commit = max(1, round(rate * COMMIT_EVERY))
        before, started, ids = await self.costs(), time.time(), []
        for n in range(round(seconds / COMMIT_EVERY)):
            ids += await self.outbox.commit(per_commit)
            await asyncio.sleep(max(0.0, started + (n + 1) * COMMIT_EVERY - time.time()))
        return await self.finish(name, ids, started, before)


async def run(args: argparse.Namespace, stack: Stack) -> int:
    receiver = CountingReceiver(free_port())
    runner = await receiver.start()
    url = f"http://127.0.0.1:{receiver.port}/hooks"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signup, key = await signed_up(http, stack.base_url, "Bench Co", "bench@example.com",
                                       stack.database_url)
        async with http.post(f"{stack.base_url}/api/v1/webhooks", headers={"Authorization": f"Bearer {key}"},
                             json={"webhook_url": url, "events": ["lead.created"]}) as r:
            assert r.status == 201, await r.text()
    conn = await asyncpg.connect(stack.database_url)
    rounds = Rounds(stack, receiver, Outbox(conn, signup["business_id"]))
    print(f"burst: {args.events} events at once; steady: {args.rate}/s for {args.seconds:g} s; receiver and bare "
          "sender in this process; throughput in events/s, latency commit -> receipt in ms")
    print(f"  {'round':<18} {'events/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'events':>7}")
    try:
        # Warm-up: the dispatcher's consumer and connections.
        await receiver.wait_all(await rounds.outbox.commit(20), 60)
        seconds, latencies = await bare_baseline(url, args.events, 50)
        baseline = summary("bare sender", args.events, seconds, latencies)[0]
        one = await rounds.burst("burst, 1 dispatcher", args.events)
        steady = await rounds.steady("steady, 1 dispatcher", args.rate, args.seconds)
        second = await asyncio.to_thread(stack.add_replica, "webhooks-dispatcher", "webhooks-dispatcher-2")
        await asyncio.sleep(3.0)  # connected and subscribed
        two = await rounds.burst("burst, 2 dispatchers", args.events)
        if second.proc and second.proc.poll() is not None:
            print(f"  the second dispatcher exited ({second.proc.returncode}; see {second.log}); INVALID")
            two = None
    finally:
        await conn.close()
        await runner.cleanup()
    path = f"webhook burst of {args.events}, outbox to signed POST"
    one_path, two_path = f"{path}, 1 dispatcher", f"{path}, 2 dispatchers (baseline: 1)"
    scaling = f">= {SCALING_GOAL}x one dispatcher"
    if one is None or steady is None or two is None:
        report("bench.webhooks", one_path, None, "events/s", baseline, None, "none stated", INVALID)
        report("bench.webhooks", two_path, None, "events/s", None, None, scaling, INVALID)
        return 1
    if receiver.duplicates:
        print(f"  note: {receiver.duplicates} duplicate deliveries (at-least-once; receivers dedupe on event_id)")
    print(f"ratio to the bare sender: 1 dispatcher {one[0] / baseline:.2f}, 2 dispatchers {two[0] / baseline:.2f}; "
          f"2 over 1: {two[0] / one[0]:.2f}")
    report("bench.webhooks", one_path, one[0], "events/s", baseline, one[0] / baseline, "none stated", judged(None),
           p50_ms=one[1], p99_ms=one[2])
    report("bench.webhooks", two_path, two[0], "events/s", one[0], two[0] / one[0], scaling,
           judged(two[0] / one[0] >= SCALING_GOAL), p50_ms=two[1], p99_ms=two[2])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webhooks", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000, help="events per burst (default 3000)")
    parser.add_argument("--rate", type=int, default=500, help="events per second in the steady round (default 500)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the steady round (default 10)")
    args = parser.parse_args()
    return with_stack("webhooks", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
