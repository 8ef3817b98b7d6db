"""bench-retention: what the retention sweep (core.retention) costs on a million rows, on a fresh PostgreSQL
(fsync on, as in production), against a plain DELETE of the same rows measured in the same run.

An outbox (sdr.outbox, as migrated) holds --rows published events past their retention, --kept published within
it and as many never published (which stay however old), each with a payload of about 200 bytes; VACUUM ANALYZE.
- sweep: RetentionSweep's rounds (batches of --batch, each its own transaction, SKIP LOCKED) until none is due:
  rows per second, and each batch's transaction time p50/p99/max (how long it holds its row locks: the most a
  writer of those rows could wait; the table itself is never locked against writers);
- idle: a round when nothing is due (the index probe every RETENTION_INTERVAL_SECONDS): ms;
- baseline: the table filled again the same way, then one `DELETE ... WHERE published_at < cutoff` of the same
  rows in one transaction (which holds all of their locks until it ends): rows per second.
The ratio is the sweep's rows per second over the plain DELETE's: the price of short transactions (a commit, with
its fsync, per batch). The goal is the sweep's own: at least RATE_GOAL rows per second (so that a backlog of days drains
in minutes) with no batch holding its locks longer
than BATCH_GOAL_MS (p99). Every due row must be gone, and every other row still there,
or the run is invalid.

    make bench-retention [ARGS="--rows 1000000 --kept 100000 --batch 1000"]
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import asyncpg
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bench.harness import judged, report
from core.db import create_engine
from core.ids import utcnow
from core.migrations import upgrade_all
from core.retention import RetentionSweep, Rule, claimed, published_outbox
from deploy.local.servers import Postgres
from services.sdr.schema import outbox

KEEP = timedelta(days=3)
RATE_GOAL = 10_000.0  # rows per second the sweep deletes, at least
BATCH_GOAL_MS = 200.0  # and no batch's statement longer than this (p99)

_FILL = """
INSERT INTO sdr.outbox (event_id, type, business_id, occurred_at, data, published_at)
SELECT gen_random_uuid(), 'lead.created', gen_random_uuid(), $1::timestamptz,
       jsonb_build_object('lead_id', gen_random_uuid(), 'name', 'Lead ' || n, 'note', repeat('x', 120)), $1::timestamptz
FROM generate_series(1, $2) AS n
"""


async def fill(url: str, rows: int, kept: int) -> None:
    """An empty outbox, then `rows` past retention, `kept` within it and `kept` never published (oldest of all)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("TRUNCATE sdr.outbox")
        now = utcnow()
        await conn.execute(_FILL, now - KEEP - timedelta(days=1), rows)
        await conn.execute(_FILL, now - KEEP + timedelta(hours=1), kept)
        await conn.execute(_FILL.replace(", $1::timestamptz\nFROM", ", NULL\nFROM"), now - 10 * KEEP, kept)
        await conn.execute("VACUUM ANALYZE sdr.outbox")
    finally:
        await conn.close()


async def counts(url: str) -> tuple[int, int, int]:
    """Rows past retention, published within it, never published."""
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(
            "SELECT count(*) FILTER (WHERE published_at < $1), count(*) FILTER (WHERE published_at >= $1), "
            "count(*) FILTER (WHERE published_at IS NULL) FROM sdr.outbox", utcnow() - KEEP)
        return row[0], row[1], row[2]
    finally:
        await conn.close()


class Timed:
    """The rule, with each batch's transaction timed."""

    def __init__(self, rule: Rule):
        self.rule = rule
        self.ms: list[float] = []

    def timed(self) -> Rule:
        async def delete(conn: AsyncConnection, cutoff: datetime, limit: int) -> int:
            started = time.perf_counter()
            deleted = await self.rule.delete(conn, cutoff, limit)
            self.ms.append((time.perf_counter() - started) * 1000)
            return deleted
        return Rule(self.rule.name, self.rule.keep, delete)


