"""bench-export (calls): a business with a million calls exported page by page through the calls service's
`ExportPage` (services.calls.export_pages), as the accounts service's export job asks it: the time, the pages' latency,
and the calls process's resident memory (peak while paging, against its idle size before), which must not grow with
the number of calls (one page at a time).

The calls are seeded straight into the calls schema (INSERT ... SELECT over generate_series, in batches), each as an
ended call holds them: about 1.3 kB of transcript, a summary, collected data, a recording link, one tool call in five,
two calls at each second (ties across page breaks); another business holds --others calls. VACUUM ANALYZE, then the
walk: --limit records a page (pages end earlier at core.export_page.MAX_BYTES), each page a fresh request with the
previous page's cursor, one at a time. The run is invalid unless every one of the business's calls comes exactly once,
newest first, and no other business's.

    make bench-export [ARGS="--calls 1000000 --limit 1000"]
"""
from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import uuid
from typing import Any

import asyncpg
import grpc
import psutil

from bench.harness import judged, report, with_stack
from core.export_page import MAX_LIMIT
from core.tenant import acting_for
from deploy.local.stack import Stack
from switchboard.v1 import calls_pb2_grpc, common_pb2
from tests.tenants import signed

BATCH = 100_000  # calls a seeding statement
RSS_GOAL_MB = 150  # the calls process may grow by at most this while exporting, however many calls
SEED = """
INSERT INTO calls.calls (id, business_id, agent_id, agent_name, direction, status, to_number, from_number,
                         max_duration, compliance, variables, duration, answered, cost_cents, provider_call_id,
                         ended_reason, summary, recording_url, transcript, structured_data, started_at, ended_at,
                         reported_at, created_at, updated_at)
SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'Front desk', CASE WHEN n % 3 = 0 THEN 'inbound' ELSE 'outbound' END,
       'completed', '+1415' || lpad((n % 10000000)::text, 7, '0'), '+14155550100', 600, 'skip',
       jsonb_build_object('name', 'Pat ' || n), 60 + n % 500, true, 12, $4 || '-' || n, 'customer-ended-call',
       'The caller asked for a quote for a water heater and booked a visit (call ' || n || ').',
       'https://recordings.example/' || n || '.wav',
       'AI: Thanks for calling Acme Plumbing, how can I help?' || repeat(E'\\nUser: My water heater is leaking again, '
       || 'call ' || n || E'.\\nAI: I am sorry to hear that. When would suit you for a visit?', 10),
       jsonb_build_object('intent', 'quote', 'email', 'pat' || n || '@example.com'),
       at - interval '2 minutes', at - interval '1 minute', at, at, at
FROM generate_series($3::int, $3::int + $5::int - 1) AS n,
     LATERAL (SELECT now() - (n / 2) * interval '1 second' AS at) AS t
"""
TOOL_CALLS = """
INSERT INTO calls.tool_calls (call_id, tool_call_id, name, arguments, result, outcome, duration_ms, created_at)
SELECT id, 'tc-' || provider_call_id, 'book_appointment', jsonb_build_object('day', 'Saturday'), 'Booked', 'ok', 420,
       created_at
FROM calls.calls WHERE business_id = $1::uuid AND provider_call_id LIKE $2 || '-%'
  AND right(provider_call_id, 1) IN ('0', '5')
"""


async def seed(database_url: str, business_id: str, count: int, prefix: str) -> float:
    """`count` ended calls of the business (and their tool calls); the seconds it took."""
    started = time.perf_counter()
    conn = await asyncpg.connect(database_url)
    try:
        agent_id = str(uuid.uuid4())
        for start in range(1, count + 1, BATCH):
            await conn.execute(SEED, business_id, agent_id, start, prefix, min(BATCH, count - start + 1))
            print(f"    seeded {min(start + BATCH - 1, count):,} calls of {business_id[:8]}", flush=True)
        await conn.execute(TOOL_CALLS, business_id, prefix)
    finally:
        await conn.close()
    return time.perf_counter() - started


async def analyze(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("VACUUM ANALYZE calls.calls")
        await conn.execute("VACUUM ANALYZE calls.tool_calls")
    finally:
        await conn.close()


class PeakRss:
    """The peak resident memory of a process (and its children), sampled every `every` seconds in a thread."""

    def __init__(self, pid: int, every: float = 0.02):
        self.proc, self.every = psutil.Process(pid), every
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def now(self) -> int:
        return sum(p.memory_info().rss for p in (self.proc, *self.proc.children(recursive=True)))

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self.now())

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


