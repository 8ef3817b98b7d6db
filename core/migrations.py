"""Alembic per service: each service keeps its migrations and version table in its own schema.

A service's `migrations/env.py` is two lines calling `run_env(schema)`; the
launcher, the tests and `python -m core.migrate` call `upgrade_all`.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from alembic import command, context
from alembic.config import Config
from sqlalchemy.ext.asyncio import create_async_engine

from core import db_roles, registry
from core.db import async_url

ROOT = Path(__file__).resolve().parent.parent
# Services with a database schema, in the order their migrations run (the registry's order).
SERVICES = tuple(s.name for s in registry.SERVICES if s.schema)


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
    owner of the schemas (`database_url`)."""
    for service in SERVICES:
        upgrade(service, database_url)
    db_roles.grant(database_url)


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
