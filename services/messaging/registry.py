"""The platform operator's import of the national do-not-call registry (there is no public route: no business
reaches it):

    python -m services.messaging.registry import [--again] FILE_OR_FOLDER...

Each file (services.messaging.national_registry says which are accepted) is imported in one transaction: its lines
stream through COPY into a temporary table (never a list of them all in memory), then a full file replaces the
numbers of its area codes and a change file adds and deletes its numbers, and each area code it held records the
refresh (when, by which file, how many numbers). An import stopped halfway leaves the tables as they were, and the
same files imported again give the same tables. A folder's files are imported in name order (name them so that
a full file comes before the change files after it, e.g. by date); a file already imported (same name and size) is
skipped unless --again. One import runs at a time: a second one, while the first holds the lock, is refused.

It connects with its own role's DIRECT_DATABASE_URL (DATABASE_URL when unset: a session straight to PostgreSQL,
for its lock) and loads only the area codes of NATIONAL_DNC_AREA_CODES.
Exit status: 0 when every line of every file was loaded; 1 when some were not (each file's report says which and
why) or a file could not be read; 2 when another import is running.
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import sys
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import asyncpg

from core import registry, settings
from core.db import raw_url
from core.ids import utcnow
from services.messaging.national_registry import AREA_SPAN, CHANGE, FULL, NONE, Reader, Subscription

PROCESS = registry.NATIONAL_DNC_IMPORT  # its secrets: core.registry.SECRETS
LOCK = "messaging:national-dnc-import"  # a session advisory lock (hashed like core.db.lock_until_commit's)
S = "messaging"
STAGING = "national_dnc_staging"
WORK_MEM = "256MB"  # the sort of a full file's numbers before they go into the index (in key order)
OK, PROBLEMS, BUSY = 0, 1, 2


class Busy(Exception):
    """Another import holds the lock."""


@dataclass
class Imported:
    """What one file did."""

    name: str
    kind: str | None = None  # FULL, CHANGE, or None when it held no number
    loaded: int = 0  # lines loaded
    problems: int = 0  # lines not loaded
    report: list[str] = field(default_factory=list)
    numbers: dict[int, int] = field(default_factory=dict)  # its area codes, with their numbers after it
    skipped: bool = False  # already imported
    seconds: float = 0.0

    def summary(self) -> str:
        if self.skipped:
            return f"{self.name}: already imported (same name and size), skipped; --again imports it again"
        if self.kind is None:
            return f"{self.name}: no number loaded"
        areas = ", ".join(f"{a} ({n:,} numbers)" for a, n in sorted(self.numbers.items()))
        rate = f", {self.loaded / self.seconds:,.0f} lines/s" if self.seconds else ""
        return (f"{self.name}: {self.kind} file, {self.loaded:,} lines loaded in {self.seconds:.1f} s{rate}; "
                f"area codes refreshed: {areas}")


def files_of(paths: Iterable[Path]) -> list[Path]:
    """The files named, a folder's files (not hidden) in name order."""
    found = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        else:
            found.append(path)
    return found


@contextmanager
def open_lines(path: Path) -> Iterator[IO[str]]:
    """A file's lines as text, read as they are needed: a `.gz` uncompressed, a `.zip` of one file its member's.
    A byte that is not ASCII makes its line malformed rather than stop the file."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="ascii", errors="replace") as text:
            yield text
    elif path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if not m.endswith("/")]
            if len(members) != 1:
                raise ValueError(f"a .zip must hold one file ({len(members)} here): unzip it")
            with archive.open(members[0]) as raw:
                yield io.TextIOWrapper(raw, encoding="ascii", errors="replace")
    else:
        with path.open(encoding="ascii", errors="replace") as text:
            yield text


async def connect(database_url: str) -> asyncpg.Connection:
    """A connection holding the import's lock (until it closes); Busy when another import holds it."""
    conn = await asyncpg.connect(raw_url(database_url), server_settings={"application_name": PROCESS})
    if not await conn.fetchval("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", LOCK):
        await conn.close()
        raise Busy
    return conn


async def import_paths(database_url: str, paths: Iterable[Path], subscription: Subscription, *,
                       again: bool = False, out: Callable[[str], None] = print) -> int:
    """Import the files (and folders) in turn, each file's summary and report given to `out`; the exit status."""
    try:
        conn = await connect(database_url)
    except Busy:
        out("another import of the national registry is running (it holds the lock): nothing imported; run this "
            "again when it ends")
        return BUSY
    status = OK
    try:
        for path in files_of(paths):
            try:
                done = await import_file(conn, path, subscription, again=again)
            except (OSError, ValueError, zipfile.BadZipFile) as exc:
                out(f"{path.name}: not imported, nothing of it loaded: {exc}")
                status = PROBLEMS
                continue
            out(done.summary())
            for line in done.report:
                out(f"  {line}")
            status = max(status, PROBLEMS if done.problems else OK)
    finally:
        await conn.close()
    return status


async def import_file(conn: asyncpg.Connection, path: Path, subscription: Subscription, *,
                      again: bool = False) -> Imported:
    size = path.stat().st_size
    if not again and await conn.fetchval(f"SELECT true FROM {S}.national_dnc_files WHERE name = $1 AND size = $2",
                                         path.name, size):
        return Imported(path.name, skipped=True)
    with open_lines(path) as lines:
        return await load(conn, path.name, size, lines, subscription)


