"""Service-layer tests: each service's use cases (services.<name>.service) run in this process against the
stack's real database, and its real voice simulator where a provider is involved, with no gRPC in between.
The caller is set the way the gRPC interceptor sets it (core.tenant)."""
from __future__ import annotations

import contextlib
import uuid

import pytest

from core import db, settings, tenant
from core.tenant import Tenant


@pytest.fixture
def cfg(stack, monkeypatch) -> settings.Settings:
    """The settings the stack's services run with."""
    for name, value in stack.env().items():
        monkeypatch.setenv(name, value)
    return settings.load()


@pytest.fixture
async def engine(stack):
    engine = db.create_engine(stack.database_url, pool_size=4, application_name="service-tests")
    yield engine
    await engine.dispose()


@pytest.fixture
async def pool(stack):
    pool = await db.create_pool(stack.database_url, size=4, application_name="service-tests")
    yield pool
    await pool.close()


@contextlib.contextmanager
def acting_as(who: Tenant):
    token = tenant.set_current(who)
    try:
        yield who
    finally:
        tenant.reset_current(token)


def new_tenant(**fields) -> Tenant:
    """A caller of a business of its own (the agents, sdr and webhooks services do not look businesses up)."""
    return Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),), api_key_id=str(uuid.uuid4()),
                  **fields)


def no_events() -> None:
    """events_committed for use cases run outside a service: the service's own relay polls the outbox."""
