"""A rolling restart under steady load: every gateway and service replica of a scaled-out stack (REPLICAS=2),
restarted one at a time while clients keep sending, and the requests that failed counted (goal: none).

The load: --concurrency clients, each sending, one after the other, reads that reach every service (PATHS), with
a key. The bench balances them over the gateways itself, with the stack's ingress's Balancer (deploy.local.ingress),
so that a failure names its replica: it sends each request to a gateway whose `/readyz` answered 200 at its last
poll (every POLL_SECONDS). Each replica in turn is sent SIGTERM (its graceful shutdown: unready at once, serving on for
SHUTDOWN_DELAY_SECONDS, then draining: core/grpc_server.py, gateway/serving.py), waited for, started again on its
port; the next goes once the stack is ready again and --settle seconds have passed, so every client is connected
to the new process. Any request that does not answer 200 is a failure, printed with its path, replica and answer.

Run: `make bench-rolling-restart` (several minutes: 16 restarts, two of the gateway and of each service; on a loaded
two-core machine 86,365 requests, none failed).
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING

import aiohttp

from bench.harness import judged, report, signed_up, with_stack
from core import registry
from deploy.local.ingress import POLL_SECONDS, Balancer
from deploy.local.servers import wait_for_port

if TYPE_CHECKING:
    from deploy.local.stack import Stack

# A read served by each service (the balance also asks agents and messaging).
PATHS = ("/api/v1/workspaces", "/api/v1/balance", "/api/v1/agents", "/api/v1/calls", "/api/v1/leads",
         "/api/v1/evals", "/api/v1/webhooks")

async def load(balancer: Balancer, key: str, stop: asyncio.Event, sent: Counter[str], failed: list[str]) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as http:
        for path in itertools.cycle(PATHS):
            if stop.is_set():
                return
            url = balancer.pick()
            if url is None:  # no gateway ready: an Ingress would answer 503
                failed.append(f"{path}: no gateway ready")
                await asyncio.sleep(POLL_SECONDS)
                continue
            try:
                async with http.get(url + path, headers=headers) as r:
                    status, body = r.status, await r.text()
            except aiohttp.ClientError as exc:
                status, body = 0, repr(exc)
            sent[path] += 1
            if status != 200:
                failed.append(f"{path} via {url}: {status} {body[:200]}")


async def restart(stack: Stack, name: str, settle: float) -> float:
    """Stop the replica `name` (SIGTERM) and start it again on its port; returns the seconds until the stack is
    ready again."""
    started = time.monotonic()
    process = stack.process(name)
    await asyncio.to_thread(stack.restart_process, name)
    assert process.proc is not None and process.log is not None
    await asyncio.to_thread(wait_for_port, process.port, 60, process.proc, name, process.log)
    await asyncio.to_thread(stack.wait_ready, 60)
    took = time.monotonic() - started
    await asyncio.sleep(settle)
    return took


async def run(stack: Stack, concurrency: int, settle: float) -> int:
    cookies = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=cookies) as http:
        _, key = await signed_up(http, stack.base_url, "Rolling Restart Co", f"rr-{uuid.uuid4().hex[:8]}@example.com",
                                 stack.database_url)
        for path in PATHS:  # each read answers before anything restarts
            async with http.get(stack.base_url + path, headers={"Authorization": f"Bearer {key}"}) as r:
                assert r.status == 200, f"{path}: {r.status} {await r.text()}"
        balancer = Balancer(stack.gateway_urls)
        stop = asyncio.Event()
        sent: Counter[str] = Counter()
        failed: list[str] = []
        tasks = [asyncio.create_task(balancer.poll(http, stop)),
                 *(asyncio.create_task(load(balancer, key, stop, sent, failed)) for _ in range(concurrency))]
        names = [p.name for kind in (registry.GATEWAY, *(s.name for s in registry.SERVICES))
                 for p in stack.pools[kind]]
        try:
            await asyncio.sleep(settle)
            for name in names:
                before = len(failed)
                took = await restart(stack, name, settle)
                print(f"  {name:<14} restarted, ready again in {took:4.1f} s; failed meanwhile: {len(failed) - before}",
                      flush=True)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
    total = sum(sent.values())
    print(f"\n{total} requests over {len(names)} restarts, {len(failed)} failed")
    for line, count in Counter(failed).most_common(20):
        print(f"  {count} x {line}")
    report("rolling_restart", ",".join(PATHS), len(failed), "failed requests", None, None, "0 failed",
           judged(not failed, valid=total > 0))
    return 0 if not failed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between one replica ready and the next")
    parser.add_argument("--delay", type=float, default=2.0, help="each process's SHUTDOWN_DELAY_SECONDS")
    args = parser.parse_args()
    return with_stack("rolling-restart", lambda stack: run(stack, args.concurrency, args.settle),
                      {"SHUTDOWN_DELAY_SECONDS": str(args.delay)}, replicas=2)


if __name__ == "__main__":
    raise SystemExit(main())
