"""bench-export-archive: the export of a business with a million calls (issue 56), on a fresh PostgreSQL (fsync on, as in
production): its time and its memory, which must not grow with the archive.

The accounts service's export job (services.accounts.privacy.exports, in this process) writes --calls call records
(about 1.5 KB of JSON each, a transcript of varied text) asked of a source that makes them as the calls service's
ExportPage would, a page of 100 at a time, into the archive's parts in the database; then the archive is read back
part by part as the download does (ReadExportPart's query) and its SHA-256 checked against the job's.
- export: records per second, and the process's peak resident memory above what it held before (the figure that
  must stay flat: nothing holds more than a page);
- read: the archive read back part by part, MB per second;
- baseline: the same pages made into the same parts (tar member, gzip) in memory, with no database: records per
  second. The ratio is the export's rate over it: what storing each part and moving the cursor in one transaction
  costs. The goal: peak memory growth at most MEMORY_GOAL_MB. The archive must read back as a tar whose calls count
  --calls, with the job's SHA-256, or the run is invalid.

    make bench-export-archive [ARGS="--calls 1000000"]
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import shutil
import tarfile
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import IO

import sqlalchemy as sa

from bench.harness import judged, report
from contracts.exports import BY_NAME
from core.db import create_engine
from core.ids import utcnow
from core.migrations import upgrade_all
from core.tenant import Tenant, acting_as
from core.uow import Database
from deploy.local.servers import Postgres
from services.accounts import store
from services.accounts.privacy import export_domain as rules
from services.accounts.privacy.export_sources import PageRequest, RecordsPage
from services.accounts.privacy.exports import Exports
from services.accounts.repository import accounts_units
from services.accounts.schema import export_parts, exports
from services.accounts.secret_keys import SecretKeys
from services.accounts.servicer import PublicRecords

MEMORY_GOAL_MB = 64.0
KINDS = (BY_NAME["workspace"], BY_NAME["calls"])
WORDS = ["leak", "sink", "saturday", "plumber", "quote", "water", "heater", "kitchen", "bathroom", "pipe", "burst", "morning", "afternoon", "price", "appointment", "address", "street", "tomorrow", "invoice", "warranty", "drain", "clog", "toilet", "shower", "valve", "pressure"]
POOL = 1000  # distinct transcripts, cycled (1.5 MB of them: more than gzip's 32 KB window, so no cheap repeats)


def transcripts(seed: int = 56) -> list[str]:
    rng = random.Random(seed)
    return ["\n".join(f"{'Agent' if turn % 2 else 'Caller'}: " + " ".join(rng.choices(WORDS, k=18)).capitalize()
                      + "." for turn in range(10)) for _ in range(POOL)]


class Calls:
    """The calls service's ExportPage, made up: `total` calls as the API shows them, `limit` a page."""

    def __init__(self, total: int):
        self.total = total
        self.texts = transcripts()

    def lines(self, start: int, count: int) -> list[str]:
        return [json.dumps({
            "id": str(uuid.UUID(int=n + 1)), "conversation_id": f"conv-{n}", "status": "completed",
            "direction": "inbound", "agent_id": "7b0c2f1e-0000-4000-8000-000000000001", "to": "+14155550100",
            "from": f"+1415555{n % 10_000:04d}", "duration": 60 + n % 600, "summary": "Caller asked for a quote.",
            "transcript": self.texts[n % POOL], "recording_url": f"https://storage.example.com/rec/{n}.wav",
            "created_at": "2026-11-29T12:00:00Z"}, separators=(",", ":")) for n in range(start, start + count)]

    async def page(self, service: str, request: PageRequest) -> RecordsPage:
        start = int(request.after or 0)
        count = max(0, min(request.limit, self.total - start))
        end = start + count
        return RecordsPage(self.lines(start, count), str(end) if end < self.total else "")


