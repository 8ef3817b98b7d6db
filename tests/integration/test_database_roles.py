"""Each process's PostgreSQL role (core.db_roles) against the stack's database: a service's role reads and writes its
own schema's tables alone (another schema's are refused: permission denied), may not drop or alter them nor move the
migrations' version, and the national do-not-call import's role reaches the registry's tables alone. Every process
of the stack is connected as its role, and the outbox's NOTIFY still wakes its listeners; the tests' own connections
(stack.database_url) are the owner's."""
import asyncio
import sys
import uuid
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from core import db_roles, registry
from core.db import create_engine, raw_url
from core.outbox import channel, record_event
from services.calls import schema as calls_schema
from tests.waiting import wait_until


async def connect_as(stack, process: str) -> asyncpg.Connection:
    return await asyncpg.connect(raw_url(stack.database_url_of(process)))


async def tables_of(stack, schema: str) -> list[str]:
    conn = await asyncpg.connect(raw_url(stack.database_url))
    try:
        return [r[0] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1",
                                               schema)]
    finally:
        await conn.close()


def held_database_url(stack, process: str) -> str:
    """The DATABASE_URL the running process holds (what a compromise of it would take)."""
    entries = Path(f"/proc/{stack.process(process).proc.pid}/environ").read_bytes().decode().split("\0")
    return dict(entry.split("=", 1) for entry in entries if entry)["DATABASE_URL"]


async def test_the_webhooks_dispatchers_credentials_cannot_read_the_keys_or_the_leads(stack):
    if not Path("/proc/self/environ").exists():
        pytest.skip("no /proc here")
    conn = await asyncpg.connect(raw_url(held_database_url(stack, "webhooks-dispatcher")))
    try:
        for table in ("accounts.api_keys", "accounts.sessions", "sdr.leads", "messaging.messages"):
            with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
                await conn.fetchval(f"SELECT count(*) FROM {table}")
        assert await conn.fetchval("SELECT count(*) FROM webhooks.subscriptions") >= 0
    finally:
        await conn.close()


@pytest.mark.parametrize("role", db_roles.SCHEMAS)
async def test_a_services_role_reaches_its_own_schemas_tables_and_no_other(stack, role):
    conn = await connect_as(stack, role)
    try:
        for schema in db_roles.SCHEMAS:
            for table in await tables_of(stack, schema):
                read = f'SELECT count(*) FROM "{schema}"."{table}"'
                if schema == role:
                    await conn.fetchval(read)
                    continue
                with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
                    await conn.fetchval(read)
                with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
                    await conn.execute(f'DELETE FROM "{schema}"."{table}"')
    finally:
        await conn.close()


async def test_a_role_changes_rows_but_not_the_schema_nor_the_migrations_version(stack):
    conn = await connect_as(stack, "sdr")
    try:
        for ddl in ("DROP TABLE sdr.leads", "ALTER TABLE sdr.leads ADD COLUMN x int", "TRUNCATE sdr.leads",
                    "CREATE TABLE sdr.mine (x int)", "CREATE TABLE public.mine (x int)", "CREATE TEMP TABLE mine (x int)",
                    "UPDATE sdr.alembic_version SET version_num = version_num"):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(ddl)
        await conn.execute("GRANT SELECT ON sdr.leads TO PUBLIC")  # only a warning: it holds no grant option
        webhooks = db_roles.role_name(db_roles.database_of(stack.database_url), "webhooks")
        assert not await conn.fetchval("SELECT has_table_privilege($1, 'sdr.leads', 'SELECT')", webhooks)
        assert await conn.fetchval("SELECT version_num FROM sdr.alembic_version")
        async with conn.transaction():  # its rows it may change (rolled back: no lead has this id)
            await conn.execute("UPDATE sdr.leads SET name = name WHERE id = '00000000-0000-0000-0000-000000000000'")
    finally:
        await conn.close()


async def test_the_national_registry_import_reaches_the_registrys_tables_alone(stack):
    conn = await connect_as(stack, registry.NATIONAL_DNC_IMPORT)
    try:
        for table in db_roles.NATIONAL_DNC_TABLES:
            await conn.fetchval(f"SELECT count(*) FROM messaging.{table}")
        for table in ("messaging.messages", "messaging.dnc_entries", "accounts.businesses"):
            with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
                await conn.fetchval(f"SELECT count(*) FROM {table}")
    finally:
        await conn.close()


async def test_every_process_of_the_stack_connects_as_its_role(stack, db):
    """Each process's connections (named after it: core.db) are its role's."""
    database = db_roles.database_of(stack.database_url)
    processes = [*(s.name for s in registry.SERVICES), *(w.name for w in registry.WORKERS)]

    async def connected() -> dict[str, set[str]]:
        rows = await db.fetch("SELECT application_name, usename FROM pg_stat_activity WHERE datname = $1", database)
        return {p: {r["usename"] for r in rows if r["application_name"] == p} for p in processes}

    expected = {p: {db_roles.role_name(database, registry.database_role(p))} for p in processes}
    await wait_until(connected, "a connection of every process", lambda seen: all(seen.values()))
    assert await connected() == expected


