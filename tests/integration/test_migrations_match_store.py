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
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from core import migrations, registry
from core.db import async_url
from tests.integration.databases import new_database

SCHEMAS = [s for s in registry.SERVICES if s.schema]


@pytest.fixture(scope="module")
async def scratch(stack) -> AsyncIterator[str]:
    """A database of its own on the stack's server with every service's migrations run, dropped afterwards."""
    async with new_database(stack, "switchboard_migrations") as url:
        await asyncio.to_thread(migrations.upgrade_all, url)
        yield url


def _down_to_the_baseline_and_up(service: str, url: str) -> None:
    (baseline,) = migrations.script(service).get_bases()
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
