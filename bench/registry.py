"""bench-registry: the national do-not-call registry's import (python -m services.messaging.registry) and what it
costs the compliance decision, on a fresh embedded PostgreSQL (fsync on, as in production).

1. Import: full files of 10 million numbers (four area codes, 2.5 million each, in number order as the FTC gives
   them), generated into a temporary folder, imported as the command does (COPY into a staging table, one
   transaction per file): rows per second. Then a change file (100,000 additions and deletions) and one area code's
   full file again (a monthly refresh replacing 2.5 million numbers).
2. The lookup: the statement that reads a callee's standing (services.messaging.store.standings: the business's
   list, consent history and the registry in one) for one phone of a loaded area code, and of one never loaded;
   and for 5,000 phones at once (a communication run's preview): its cost per decision.
3. The decision: core.compliance.decision.decide over bench.compliance's pairs, with no registry facts and with
   them (the area codes checked, 30% of the numbers listed, consent exempting them): decisions per second, which must
   stay above the compliance bench's goal.

    make bench-registry [ARGS="--numbers 10000000 --rounds 3"]
"""
from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from bench.compliance import GOAL, Pair, decided, pairs, rate
from bench.harness import judged, report
from core import db
from core.compliance import decision as compliance
from core.ids import new_id
from core.migrations import upgrade_all
from deploy.local.servers import Postgres
from services.messaging import registry, store
from services.messaging.national_registry import Subscription

AREA_CODES = (415, 212, 305, 512)  # every area code of the run is subscribed
CHANGES = 100_000
LOOKUPS = 2_000
BATCH = 5_000
IMPORT_GOAL = 10 * 60  # seconds for 10 million numbers ("in minutes")


def full_file(folder: Path, area: int, count: int, rng: random.Random) -> tuple[Path, list[int]]:
    """A full file of `count` numbers of `area` (exchanges 200-999) in number order; the path and a sample of its
    numbers (for the lookups)."""
    path = folder / f"2026-01-01-full-{area}.txt"
    span = 800 * 10_000  # the area code's numbers with a valid exchange
    sample = []
    with path.open("w") as out:
        lines = []
        for i in range(count):  # the i-th number within its own share of the span: distinct and in order
            low, high = i * span // count, (i + 1) * span // count
            number = area * 10_000_000 + 2_000_000 + low + rng.randrange(high - low)
            lines.append(f"{number}\n")
            if i % 1000 == 0:
                sample.append(number)
            if len(lines) == 100_000:
                out.writelines(lines)
                lines = []
        out.writelines(lines)
    return path, sample


def change_file(folder: Path, listed: list[int], rng: random.Random) -> Path:
    path = folder / "2026-01-02-change.txt"
    with path.open("w") as out:
        for i in range(CHANGES):
            if i % 2:
                out.write(f"{rng.choice(listed)},D,20260102\n")
            else:
                out.write(f"{rng.choice(AREA_CODES)}{rng.randint(2_000_000, 9_999_999)},A,20260102\n")
    return path


async def imported(url: str, paths: list[Path]) -> tuple[float, list[str]]:
    lines: list[str] = []
    began = time.perf_counter()
    status = await registry.import_paths(url, paths, Subscription.of(tuple(map(str, AREA_CODES))), again=True,
                                         out=lines.append)
    assert status == registry.OK, lines
    return time.perf_counter() - began, lines


async def lookups(url: str, listed: list[int]) -> dict[str, float]:
    """ms per standings statement for one phone (loaded area code, area code never loaded), and per phone of a
    batch."""
    engine = db.create_engine(url, pool_size=2)
    business_id = new_id()
    out: dict[str, float] = {}
    try:
        async with engine.connect() as conn:
            for name, phones in (("loaded", [f"+1{n}" for n in listed]),
                                 ("not loaded", [f"+1907{n % 10_000_000:07d}" for n in listed])):
                await store.standings(conn, business_id, phones[:10])  # warm: the statement prepared
                times = []
                for i in range(LOOKUPS):
                    began = time.perf_counter()
                    await store.standings(conn, business_id, [phones[i % len(phones)]])
                    times.append(time.perf_counter() - began)
                out[name] = statistics.median(times) * 1000
            batch = [f"+1{listed[i % len(listed)] + i // len(listed)}" for i in range(BATCH)]
            began = time.perf_counter()
            found = await store.standings(conn, business_id, batch)
            out["batch per phone"] = (time.perf_counter() - began) * 1000 / BATCH
            assert sum(1 for f in found.values() if f[2] is not None) == BATCH
    finally:
        await engine.dispose()
    return out


