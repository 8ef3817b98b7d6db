"""bench-sdr: the sales pipeline over one business with 100,000 leads, against plain SQL reading the same rows in
the same run.

Seeds the leads straight into the sdr schema (COPY, as bench-leads does; a tenth with an inbound call in the last
30 days, so the demo segments are populated), enables SDR with every automation on, then times:
- the first GET /api/sdr/pipeline after the config is saved (every lead is due: computed and stored once);
- GET /api/sdr/pipeline (the default page of 100): gateway -> gRPC -> sdr service (the leads due computed, the
  counts and the page read from the stored segments, the page's next actions with the compliance facts) -> JSON;
- the baseline: the same two statements (the counts, the page's rows) over asyncpg, nothing else;
- POST /api/sdr/run with dryRun (every actionable lead's next action decided with the compliance facts), a few
  times.
p50/p99 of each in ms. Goals (issue 31): pipeline page p50 < 50 ms, dry run < 10 s.

    make bench-sdr [ARGS="--leads 100000 --requests 20 --dry-runs 3"]
"""
from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg

from bench.harness import judged, report, signed_up, with_stack
from bench.leads import COLUMNS, seed_rows
from deploy.local.stack import Stack
from services.sdr.pipeline_store import SHOWN_COLUMNS
from services.sdr.schema import SIGNAL_COLUMNS

COUNTS_SQL = "SELECT pipeline_next, count(*) FROM sdr.leads WHERE business_id = $1 GROUP BY pipeline_next"
PAGE_SQL = f"""
SELECT {", ".join((*SIGNAL_COLUMNS, *SHOWN_COLUMNS))} FROM sdr.leads WHERE business_id = $1
ORDER BY pipeline_segment, score DESC, created_at DESC, id DESC LIMIT 100
"""
PAGE_GOAL_MS, DRY_RUN_GOAL_S = 50, 10  # issue 31


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def line(name: str, samples: list[float]) -> float:
    p50, p99 = percentiles(samples)
    print(f"  {name:<28} {p50:>9.1f} {p99:>9.1f} {len(samples):>5}")
    return p50


