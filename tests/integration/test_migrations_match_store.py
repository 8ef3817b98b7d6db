"""Each service's migration head creates exactly the tables its store.py declares (alembic's autogenerate
comparison against the migrated test database), so the two cannot drift apart."""
import importlib

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from core import registry
from core.db import async_url

SCHEMAS = [s for s in registry.SERVICES if s.schema]


def _differences(connection, metadata: sa.MetaData, schema: str) -> list:
    def include(obj, name, type_, reflected, compare_to):
        if type_ == "table":
            return obj.schema == schema and name != "alembic_version"
        return True

    context = MigrationContext.configure(connection, opts={
        "include_schemas": True, "include_object": include, "compare_type": True, "compare_server_default": False,
        "include_name": lambda name, type_, parents: type_ != "schema" or name == schema})
    return compare_metadata(context, metadata)


@pytest.mark.parametrize("service", SCHEMAS, ids=lambda s: s.name)
async def test_migration_head_matches_the_store(stack, service):
    schema = importlib.import_module(f"{service.module}.schema")
    engine = create_async_engine(async_url(stack.database_url))
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(_differences, schema.metadata, service.name)
    finally:
        await engine.dispose()
    assert diff == [], f"{service.name}: schema.py and the migrations differ: {diff}"
