"""A slow voice provider must not hold database connections: agent updates against a provider that takes
5 s per call, next to unrelated reads, measured in one run.

On the embedded stack: 10 agents; the simulator delays every assistant PATCH by --delay seconds; --updates
concurrent PATCH /api/v1/agents spread over the agents; meanwhile GET /api/v1/agents (a read that needs no
provider) runs in a loop and pg_stat_activity is sampled for the agents service's connections. The baseline is
the same read loop on the same stack with no updates in flight. Printed: read latency (p50, max) with and
without the slow updates and their ratio, the most agents connections open and "idle in transaction" at
once, and how the updates ended. Timings are reported, never asserted.

Run: `PYTHONPATH=.:protos .venv/bin/python -m bench.slow_provider` (`make bench-slow-provider`).
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg

from bench.harness import judged, report, sign_in
from deploy.local.servers import free_port
from deploy.local.stack import Stack

AGENTS = 10


async def _json(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> tuple[int, dict[str, Any]]:
    async with session.request(method, url, **kw) as r:
        return r.status, await r.json(content_type=None)


async def full_key(session: aiohttp.ClientSession, base: str) -> tuple[str, str]:
    status, signup = await _json(session, "POST", f"{base}/api/v1/signup", json={
        "business_name": "Slow Provider Co", "email": f"bench-{uuid.uuid4().hex[:8]}@example.com"})
    assert status == 200, signup
    jar = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with jar:
        await sign_in(jar, signup["dashboard_magic_link"])
        status, key = await _json(jar, "POST", f"{base}/api/v1/keys", json={"name": "bench", "scopes": ["*"]})
        assert status == 201, key
    return key["key"], signup["business_id"]


async def read_loop(session: aiohttp.ClientSession, base: str, headers: dict[str, Any], stop: asyncio.Event, latencies: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        status, body = await _json(session, "GET", f"{base}/api/v1/agents?limit=5", headers=headers)
        assert status == 200, body
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(0.1)


async def sample_connections(database_url: str, stop: asyncio.Event, peaks: dict[str, Any]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        while not stop.is_set():
            rows = await conn.fetch("SELECT state, now() - state_change > interval '1 second' AS long "
                                    "FROM pg_stat_activity WHERE application_name = 'agents'")
            peaks["open"] = max(peaks["open"], len(rows))
            # A transaction left open across a provider call (not the moment between BEGIN and its statement).
            peaks["idle_in_transaction"] = max(peaks["idle_in_transaction"],
                                               sum(r["state"] == "idle in transaction" and r["long"] for r in rows))
            await asyncio.sleep(0.1)
    finally:
        await conn.close()


def summary(latencies: list[float]) -> str:
    return f"p50 {statistics.median(latencies) * 1000:7.1f} ms  max {max(latencies) * 1000:8.1f} ms  n={len(latencies)}"


async def run(args: argparse.Namespace, stack: Stack) -> int:
    base, sim = stack.base_url, f"http://127.0.0.1:{stack.process('voice-simulator').port}"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        key, business_id = await full_key(session, base)
        headers = {"Authorization": f"Bearer {key}"}
        agent_ids = []
        for n in range(AGENTS):
            status, agent = await _json(session, "POST", f"{base}/api/v1/agents", headers=headers, json={
                "business_id": business_id, "name": f"Agent {n}", "system_prompt": "You answer the phone."})
            assert status == 201, agent
            agent_ids.append(agent["id"])

        baseline: list[float] = []
        stop = asyncio.Event()
        loop = asyncio.create_task(read_loop(session, base, headers, stop, baseline))
        await asyncio.sleep(args.baseline_seconds)
        stop.set()
        await loop

        status, _ = await _json(session, "POST", f"{sim}/_simulator/faults", json={
            "method": "PATCH", "path": "/assistant", "status": 0, "delay_seconds": args.delay, "times": args.updates})
        assert status == 201
        during: list[float] = []
        peaks = {"open": 0, "idle_in_transaction": 0}
        stop = asyncio.Event()
        background = [asyncio.create_task(read_loop(session, base, headers, stop, during)),
                      asyncio.create_task(sample_connections(stack.database_url, stop, peaks))]
        started = time.perf_counter()
        updates = await asyncio.gather(*(
            _json(session, "PATCH", f"{base}/api/v1/agents", headers=headers,
                  json={"id": agent_ids[n % AGENTS], "first_message": f"Hello, update {n}."})
            for n in range(args.updates)))
        elapsed = time.perf_counter() - started
        stop.set()
        await asyncio.gather(*background)
        await _json(session, "DELETE", f"{sim}/_simulator/faults")

    outcomes: dict[str, int] = {}
    for status, body in updates:
        what = str(status) if status == 200 else f"{status} {body.get('error', {}).get('code')}"
        outcomes[what] = outcomes.get(what, 0) + 1
    print(f"{args.updates} concurrent agent updates over {AGENTS} agents, provider delay {args.delay:.0f} s per call")
    print(f"  reads alone          {summary(baseline)}")
    print(f"  reads during updates {summary(during)}")
    during_p50, alone_p50 = statistics.median(during) * 1000, statistics.median(baseline) * 1000
    print(f"  ratio (p50 during / p50 alone): {during_p50 / alone_p50:.2f}")
    print(f"  agents connections: at most {peaks['open']} open, {peaks['idle_in_transaction']} idle in transaction "
          "for over 1 s")
    print(f"  updates: {outcomes} in {elapsed:.1f} s")
    report("bench.slow_provider", f"GET /api/v1/agents during {args.updates} agent updates, provider "
           f"{args.delay:g} s per call (baseline: no updates)", during_p50, "ms p50", alone_p50,
           during_p50 / alone_p50, "no agents connection idle in transaction > 1 s",
           judged(peaks["idle_in_transaction"] == 0))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--delay", type=float, default=5.0)
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="switchboard-bench-"))
    stack = Stack(home=home, http_port=free_port(), durable=False, extra_env={"KEY_RATE_LIMIT_PER_MINUTE": "100000"})
    try:
        stack.start()
        return asyncio.run(run(args, stack))
    finally:
        stack.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