async def walk(stack: Stack, business_id: str, limit: int) -> tuple[int, list[float], bool]:
    """Every call of the business through ExportPage, a page at a time: how many, each page's seconds, and whether
    they came newest first, each once, all the business's."""
    port = stack.process("calls").port
    ours = f'"business_id":"{business_id}"'
    count, latencies, ordered, last_key = 0, [], True, None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = calls_pb2_grpc.CallsStub(channel)  # type: ignore[no-untyped-call]  # generated, unannotated
        after = ""
        while True:
            metadata = signed(stack, acting_for(business_id, "export"), "accounts", to="calls")
            started = time.perf_counter()
            page = await stub.ExportPage(common_pb2.ExportPageRequest(
                business_id=business_id, export_id="bench", kind="calls", after=after, limit=limit), metadata=metadata)
            latencies.append(time.perf_counter() - started)
            count += len(page.lines)
            ordered = ordered and all(ours in line for line in page.lines)
            if page.lines:  # within a page the query orders; across pages, the first must follow the last
                first, last = (key_of(page.lines[0]), key_of(page.lines[-1]))
                ordered = ordered and (last_key is None or first < last_key) and last <= first
                last_key = last
            if not page.next_after:
                return count, latencies, ordered
            after = page.next_after


def key_of(line: str) -> tuple[str, str]:
    """A line's (created_at, id), compared as the export orders them (newest first)."""
    record = json.loads(line)
    return record["created_at"], record["id"]


async def run(stack: Stack, calls: int, others: int, limit: int) -> int:
    business_id, other_id = str(uuid.uuid4()), str(uuid.uuid4())
    print(f"seeding {calls:,} calls of one business and {others:,} of another ...", flush=True)
    seconds = await seed(stack.database_url, business_id, calls, "ours")
    seconds += await seed(stack.database_url, other_id, others, "theirs")
    await analyze(stack.database_url)
    print(f"    seeded in {seconds:.0f} s; vacuumed and analyzed", flush=True)
    pid = stack.process("calls").proc
    assert pid is not None
    meter = PeakRss(pid.pid)
    idle = meter.now()
    cpu = psutil.Process(pid.pid).cpu_times()
    started = time.perf_counter()
    with meter:
        count, latencies, ordered = await walk(stack, business_id, limit)
    elapsed = time.perf_counter() - started
    spent = psutil.Process(pid.pid).cpu_times()
    cpu_s = spent.user + spent.system - cpu.user - cpu.system
    valid = count == calls and ordered
    grown_mb = (meter.peak - idle) / 2**20
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    print(f"exported {count:,} calls in {len(latencies):,} pages of up to {limit} in {elapsed:.1f} s: "
          f"{count / elapsed:,.0f} calls/s; page p50 {quantiles[49] * 1000:.0f} ms, p99 {quantiles[98] * 1000:.0f} ms")
    print(f"    calls process: RSS {idle / 2**20:.0f} MB idle, {meter.peak / 2**20:.0f} MB peak (+{grown_mb:.0f} MB); "
          f"CPU {cpu_s:.1f} s ({cpu_s * 1e6 / max(count, 1):.0f} us a call)")
    if not valid:
        print(f"INVALID: {count:,} of {calls:,} calls, order and business {'kept' if ordered else 'broken'}")
    print(report("export-calls", f"ExportPage calls x{calls}, limit {limit}", round(count / elapsed), "calls/s", None,
                 None, f"calls RSS growth < {RSS_GOAL_MB} MB", judged(grown_mb < RSS_GOAL_MB, valid),
                 p50_ms=round(quantiles[49] * 1000, 1), p99_ms=round(quantiles[98] * 1000, 1)))
    return 0 if valid else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--others", type=int, default=100_000, help="calls of another business")
    parser.add_argument("--limit", type=int, default=1000, help=f"records a page (at most {MAX_LIMIT})")
    args = parser.parse_args()
    return with_stack("export", lambda stack: run(stack, args.calls, args.others, args.limit))


if __name__ == "__main__":
    raise SystemExit(main())