def with_registry(cases: list[Pair], listed_share: float, seed: int) -> list[Pair]:
    """The same pairs with the registry's facts: area codes checked two days before each touch, a share of the
    numbers listed (consent exempts them, so the decision goes on to the windows as without the registry)."""
    rng = random.Random(seed)
    return [(touch, callee, replace(standing, national=compliance.CHECKED, national_listed=rng.random() < listed_share,
                                    national_refreshed_at=touch.at - timedelta(days=2)))
            for touch, callee, standing in cases]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--numbers", type=int, default=10_000_000)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="switchboard-bench-registry-"))
    postgres = Postgres(home, durable=True)
    try:
        print(f"generating {args.numbers:,} numbers in {len(AREA_CODES)} full files ...", flush=True)
        files, listed = [], []
        for area in AREA_CODES:
            path, sample = full_file(home, area, args.numbers // len(AREA_CODES), rng)
            files.append(path)
            listed += sample
        changes = change_file(home, listed, rng)
        print("starting PostgreSQL and migrating ...", flush=True)
        postgres.start()
        upgrade_all(postgres.url)
        seconds, lines = asyncio.run(imported(postgres.url, files))
        per_second = args.numbers / seconds
        change_seconds, change_lines = asyncio.run(imported(postgres.url, [changes]))
        again_seconds, _ = asyncio.run(imported(postgres.url, files[:1]))
        looked = asyncio.run(lookups(postgres.url, listed))
    finally:
        postgres.stop()
        shutil.rmtree(home, ignore_errors=True)
    cases = pairs(args.pairs, args.seed)
    national = with_registry(cases, 0.3, args.seed)
    for bench_cases in (cases, national):
        decided(bench_cases[:2000])
    plain, checked = [], []
    for _ in range(args.rounds):  # alternate, so both see the same machine
        plain.append(rate(decided, cases)[0])
        checked.append(rate(decided, national)[0])
    p, c = statistics.median(plain), statistics.median(checked)
    print(*lines, sep="\n")
    print(f"import              {args.numbers:,} numbers in {seconds:.1f} s: {per_second:>10,.0f} rows/s   "
          f"(goal: within {IMPORT_GOAL // 60} minutes)")
    print(f"change file         {CHANGES:,} changes in {change_seconds:.1f} s: {CHANGES / change_seconds:,.0f} rows/s")
    print(*(f"  {line}" for line in change_lines), sep="\n")
    print(f"full file again     {args.numbers // len(AREA_CODES):,} numbers replaced in {again_seconds:.1f} s")
    print(f"lookup (standings)  one phone: {looked['loaded']:.2f} ms (area code loaded), "
          f"{looked['not loaded']:.2f} ms (never loaded); {BATCH:,} at once: {looked['batch per phone'] * 1000:.1f} "
          "us per phone")
    print(f"decide, no registry {p:>10,.0f} decisions/s")
    print(f"decide, registry    {c:>10,.0f} decisions/s   ratio {c / p:.2f}   (goal >= {GOAL:,}/s)")
    report("bench.registry", f"python -m services.messaging.registry import, {args.numbers:,} numbers", per_second,
           "rows/s", None, None, f"{args.numbers:,} in <= {IMPORT_GOAL // 60} min",
           judged(seconds <= IMPORT_GOAL * args.numbers / 10_000_000))
    report("bench.registry", "core.compliance.decision.decide with the registry's facts", c, "decisions/s", p, c / p,
           f">= {GOAL:,} decisions/s", judged(c >= GOAL),
           per_round=[x / y for x, y in zip(checked, plain, strict=True)])


if __name__ == "__main__":
    main()
