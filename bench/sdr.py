"""bench-sdr: the sales pipeline over one business with 100,000 leads, against plain SQL reading the same rows in
the same run.

Seeds the leads straight into the sdr schema (COPY, as bench-leads does; a tenth with an inbound call in the last
30 days, so the demo segments are populated), enables SDR with every automation on, then times:
- GET /api/sdr/pipeline (the default page of 100): gateway -> gRPC -> sdr service (every lead's signals in one
  statement, every lead segmented, the page's next actions with the compliance facts) -> JSON;
- the baseline: the same signals statement (the same columns) over asyncpg, nothing else;
- POST /api/sdr/run with dryRun (every actionable lead's next action decided with the compliance facts), a few
  times.
p50/p99 of each in ms. Goals (issue 31): pipeline page p50 < 50 ms, dry run < 10 s.

    make bench-sdr [ARGS="--leads 100000 --requests 20 --dry-runs 3"]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

import aiohttp
import asyncpg

from bench.harness import signed_up, with_stack
from bench.leads import COLUMNS, seed_rows
from services.sdr.pipeline_service import SIGNAL_COLUMNS

SIGNALS_SQL = f"""
SELECT {", ".join(f"l.{c}" for c in SIGNAL_COLUMNS)}, i.last_inbound_call, i.last_inbound, i.first_inbound
FROM sdr.leads l LEFT JOIN (
  SELECT lead_id, max(occurred_at) FILTER (WHERE channel = 'call') AS last_inbound_call,
         max(occurred_at) AS last_inbound, min(occurred_at) AS first_inbound
  FROM sdr.interactions WHERE business_id = $1 AND direction = 'inbound' GROUP BY lead_id) i ON i.lead_id = l.id
WHERE l.business_id = $1
"""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def line(name: str, samples: list[float]) -> float:
    p50, p99 = percentiles(samples)
    print(f"  {name:<28} {p50:>9.1f} {p99:>9.1f} {len(samples):>5}")
    return p50


async def timed(n: int, step) -> list[float]:
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


async def run(args, stack) -> int:
    base = stack.base_url
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signup, key = await signed_up(http, base, "Bench SDR", "sdr-bench@example.com")
        business_id = signup["business_id"]
        auth = {"Authorization": f"Bearer {key}"}
        conn = await asyncpg.connect(stack.database_url)
        try:
            await seed(conn, business_id, args.leads, datetime.now(timezone.utc))
            async with http.put(f"{base}/api/sdr/config", headers=auth, json={
                    "businessId": business_id, "enabled": True, "auto_call": True, "auto_sms": True,
                    "auto_email": True}) as r:
                assert r.status == 200, await r.text()

            async def page():
                async with http.get(f"{base}/api/sdr/pipeline", headers=auth,
                                    params={"businessId": business_id}) as r:
                    body = await r.json()
                    assert r.status == 200 and body["summary"]["total_leads"] == args.leads, str(body)[:300]

            async def bare():
                rows = await conn.fetch(SIGNALS_SQL, uuid.UUID(business_id))
                assert len(rows) == args.leads

            async def dry_run():
                async with http.post(f"{base}/api/sdr/run", headers=auth,
                                     json={"businessId": business_id, "dryRun": True}) as r:
                    body = await r.json()
                    assert r.status == 200, str(body)[:300]
                    dry_run.summary = body["summary"]

            await page()  # warm-up: connections, prepared statements
            print(f"one business, {args.leads:,} leads; sequential requests; ms")
            print(f"  {'case':<28} {'p50':>9} {'p99':>9} {'n':>5}")
            api = line("GET /api/sdr/pipeline", await timed(args.requests, page))
            sql = line("signals SQL alone (asyncpg)", await timed(args.requests, bare))
            dry = line("POST /api/sdr/run dryRun", await timed(args.dry_runs, dry_run))
        finally:
            await conn.close()
    print(f"dry run summary: {dry_run.summary}")
    print(f"pipeline page p50 {api:.0f} ms (goal < 50; {api / sql:.1f}x the signals statement alone), dry run p50 "
          f"{dry / 1000:.1f} s (goal < 10)")
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
