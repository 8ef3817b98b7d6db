"""Whether a database's schema is at the migrations a process's code carries (their heads: core.migrations.script).

A service, and each of its workers (they run its code over its schema), refuses to start on a schema older than its
code, or one with no revision: the migrations (`python -m core.migrate`, the Kubernetes Job) have not run
(core.grpc_server.main: one query at the start, none per request). A newer schema is fine: a release's migrations
only add to what the code before it uses (expand, then contract in a later release), so the previous code runs on
it during a rollout or after a rollback.

`python -m core.schema_gate --wait SECONDS SCHEMA` is the init container of each such Deployment (deploy.generate):
it waits until the schema is at least at the image's head, reading its alembic_version with the process's own role
(DATABASE_URL; core.db_roles lets each role SELECT it), so a rollout's new pods start only once the migrations Job
has run. It exits 1 when SECONDS pass first (the kubelet then starts it again, and the rollout stays stalled on it).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import asyncpg

from core import logs, registry, settings
from core.db import raw_url
from core.db_roles import ident
from core.migrations import SERVICES, script

log = logging.getLogger(__name__)

CONNECT_SECONDS = 10.0
POLL_SECONDS = 3.0


@dataclass(frozen=True)
class Standing:
    """A schema's revisions in the database against its code's heads."""

    schema: str
    database: tuple[str, ...]  # alembic_version's rows: none when never migrated
    code: tuple[str, ...]
    verdict: Literal["older", "current", "newer"]

    def describe(self, process: str) -> str:
        at = f"the database's {self.schema} schema is at {', '.join(self.database) or 'no revision'}"
        head = f"this code's head, {', '.join(self.code)}"
        if self.verdict == "older":
            return f"{process}: {at}, older than {head}: run python -m core.migrate (the migrations Job) first"
        if self.verdict == "newer":
            return f"{process}: {at}, newer than {head} (a rollout or a rollback): starting on it"
        return f"{process}: {at}, this code's head"


def compare(schema: str, revisions: Iterable[str]) -> Standing:
    """A revision the code does not know is newer (a later release's); one it knows that is not its head is older."""
    migrations = script(schema)
    database, code = tuple(sorted(revisions)), tuple(sorted(migrations.get_heads()))
    known = {s.revision for s in migrations.walk_revisions()}
    if database and not set(database) <= known:
        return Standing(schema, database, code, "newer")
    return Standing(schema, database, code, "current" if database == code else "older")


async def revisions(database_url: str, schema: str) -> tuple[str, ...]:
    """The schema's alembic_version (none without the table). Unnamed statements (no cache): this one query may go
    through a transaction pooler."""
    conn = await asyncpg.connect(raw_url(database_url), timeout=CONNECT_SECONDS, statement_cache_size=0)
    try:
        rows = await conn.fetch(f"SELECT version_num FROM {ident(schema)}.alembic_version")
    except asyncpg.UndefinedTableError:
        return ()
    finally:
        await conn.close()
    return tuple(row[0] for row in rows)


def schema_of(process: str) -> str | None:
    """The schema whose migrations a service or worker runs on: its service's (None when it has none)."""
    owner = registry.database_role(process)
    return owner if owner in SERVICES else None


def require(process: str, database_url: str) -> None:
    """At a process's start: end it (status 1, saying why) on a schema older than its code. A database it cannot
    read now starts it unchecked, with a warning: a process started during an outage serves its errors until the
    database is back, as one already running does (core.grpc_server.ProbingHealth); on Kubernetes the init
    container has waited for the schema already."""
    schema = schema_of(process)
    if schema is None:
        return
    try:
        standing = compare(schema, asyncio.run(revisions(database_url, schema)))
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        log.warning("%s: the %s schema's revision could not be read (%s): starting without checking it",
                    process, schema, exc)
        return
    if standing.verdict == "older":
        log.error("%s", standing.describe(process))
        raise SystemExit(1)
    log.info("%s", standing.describe(process))


async def wait(database_url: str, schema: str, seconds: float) -> Standing | None:
    """The schema's standing once it is current or newer; None if `seconds` pass first (an unreachable database,
    a role not yet made or without its password, a schema still older: each is waited out, and the last said)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            standing = compare(schema, await revisions(database_url, schema))
            if standing.verdict != "older":
                return standing
            why = standing.describe(schema)
        except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
            why = f"{schema}: the schema's revision could not be read ({exc})"
        if time.monotonic() + POLL_SECONDS > deadline:
            log.error("%s: gave up after %.0f s", why, seconds)
            return None
        log.info("%s: waiting", why)
        await asyncio.sleep(POLL_SECONDS)


def main(argv: list[str]) -> int:
    """`python -m core.schema_gate [--wait SECONDS] SCHEMA`: 0 once SCHEMA is at least at this code's head, 1 if it
    is not within SECONDS (0, the default: checked once)."""
    parser = argparse.ArgumentParser(prog="python -m core.schema_gate")
    parser.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("schema", choices=SERVICES)
    args = parser.parse_args(argv)
    loaded = settings.load()
    logs.configure(loaded.log_level, "schema-gate")
    standing = asyncio.run(wait(loaded.database_url.reveal(), args.schema, args.wait))
    if standing is None:
        return 1
    log.info("%s", standing.describe(args.schema))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
