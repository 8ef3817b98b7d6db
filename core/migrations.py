"""Alembic per service: each service keeps its migrations and version table in its own schema.

A service's `migrations/env.py` is two lines calling `run_env(schema)`; the
launcher, the tests and `python -m core.migrate` call `upgrade_all`, one run at a time per database (LOCK): a second
run waits for the first, then finds every schema at its head. A process refuses a schema older than its code
(core.schema_gate).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path

import sqlalchemy as sa
from alembic import command, context
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import create_async_engine

from core import db_roles, registry
from core.db import async_url

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
# Services with a database schema, in the order their migrations run (the registry's order).
SERVICES = tuple(s.name for s in registry.SERVICES if s.schema)
# The session advisory lock a migrations run holds from its first schema to its last grant (keyed within the
# database: another database on the server migrates meanwhile).
LOCK = "switchboard:migrations"


@cache
def script(service: str) -> ScriptDirectory:
    """The service's migrations as its code carries them (their heads: the revision the code expects)."""
    return ScriptDirectory(str(ROOT / "services" / service / "migrations"))


def _config(service: str, database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "services" / service / "migrations"))
    cfg.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    cfg.attributes["schema"] = service
    return cfg


def upgrade(service: str, database_url: str, revision: str = "head") -> None:
    command.upgrade(_config(service, database_url), revision)


def downgrade(service: str, database_url: str, revision: str) -> None:
    command.downgrade(_config(service, database_url), revision)


def upgrade_all(database_url: str) -> None:
    """Every service's migrations, then each process's role and its privileges (core.db_roles), connected as the
    owner of the schemas (`database_url`), on one connection holding the advisory lock LOCK from start to end: two
    runs at once (a Job retried while the first still runs, a deploy beside the launcher) take turns, and the
    second finds nothing to do.

    The lock belongs to the session: `database_url` must reach PostgreSQL directly, never through a transaction
    pooler (PgBouncer would lend the lock's server connection to other clients between transactions). The owner's
    DATABASE_URL, the migrations Job's, is direct: PgBouncer knows the roles alone (deploy/k8s/README.md)."""
    asyncio.run(_upgrade_all(database_url))


async def _upgrade_all(database_url: str) -> None:
    engine = create_async_engine(async_url(database_url), poolclass=sa.pool.NullPool)
    try:
        async with engine.connect() as conn:
            key = {"key": LOCK}
            if not (await conn.execute(sa.text("SELECT pg_try_advisory_lock(hashtextextended(:key, 0))"),
                                       key)).scalar():
                log.warning("another migrations run holds the lock %r: waiting for it to end", LOCK)
                await conn.execute(sa.text("SELECT pg_advisory_lock(hashtextextended(:key, 0))"), key)
            await conn.commit()  # the lock is the session's: it outlives this transaction
            for service in SERVICES:
                await conn.run_sync(_upgrade_on, service, database_url)
            raw = await conn.get_raw_connection()
            await db_roles.grant(raw.driver_connection, db_roles.database_of(database_url))
    finally:
        await engine.dispose()  # the session ends, and its lock with it


def _upgrade_on(connection: sa.Connection, service: str, database_url: str) -> None:
    cfg = _config(service, database_url)
    cfg.attributes["connection"] = connection  # run_env migrates on it (alembic's "sharing a connection")
    command.upgrade(cfg, "head")


def run_env(schema: str, metadata: sa.MetaData) -> None:
    """Body of every service's alembic env.py (online mode, asyncpg). A schema with no version table yet is
    created from `metadata`, the service's one definition of its tables (services/<name>/schema.py), and stamped
    at the head (Alembic's cookbook: "building an up to date database from scratch"); the migrations then only
    carry existing databases from one head to the next."""
    url = context.config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("the alembic configuration has no sqlalchemy.url")

    def do_run(connection: sa.Connection) -> None:
        connection.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        context.configure(connection=connection, version_table_schema=schema, include_schemas=True,
                          target_metadata=metadata)
        migrations = context.get_context()
        if migrations.get_current_revision() is None:
            with context.begin_transaction():
                metadata.create_all(connection)
                migrations.stamp(context.script, "heads")
            return
        with context.begin_transaction():
            context.run_migrations()

    if (shared := context.config.attributes.get("connection")) is not None:  # upgrade_all's, which holds its lock
        with shared.begin():
            do_run(shared)
        return

    async def main() -> None:
        engine = create_async_engine(url, poolclass=sa.pool.NullPool)
        async with engine.begin() as conn:
            await conn.run_sync(do_run)
        await engine.dispose()

    asyncio.run(main())


def baseline(metadata: sa.MetaData) -> tuple[Callable[[], None], Callable[[], None]]:
    """The upgrade and downgrade of a service's baseline revision, its first: the upgrade creates the tables as its
    schema module defines them (run_env builds a new database the same way, so it is reached only by one with a
    version table but no revision); there is no going below it."""

    def upgrade() -> None:
        from alembic import op

        metadata.create_all(op.get_bind())

    def downgrade() -> None:
        raise RuntimeError("the baseline is not undone: drop the schema instead")

    return upgrade, downgrade