async def timed(n: int, step: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await step()
        samples.append(time.perf_counter() - started)
    return samples


async def seed(conn: asyncpg.Connection, business_id: str, count: int, now: datetime) -> None:
    started = time.perf_counter()
    await conn.copy_records_to_table("leads", schema_name="sdr", columns=COLUMNS,
                                     records=seed_rows([business_id], count, now))
    rng = random.Random(11)
    ids = await conn.fetch("SELECT id FROM sdr.leads WHERE business_id = $1", uuid.UUID(business_id))
    callers = rng.sample([r["id"] for r in ids], len(ids) // 10)
    await conn.copy_records_to_table(
        "interactions", schema_name="sdr",
        columns=("lead_id", "business_id", "channel", "direction", "reference", "occurred_at"),
        records=((lead, uuid.UUID(business_id), "call", "inbound", f"seed-{n}",
                  now - timedelta(seconds=rng.randrange(30 * 86400))) for n, lead in enumerate(callers)))
    await conn.execute("ANALYZE sdr.leads; ANALYZE sdr.interactions")
    print(f"seeded {count:,} leads ({len(callers):,} with an inbound call) in {time.perf_counter() - started:.1f} s")


async def vacuumed(conn: asyncpg.Connection, patience: float = 90) -> None:
    """Wait for autovacuum to pass over the leads after the first read rewrote them all (their old versions make
    the counts scan the heap instead of the index alone); after `patience` seconds, vacuum them as it would."""
    started = time.perf_counter()
    before = await conn.fetchval("SELECT autovacuum_count FROM pg_stat_user_tables "
                                 "WHERE schemaname = 'sdr' AND relname = 'leads'")
    while time.perf_counter() - started < patience:
        if await conn.fetchval("SELECT autovacuum_count FROM pg_stat_user_tables "
                               "WHERE schemaname = 'sdr' AND relname = 'leads'") > before:
            print(f"  (autovacuum passed over the leads after {time.perf_counter() - started:.0f} s)")
            return
        await asyncio.sleep(1)
    await conn.execute("VACUUM (ANALYZE) sdr.leads")
    print(f"  (no autovacuum within {patience:.0f} s: vacuumed the leads as it would)")


async def run(args: argparse.Namespace, stack: Stack) -> int:
    base = stack.base_url
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signup, key = await signed_up(http, base, "Bench SDR", "sdr-bench@example.com", stack.database_url)
        business_id = signup["business_id"]
        auth = {"Authorization": f"Bearer {key}"}
        conn = await asyncpg.connect(stack.database_url)
        try:
            await seed(conn, business_id, args.leads, datetime.now(UTC))
            async with http.put(f"{base}/api/sdr/config", headers=auth, json={
                    "businessId": business_id, "enabled": True, "auto_call": True, "auto_sms": True,
                    "auto_email": True}) as r:
                assert r.status == 200, await r.text()

            async def page() -> None:
                async with http.get(f"{base}/api/sdr/pipeline", headers=auth,
                                    params={"businessId": business_id}) as r:
                    body = await r.json()
                    assert r.status == 200 and body["summary"]["total_leads"] == args.leads, str(body)[:300]

            async def bare() -> None:
                counts = await conn.fetch(COUNTS_SQL, uuid.UUID(business_id))
                rows = await conn.fetch(PAGE_SQL, uuid.UUID(business_id))
                assert sum(c[1] for c in counts) == args.leads and len(rows) == 100

            summary: dict[str, Any] = {}

            async def dry_run() -> None:
                async with http.post(f"{base}/api/sdr/run", headers=auth,
                                     json={"businessId": business_id, "dryRun": True}) as r:
                    body = await r.json()
                    assert r.status == 200, str(body)[:300]
                    summary.update(body["summary"])

            started = time.perf_counter()
            await page()  # every lead is due after the config change: this read computes and stores them all
            first = time.perf_counter() - started
            print(f"one business, {args.leads:,} leads; sequential requests; ms")
            print(f"  {'first read (computes all)':<28} {first * 1000:>9.1f}")
            print(f"  {'the next read, before vacuum':<28} {min(await timed(3, page)) * 1000:>9.1f}")
            await vacuumed(conn)
            print(f"  {'case':<28} {'p50':>9} {'p99':>9} {'n':>5}")
            api = line("GET /api/sdr/pipeline", await timed(args.requests, page))
            sql = line("counts + page SQL (asyncpg)", await timed(args.requests, bare))
            dry = line("POST /api/sdr/run dryRun", await timed(args.dry_runs, dry_run))
        finally:
            await conn.close()
    print(f"dry run summary: {summary}")
    print(f"pipeline page p50 {api:.0f} ms (goal < {PAGE_GOAL_MS}; {api / sql:.1f}x its two statements alone), "
          f"dry run p50 {dry / 1000:.1f} s (goal < {DRY_RUN_GOAL_S})")
    report("bench.sdr", f"GET /api/sdr/pipeline (default page), {args.leads:,} leads (baseline: its two statements)",
           api, "ms p50", sql, api / sql, f"p50 < {PAGE_GOAL_MS} ms", judged(api < PAGE_GOAL_MS))
    report("bench.sdr", f"POST /api/sdr/run dryRun, {args.leads:,} leads", dry / 1000, "s p50", None, None,
           f"p50 < {DRY_RUN_GOAL_S} s", judged(dry / 1000 < DRY_RUN_GOAL_S))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sdr", description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=100_000, help="leads of the business (default 100000)")
    parser.add_argument("--requests", type=int, default=20, help="pipeline reads (default 20)")
    parser.add_argument("--dry-runs", type=int, default=3, help="dry runs (default 3)")
    args = parser.parse_args()
    return with_stack("sdr", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
