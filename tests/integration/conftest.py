"""Fixtures of the integration tests."""
import uuid

import pytest
import sqlalchemy as sa

from core.db import create_engine
from core.inbox import inbox_table
from core.outbox import outbox_table
from tests.nats_admin import admin_bus


@pytest.fixture
async def scratch(stack):
    """A throwaway schema with an outbox and inbox, for exercising the helpers directly."""
    schema = f"t_{uuid.uuid4().hex[:8]}"
    engine = create_engine(stack.database_url)
    metadata = sa.MetaData()
    tables = outbox_table(metadata, schema), inbox_table(metadata, schema)
    async with engine.begin() as conn:
        await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        await conn.run_sync(metadata.create_all)  # the outbox with its NOTIFY trigger (core.outbox.outbox_table)
    bus = admin_bus(stack, "test")
    assert await bus.wait_connected(10)
    yield engine, bus, *tables
    await bus.close()
    async with engine.begin() as conn:
        await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    await engine.dispose()
