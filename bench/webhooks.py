"""Webhook delivery end to end, with one and with two dispatchers, against a bare sender in the same run.

For each round, --events `lead.created` events are committed at once into the sdr outbox (as the
service writes them), and the bench's own receiver counts them arriving: outbox -> relay -> NATS
JetStream -> dispatcher (history, deliveries) -> signed POST. It reports events per second (first
commit to last receipt) and p50/p99 latency from commit to receipt. The baseline is a bare loop in
this process that signs the same bodies and POSTs them to the same receiver with the same
concurrency, nothing else; the ratio is dispatcher throughput over that. Every event must arrive
exactly once after dedup, or the run is invalid.

Run: `PYTHONPATH=.:protos .venv/bin/python -m bench.webhooks` (`--events`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from datetime import datetime, timezone

from aiohttp import web

from bench.harness import signed_up, with_stack
from services.webhooks import domain


class CountingReceiver:
    def __init__(self, port: int):
        self.port = port
        self.seen: dict[str, float] = {}  # event_id -> receipt time (epoch seconds)
        self.latency: list[float] = []
        self.duplicates = 0

    async def handle(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        now = time.time()
        if body["event_id"] in self.seen:
            self.duplicates += 1
        else:
            self.seen[body["event_id"]] = now
            occurred = datetime.fromisoformat(body["occurred_at"].replace("Z", "+00:00")).timestamp()
            self.latency.append(now - occurred)
        return web.Response(text="ok")

    async def start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/hooks", self.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        return runner


async def commit_events(database_url: str, business_id: str, count: int) -> tuple[list[str], float]:
    import asyncpg

    ids = [str(uuid.uuid4()) for _ in range(count)]
    now = datetime.now(timezone.utc)
    conn = await asyncpg.connect(database_url)
    try:
        await conn.copy_records_to_table("outbox", schema_name="sdr", columns=["event_id", "type", "business_id",
                                                                                "occurred_at", "data", "headers"],
                                         records=[(uuid.UUID(i), "lead.created", uuid.UUID(business_id), now,
                                                   json.dumps({"id": i, "name": "Bench", "email": None,
                                                               "phone": None, "source": "api"}), "{}")
                                                  for i in ids])
    finally:
        await conn.close()
    return ids, now.timestamp()


async def wait_all(receiver: CountingReceiver, ids: list[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(i in receiver.seen for i in ids):
            return True
        await asyncio.sleep(0.05)
    return False


def summary(name: str, count: int, seconds: float, latencies: list[float]) -> float:
    cuts = statistics.quantiles(latencies, n=100)
    rate = count / seconds
    print(f"  {name:<16} {rate:>9.1f} {cuts[49] * 1000:>9.1f} {cuts[98] * 1000:>9.1f} {count:>7d}", flush=True)
    return rate


async def bare_baseline(url: str, count: int, concurrency: int) -> tuple[float, list[float]]:
    import aiohttp

    bodies = [json.dumps({"event_id": str(uuid.uuid4()), "event": "lead.created",
                          "occurred_at": datetime.now(timezone.utc).isoformat(), "data": {}}).encode()
              for _ in range(count)]
    queue: asyncio.Queue = asyncio.Queue()
    for b in bodies:
        queue.put_nowait(b)
    latencies: list[float] = []
    async with aiohttp.ClientSession() as http:
        async def worker():
            while not queue.empty():
                body = queue.get_nowait()
                started = time.perf_counter()
                stamp = int(time.time())
                header = domain.signature_header(["whsec_bench"], stamp, body)
                async with http.post(url, data=body, headers={"X-Service-Signature": header}) as r:
                    await r.read()
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies


async def run(args, stack) -> int:
    import aiohttp

    from deploy.local.servers import free_port
    from deploy.local.stack import Process

    receiver = CountingReceiver(free_port())
    runner = await receiver.start()
    url = f"http://127.0.0.1:{receiver.port}/hooks"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signup, key = await signed_up(http, stack.base_url, "Bench Co", "bench@example.com")
        async with http.post(f"{stack.base_url}/api/v1/webhooks", headers={"Authorization": f"Bearer {key}"},
                             json={"webhook_url": url, "events": ["lead.created"]}) as r:
            assert r.status == 201, await r.text()
    print(f"{args.events} events per round; receiver and bare sender in this process; "
          "throughput in events/s, latency commit -> receipt in ms")
    print(f"  {'round':<16} {'events/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'events':>7}")
    # Warm-up: the dispatcher's consumer and connections.
    ids, _ = await commit_events(stack.database_url, signup["business_id"], 20)
    await wait_all(receiver, ids, 60)
    seconds, latencies = await bare_baseline(url, args.events, 50)
    baseline = summary("bare sender", args.events, seconds, latencies)
    rates, valid = {}, True
    second = None
    try:
        for dispatchers in (1, 2):
            if dispatchers == 2:
                second = Process("webhooks-dispatcher-2", "services.webhooks.dispatcher", 0)
                stack.processes.append(second)
                stack.spawn(second)
                await asyncio.sleep(3.0)  # connected and subscribed
            first_latency = len(receiver.latency)
            ids, committed = await commit_events(stack.database_url, signup["business_id"], args.events)
            if not await wait_all(receiver, ids, 300):
                print(f"  {dispatchers} dispatcher(s): not every event arrived; INVALID")
                return 1
            last = max(receiver.seen[i] for i in ids)
            rates[dispatchers] = summary(f"{dispatchers} dispatcher(s)", len(ids), last - committed,
                                         receiver.latency[first_latency:])
    finally:
        await runner.cleanup()
    if receiver.duplicates:
        print(f"  note: {receiver.duplicates} duplicate deliveries (at-least-once; receivers dedupe on event_id)")
    print(f"ratio to the bare sender: 1 dispatcher {rates[1] / baseline:.2f}, 2 dispatchers {rates[2] / baseline:.2f}; "
          f"2 over 1: {rates[2] / rates[1]:.2f}")
    return 0 if valid else 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webhooks", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000, help="events per round (default 2000)")
    args = parser.parse_args()
    return with_stack("webhooks", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