def peak_rss_mb() -> float:
    """The process's peak resident memory (VmHWM), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM back to the current resident size


async def run(url: str, total: int, saved: Path) -> tuple[float, float, float, int, str, str, bool]:
    """Seconds to export, peak memory growth (MB), seconds to read back, archive bytes, the job's and the read's
    SHA-256, and whether the archive holds `total` calls (checked by streaming it through tarfile)."""
    engine = create_engine(url, pool_size=4, application_name="bench-export")
    database = Database(engine)
    try:
        now, account_id, business_id = utcnow(), str(uuid.uuid4()), str(uuid.uuid4())
        async with database.transaction() as conn:
            await store.insert_user(conn, id=account_id, email=f"{account_id}@example.com", created_at=now)
            await store.insert_business(conn, id=business_id, account_id=account_id, name="Acme Plumbing",
                                        lifecycle_state="active", metadata={}, plan_id="starter",
                                        subscription_status="active", created_at=now, updated_at=now)
        job = Exports(accounts_units(database), Calls(total), PublicRecords(), SecretKeys("bench-secret"),
                      retry_seconds=60, max_attempts=1, retention=timedelta(hours=1), link_seconds=600, kinds=KINDS)
        reset_peak()
        before = peak_rss_mb()
        started = time.perf_counter()
        with acting_as(Tenant(account_id=account_id, business_ids=(business_id,))):
            made = await job.create(business_id, None)
            await job.started.join()
        seconds = time.perf_counter() - started
        growth = peak_rss_mb() - before
        async with database.read() as conn:
            done = (await conn.execute(sa.select(exports).where(exports.c.id == made.id))).one()
        digest = hashlib.sha256()
        started = time.perf_counter()
        with open(saved, "wb") as out:  # as the download: a part at a time
            for seq in range(done.parts):
                async with database.read() as conn:
                    data = await conn.scalar(sa.select(export_parts.c.data).where(
                        export_parts.c.export_id == made.id, export_parts.c.seq == seq))
                assert data is not None, f"part {seq} is missing"
                digest.update(data)
                out.write(data)
        read = time.perf_counter() - started
        with tarfile.open(saved, mode="r|gz") as tar:  # streamed: one member at a time
            calls = sum(_lines(tar.extractfile(m)) for m in tar if m.name.startswith("calls/"))
        return seconds, growth, read, done.bytes, done.sha256 or "", digest.hexdigest(), calls == total
    finally:
        await engine.dispose()


def _lines(member: IO[bytes] | None) -> int:
    return member.read().count(b"\n") if member is not None else 0


def baseline(total: int) -> float:
    """Seconds to make the same pages into the same parts in memory (no database)."""
    source, limit = Calls(total), BY_NAME["calls"].limit
    started, stream = time.perf_counter(), rules.Stream()
    for page, start in enumerate(range(0, total, limit), 1):
        _, stream = rules.page_part("calls", page, source.lines(start, min(limit, total - start)), 0, stream,
                                    first=page == 1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="switchboard-bench-export-"))
    postgres = Postgres(home, durable=True)
    try:
        print("starting PostgreSQL and migrating ...", flush=True)
        postgres.start()
        upgrade_all(postgres.url)
        print(f"exporting a business with {args.calls:,} calls ...", flush=True)
        seconds, growth, read, size, stored, read_digest, complete = asyncio.run(run(postgres.url, args.calls, home / "archive.tar.gz"))
        bare = baseline(args.calls)
    finally:
        postgres.stop()
        shutil.rmtree(home, ignore_errors=True)
    valid = complete and stored == read_digest
    rate, bare_rate = args.calls / seconds, args.calls / bare
    print(f"export     {args.calls:,} calls in {seconds:.1f} s: {rate:>9,.0f} records/s   archive {size / 1e6:,.1f} MB   "
          f"peak memory +{growth:.1f} MB")
    print(f"read back  {size / 1e6:,.1f} MB in {read:.1f} s: {size / 1e6 / read:,.1f} MB/s (part by part, SHA-256 "
          f"{'matches' if stored == read_digest else 'DIFFERS'})")
    print(f"baseline   the same parts in memory in {bare:.1f} s: {bare_rate:>9,.0f} records/s")
    print(f"ratio      {rate / bare_rate:.2f}   goal: peak memory growth <= {MEMORY_GOAL_MB:g} MB"
          + ("" if valid else "   INVALID: the archive did not read back whole"))
    report("bench.export_archive", f"export of {args.calls:,} calls into the archive's parts", rate, "records/s", bare_rate,
           rate / bare_rate, f"peak memory growth <= {MEMORY_GOAL_MB:g} MB", judged(growth <= MEMORY_GOAL_MB, valid))


if __name__ == "__main__":
    main()
