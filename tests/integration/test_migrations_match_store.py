"""Each service's migrations and its one definition of its tables (its schema.py's metadata) cannot drift apart.

A new database is created from the metadata and stamped at the head (core.migrations.run_env), so the stack's own
database proves nothing about the migrations. Here, in a scratch database on the stack's server: every service's
migrations run as the launcher runs them (`upgrade_all`), then each service goes down to its baseline revision (the
revisions after it are undone) and up to its head again (they are replayed), and alembic's autogenerate comparison
finds no difference between the schema this left and the metadata.
"""
from __future__ import annotations

import asyncio
import importlib
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from core import db_roles, migrations, registry
from core.db import async_url

SCHEMAS = [s for s in registry.SERVICES if s.schema]


@pytest.fixture(scope="module")
async def scratch(stack) -> AsyncIterator[str]:
    """A database of its own on the stack's server with every service's migrations run, dropped afterwards."""
    name = f"switchboard_migrations_{uuid.uuid4().hex[:8]}"
    url = make_url(stack.database_url).set(database=name).render_as_string(hide_password=False)
    conn = await asyncpg.connect(stack.database_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            await asyncio.to_thread(migrations.upgrade_all, url)
            yield url
        finally:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            for role in db_roles.ROLES:  # the roles upgrade_all made, named after the database (core.db_roles)
                await conn.execute(f"DROP ROLE IF EXISTS {db_roles.ident(db_roles.role_name(name, role.key))}")
    finally:
        await conn.close()


def _down_to_the_baseline_and_up(service: str, url: str) -> None:
    (baseline,) = ScriptDirectory(str(migrations.ROOT / "services" / service / "migrations")).get_bases()
    migrations.downgrade(service, url, baseline)
    migrations.upgrade(service, url)


def _differences(connection: sa.Connection, metadata: sa.MetaData, schema: str) -> list[object]:
    def include(obj, name, type_, reflected, compare_to):
        if type_ == "table":
            return obj.schema == schema and name != "alembic_version"
        return True

    context = MigrationContext.configure(connection, opts={
        "include_schemas": True, "include_object": include, "compare_type": True, "compare_server_default": False,
        "include_name": lambda name, type_, parents: type_ != "schema" or name == schema})
    return list(compare_metadata(context, metadata))


@pytest.mark.parametrize("service", SCHEMAS, ids=lambda s: s.name)
async def test_the_migrations_make_the_schema_the_metadata_declares(scratch, service):
    await asyncio.to_thread(_down_to_the_baseline_and_up, service.name, scratch)
    engine = create_async_engine(async_url(scratch), poolclass=sa.pool.NullPool)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(_differences, importlib.import_module(f"{service.module}.schema").metadata, service.name)
    finally:
        await engine.dispose()
    assert diff == [], f"{service.name}: its metadata and its migrations differ: {diff}"