async def load(conn: asyncpg.Connection, name: str, size: int, lines: Iterable[str],
               subscription: Subscription) -> Imported:
    """One file's lines, in one transaction (an error on the way rolls all of it back)."""
    started = time.monotonic()
    async with conn.transaction():
        await conn.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
        loaded = frozenset(await conn.fetchval(f"SELECT coalesce(array_agg(area_code), '{{}}') "
                                               f"FROM {S}.national_dnc_areas"))
        reader = Reader(subscription, loaded)
        await conn.execute(f"CREATE TEMPORARY TABLE {STAGING} (number bigint NOT NULL, added boolean NOT NULL, "
                           "line bigint NOT NULL) ON COMMIT DROP")
        await conn.copy_records_to_table(STAGING, records=reader.records(lines), columns=("number", "added", "line"))
        now = utcnow()
        numbers: dict[int, int] = {}
        if reader.kind == FULL:
            numbers = await _replace(conn, sorted(reader.areas))
            await conn.executemany(f"""
                INSERT INTO {S}.national_dnc_areas (area_code, refreshed_at, file, kind, numbers)
                VALUES ($1, $2, $3, 'full', $4)
                ON CONFLICT (area_code) DO UPDATE SET refreshed_at = excluded.refreshed_at, file = excluded.file,
                    kind = excluded.kind, numbers = excluded.numbers""",
                                   [(a, now, name, numbers.get(a, 0)) for a in sorted(reader.areas)])
        elif reader.kind == CHANGE:
            numbers = dict(await conn.fetch(*_changed(sorted(reader.areas), now, name)))
        await conn.execute(f"""
            INSERT INTO {S}.national_dnc_files (name, size, kind, numbers, problems, imported_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (name) DO UPDATE SET size = excluded.size, kind = excluded.kind, numbers = excluded.numbers,
                problems = excluded.problems, imported_at = excluded.imported_at""",
                           name, size, reader.kind or "empty", sum(reader.areas.values()), reader.problems, now)
    return Imported(name, reader.kind, sum(reader.areas.values()), reader.problems, reader.report(), numbers,
                    seconds=time.monotonic() - started)


async def _replace(conn: asyncpg.Connection, areas: list[int]) -> dict[int, int]:
    """A full file: its area codes' numbers replaced by the staged ones (repeats once); {area code: numbers}."""
    await conn.execute(f"DELETE FROM {S}.national_dnc n USING unnest($1::int[]) AS a(code) "
                       f"WHERE n.number >= a.code::bigint * {AREA_SPAN} AND n.number < (a.code + 1)::bigint * {AREA_SPAN}",
                       areas)
    rows = await conn.fetch(f"""
        WITH added AS (INSERT INTO {S}.national_dnc (number) SELECT number FROM {STAGING} ORDER BY number
                       ON CONFLICT DO NOTHING RETURNING number)
        SELECT number / {AREA_SPAN} AS area, count(*) FROM added GROUP BY 1""")
    return {row["area"]: row["count"] for row in rows}


def _changed(areas: list[int], now: datetime, name: str) -> tuple[Any, ...]:
    """A change file's statement: each number's last change applied (a deletion, then an addition, is an
    addition), and its area codes' counts and refresh moved on; it returns (area code, numbers after)."""
    return (f"""
        WITH latest AS (SELECT DISTINCT ON (number) number, added FROM {STAGING} ORDER BY number, line DESC),
        gone AS (DELETE FROM {S}.national_dnc n USING latest WHERE NOT latest.added AND n.number = latest.number
                 RETURNING n.number),
        new AS (INSERT INTO {S}.national_dnc (number) SELECT number FROM latest WHERE added
                ON CONFLICT DO NOTHING RETURNING number),
        delta AS (SELECT number / {AREA_SPAN} AS area, count(*) AS n FROM new GROUP BY 1
                  UNION ALL SELECT number / {AREA_SPAN}, -count(*) FROM gone GROUP BY 1)
        UPDATE {S}.national_dnc_areas a SET refreshed_at = $2, file = $3, kind = 'change',
            numbers = a.numbers + coalesce((SELECT sum(n) FROM delta WHERE delta.area = a.area_code), 0)
        WHERE a.area_code = ANY($1::int[])
        RETURNING a.area_code, a.numbers""", areas, now, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.messaging.registry",
                                     description="Import the national do-not-call registry's files (the operator's "
                                     "command; see the module's docstring).")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("import", help="import full and change files, or folders of them")
    run.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_FOLDER")
    run.add_argument("--again", action="store_true", help="import files already imported too")
    args = parser.parse_args(argv)
    loaded = settings.load(PROCESS)
    subscription = Subscription.of(loaded.national_dnc_area_codes)
    if subscription == NONE:
        print("NATIONAL_DNC_AREA_CODES is empty: no area code is subscribed, so nothing would be loaded; set it "
              "(e.g. 415,212, or * for the whole registry)", file=sys.stderr)
        return PROBLEMS
    # its advisory lock is held for the whole import, across transactions: a session straight to PostgreSQL
    return asyncio.run(import_paths(loaded.direct_database(), args.paths, subscription, again=args.again))


if __name__ == "__main__":
    sys.exit(main())