async def operators_command(stack, *roles: str) -> tuple[int, dict[str, str]]:
    """`python -m core.db_roles ROLE...` as the owner: (exit status, the KEY=value lines it printed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "core.db_roles", *roles, env={**stack.env(), "DATABASE_URL": stack.database_url},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, dict(line.split("=", 1) for line in out.decode().splitlines())


async def test_the_operators_command_gives_each_role_a_password_and_prints_its_secret_key(stack):
    """`python -m core.db_roles` (a deployment's, after the migrations): every role's URL (or the named one's), a
    key of the Secret each, which logs in as that role. The stack's passwords are given back afterwards."""
    try:
        status, printed = await operators_command(stack)
        assert status == 0
        assert set(printed) == {db_roles.secret_key(role.key) for role in db_roles.ROLES}
        status, rotated = await operators_command(stack, "webhooks")
        assert status == 0 and set(rotated) == {"DATABASE_URL_WEBHOOKS"}
        assert rotated["DATABASE_URL_WEBHOOKS"] != printed["DATABASE_URL_WEBHOOKS"]
        conn = await asyncpg.connect(raw_url(rotated["DATABASE_URL_WEBHOOKS"]))
        try:
            assert await conn.fetchval("SELECT current_user") == db_roles.role_name(
                db_roles.database_of(stack.database_url), "webhooks")
        finally:
            await conn.close()
        assert await operators_command(stack, "nobody") == (1, {})
    finally:
        await asyncio.to_thread(db_roles.set_passwords, stack.database_url,
                                {r.key: stack.database_password(r.key) for r in db_roles.ROLES})


async def test_with_a_pooler_the_operators_command_prints_the_pooled_and_the_direct_urls(stack, tmp_path):
    """`--pooler HOST:PORT`: each role's DATABASE_URL_<ROLE> through the pooler, DIRECT_DATABASE_URL_<ROLE> straight
    to the owner's server (which logs in as the role), and `--userlist` PgBouncer's auth file with the same
    passwords."""
    userlist = tmp_path / "userlist.txt"
    try:
        status, printed = await operators_command(stack, "--pooler", "pgbouncer:6432", "--userlist", str(userlist),
                                                  "calls")
        assert status == 0 and set(printed) == {"DATABASE_URL_CALLS", "DIRECT_DATABASE_URL_CALLS"}
        pooled, direct = make_url(printed["DATABASE_URL_CALLS"]), make_url(printed["DIRECT_DATABASE_URL_CALLS"])
        assert (pooled.host, pooled.port) == ("pgbouncer", 6432)
        assert (direct.host, direct.port) == (make_url(stack.database_url).host, make_url(stack.database_url).port)
        assert (pooled.username, pooled.password, pooled.database) == (direct.username, direct.password,
                                                                       direct.database)
        assert userlist.read_text() == f'"{direct.username}" "{direct.password}"\n'
        conn = await asyncpg.connect(raw_url(direct))
        try:
            assert await conn.fetchval("SELECT current_user") == direct.username
        finally:
            await conn.close()
    finally:
        await asyncio.to_thread(db_roles.set_passwords, stack.database_url,
                                {r.key: stack.database_password(r.key) for r in db_roles.ROLES})


async def test_a_commit_to_a_services_outbox_wakes_its_listeners_under_its_role(stack):
    """The outbox's NOTIFY (core.outbox.notify_trigger) fires for a role's insert, and the role may LISTEN: the
    relays of every replica still wake on a commit. The event, of a type calls may not publish (NATS refuses it), is
    still deleted after, though the relay no longer holds every later event of calls behind it for ever: it sets it
    aside as a dead letter (tests/integration/test_outbox_dead_letters.py), but only once it has been refused while
    later events were taken (core.outbox.poisoned), so during some later test, whose calls events it would hold
    for two passes and whose ledger would count that dead letter (tests/integration/test_soak_ledger.py)."""
    listener = await connect_as(stack, "calls")
    woken = asyncio.Event()
    await listener.add_listener(channel("calls"), lambda *_: woken.set())
    engine = create_engine(stack.database_url_of("calls"))
    kind = f"test.{uuid.uuid4().hex[:8]}.roles"
    try:
        async with engine.begin() as conn:
            await record_event(conn, calls_schema.outbox, kind, None, {})
        await asyncio.wait_for(woken.wait(), 5)
    finally:
        async with engine.begin() as conn:
            await conn.execute(calls_schema.outbox.delete().where(calls_schema.outbox.c.type == kind))
        await engine.dispose()
        await listener.close()
