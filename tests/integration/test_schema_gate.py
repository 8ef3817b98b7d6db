"""Migrations before a rollout: migrations runs take turns (core.migrations.LOCK), a service or worker refuses a
schema older than its code, and the init container core.schema_gate waits, as the process's own role, until the
migrations have run."""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import subprocess
import sys
from typing import IO

import asyncpg
import pytest

from core import db_roles, migrations, registry, schema_gate
from deploy.local.servers import free_port
from deploy.local.stack import ROOT
from tests.integration.databases import new_database
from tests.waiting import wait_until

# PYTHONPATH and the rest of this environment, without the stack's secrets: a process is given its own
ENVIRONMENT = {name: value for name, value in os.environ.items() if not name.endswith("DATABASE_URL")} | {
    "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")]), "SWITCHBOARD_ENV": "local"}


async def revisions(url: str) -> dict[str, tuple[str, ...]]:
    return {s: await schema_gate.revisions(url, s) for s in migrations.SERVICES}


def one_behind(url: str, schema: str) -> str:
    """Undo the schema's last migration: its code's head is then one revision ahead of the database."""
    (head,) = migrations.script(schema).get_heads()
    previous = migrations.script(schema).get_revision(head).down_revision
    assert isinstance(previous, str)
    migrations.downgrade(schema, url, previous)
    return previous


async def waiting_for_the_lock(owner: asyncpg.Connection) -> int:
    """How many sessions wait for an advisory lock of the owner's database."""
    return await owner.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND "
                                "database = (SELECT oid FROM pg_database WHERE datname = current_database())")


async def test_two_migrations_runs_at_once_take_turns_and_leave_every_schema_at_its_head(stack, caplog):
    """Both runs wait while the lock is held elsewhere, then each runs alone; the first migrates a new database, the
    second finds it done. Without the lock, both would create the same schemas and tables at once."""
    caplog.set_level(logging.WARNING, logger=migrations.__name__)
    async with new_database(stack, "switchboard_gate") as url:
        holder = await asyncpg.connect(url)
        try:
            await holder.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", migrations.LOCK)
            runs = [asyncio.create_task(asyncio.to_thread(migrations.upgrade_all, url)) for _ in range(2)]
            await wait_until(lambda: waiting_for_the_lock(holder), "both runs to wait for the lock",
                             lambda waiting: waiting == 2, timeout=30)
            assert not any(run.done() for run in runs)
            await holder.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", migrations.LOCK)
            await asyncio.wait_for(asyncio.gather(*runs), 120)
        finally:
            await holder.close()
        found = await revisions(url)
        assert {s: schema_gate.compare(s, r).verdict for s, r in found.items()} == dict.fromkeys(found, "current")
        assert caplog.text.count("another migrations run holds the lock") == 2


async def test_the_lock_is_the_databases_own(stack):
    """A run on one database is not held up by a run on another of the same server (the tests' scratch databases,
    a staging database beside production's)."""
    async with new_database(stack, "switchboard_gate") as url, new_database(stack, "switchboard_gate") as other:
        holder = await asyncpg.connect(other)
        try:
            await holder.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", migrations.LOCK)
            await asyncio.wait_for(asyncio.to_thread(migrations.upgrade_all, url), 120)
        finally:
            await holder.close()
        assert all((await revisions(url)).values())


def start(module: str, url: str, *args: str, port_env: str | None = None, log: IO[str] | None = None,
          ) -> subprocess.Popen[str]:
    """`python -m module args` as a process given `url` as its DATABASE_URL, its log to `log` (else a pipe)."""
    env = {**ENVIRONMENT, "DATABASE_URL": url, **({port_env: str(free_port())} if port_env else {})}
    return subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=log or subprocess.PIPE, text=True)


@pytest.mark.parametrize("process", ["evals", "webhooks-dispatcher"])
async def test_a_process_refuses_a_schema_one_revision_older_than_its_code(stack, process):
    """A service, and a worker on its service's schema, exit at once naming the revisions and what to run, before
    they connect to anything else."""
    schema = schema_gate.schema_of(process)
    assert schema is not None
    module = registry.BY_NAME[process].module if process in registry.BY_NAME else registry.worker(process).module
    async with new_database(stack, "switchboard_gate") as url:
        await asyncio.to_thread(migrations.upgrade_all, url)
        previous = await asyncio.to_thread(one_behind, url, schema)
        (head,) = migrations.script(schema).get_heads()
        proc = start(module, url, port_env=registry.grpc_port_env(process))
        _, stderr = await asyncio.to_thread(proc.communicate, timeout=60)
    assert proc.returncode == 1, stderr
    assert (f"{process}: the database's {schema} schema is at {previous}, older than this code's head, {head}: "
            "run python -m core.migrate") in stderr


async def test_the_gate_waits_as_the_processs_role_until_the_migrations_have_run(stack, tmp_path):
    """The init container's command: at once it fails on an older schema; waiting, it ends when the migrations
    bring the schema to the head, reading with the service's own role."""
    async with new_database(stack, "switchboard_gate") as url:
        await asyncio.to_thread(migrations.upgrade_all, url)
        password = secrets.token_urlsafe(16)
        await asyncio.to_thread(db_roles.set_passwords, url, {"evals": password})
        role_url = db_roles.url_for(url, "evals", password)
        previous = await asyncio.to_thread(one_behind, url, "evals")
        (head,) = migrations.script("evals").get_heads()
        once = start("core.schema_gate", role_url, "evals")
        _, stderr = await asyncio.to_thread(once.communicate, timeout=60)
        assert once.returncode == 1 and f"evals schema is at {previous}, older" in stderr, stderr
        log = tmp_path / "gate.log"
        with log.open("w") as out:
            waiting = start("core.schema_gate", role_url, "--wait", "120", "evals", log=out)
        try:
            await wait_until(lambda: asyncio.to_thread(log.read_text), "the gate to wait",
                             lambda text: text.count(f"evals schema is at {previous}, older") >= 2, timeout=60)
            assert waiting.poll() is None
            await asyncio.to_thread(migrations.upgrade_all, url)
            await asyncio.to_thread(waiting.wait, 60)
        finally:
            waiting.kill()
        assert waiting.returncode == 0, log.read_text()
        assert log.read_text().splitlines()[-1].count(f"evals schema is at {head}, this code's head") == 1