async def swept(url: str, batch: int) -> tuple[float, list[float], float, str]:
    """Seconds to sweep every due row, each batch's ms (its statement; its commit is in the total), the ms of an
    idle round, and the plan of a batch."""
    engine = create_engine(url)
    try:
        timed = Timed(published_outbox(outbox, KEEP))
        sweep = RetentionSweep(engine, [timed.timed()], batch=batch)
        async with engine.connect() as conn:
            plan = "\n".join(row[0] for row in await conn.execute(sa.text("EXPLAIN " + str(
                _compiled(engine, batch)))))
        started = time.perf_counter()
        while await sweep.round():
            pass
        seconds = time.perf_counter() - started
        batches = list(timed.ms)
        idle = []
        for _ in range(20):
            began = time.perf_counter()
            await sweep.round()
            idle.append((time.perf_counter() - began) * 1000)
        return seconds, batches, statistics.median(idle), plan
    finally:
        await engine.dispose()


def _compiled(engine: AsyncEngine, batch: int) -> str:
    statement = claimed(outbox, outbox.c.published_at < utcnow() - KEEP, batch)
    return str(statement.compile(engine.sync_engine, compile_kwargs={"literal_binds": True}))


async def plain_delete(url: str) -> float:
    conn = await asyncpg.connect(url)
    try:
        started = time.perf_counter()
        await conn.execute("DELETE FROM sdr.outbox WHERE published_at < $1", utcnow() - KEEP)
        return time.perf_counter() - started
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--kept", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="switchboard-bench-retention-"))
    postgres = Postgres(home, durable=True)
    try:
        print("starting PostgreSQL and migrating ...", flush=True)
        postgres.start()
        upgrade_all(postgres.url)
        print(f"filling {args.rows:,} rows past retention, {args.kept:,} within, {args.kept:,} never published ...",
              flush=True)
        asyncio.run(fill(postgres.url, args.rows, args.kept))
        seconds, batches, idle_ms, plan = asyncio.run(swept(postgres.url, args.batch))
        after_sweep = asyncio.run(counts(postgres.url))
        asyncio.run(fill(postgres.url, args.rows, args.kept))
        plain = asyncio.run(plain_delete(postgres.url))
        after_plain = asyncio.run(counts(postgres.url))
    finally:
        postgres.stop()
        shutil.rmtree(home, ignore_errors=True)
    valid = after_sweep == after_plain == (0, args.kept, args.kept)
    batches.sort()
    p50, p99 = statistics.median(batches), batches[min(len(batches) - 1, int(len(batches) * 0.99))]
    ratio = plain / seconds
    print("a batch's plan:", *(f"    {line}" for line in plan.splitlines()), sep="\n")
    print(f"sweep        {args.rows:,} rows in {seconds:.1f} s: {args.rows / seconds:>10,.0f} rows/s   "
          f"{len(batches)} batches of {args.batch}: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {batches[-1]:.1f} ms")
    print(f"idle round   {idle_ms:.2f} ms (nothing due)")
    print(f"plain DELETE {args.rows:,} rows in {plain:.1f} s: {args.rows / plain:>10,.0f} rows/s (one transaction)")
    print(f"ratio        {ratio:.2f} (sweep rows/s over plain DELETE rows/s)   goal: >= {RATE_GOAL:,.0f} rows/s, p99 "
          f"batch <= {BATCH_GOAL_MS:g} ms" + ("" if valid else f"   INVALID: left {after_sweep} / {after_plain}"))
    report("bench.retention", f"core.retention sweep of {args.rows:,} outbox rows, batches of {args.batch}",
           args.rows / seconds, "rows/s", args.rows / plain, ratio,
           f">= {RATE_GOAL:,.0f} rows/s, p99 batch <= {BATCH_GOAL_MS:g} ms",
           judged(args.rows / seconds >= RATE_GOAL and p99 <= BATCH_GOAL_MS, valid), p50_ms=p50, p99_ms=p99)


if __name__ == "__main__":
    main()
