"""Service-layer tests: each service's use cases (services.<name>.service) run in this process against the
stack's real database, and its real voice simulator where a provider is involved, with no gRPC in between.
The caller is set the way the gRPC interceptor sets it (core.tenant)."""
from __future__ import annotations

import uuid

import pytest

from core import db, rpc, settings
from core.bus import EventBus
from core.ids import utcnow
from core.tenant import Tenant
from core.uow import Database
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.voice import VapiVoice
from services.accounts import store as accounts_store
from services.accounts.agents_port import GrpcAgents
from services.accounts.repository import PooledAccounts, accounts_units
from services.accounts.servicer import AccountsParts, wire

OTHER_WRITER = "00000000-0000-4000-8000-000000000000"


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
def database(engine) -> Database:
    """The use cases' way to the database; the service's own relay hears of their events (the outbox's NOTIFY)."""
    return Database(engine)


@pytest.fixture
async def pool(stack):
    pool = await db.create_pool(stack.database_url, size=4, application_name="service-tests")
    yield pool
    await pool.close()




async def new_business(conn, subscription_status: str = "active") -> str:
    """A business of an account of its own, active, written on `conn` (accounts' tables): its id."""
    now, account_id, business_id = utcnow(), str(uuid.uuid4()), str(uuid.uuid4())
    await accounts_store.insert_user(conn, id=account_id, email=f"{account_id}@example.com", created_at=now)
    await accounts_store.insert_business(conn, id=business_id, account_id=account_id, name="Acme Plumbing",
                                         lifecycle_state="active", metadata={}, plan_id="starter",
                                         subscription_status=subscription_status, created_at=now, updated_at=now)
    return business_id


def new_tenant(**fields) -> Tenant:
    """A caller of a business of its own (the agents, sdr and webhooks services do not look businesses up)."""
    return Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),), api_key_id=str(uuid.uuid4()),
                  **fields)


@pytest.fixture
async def accounts_of(cfg, database, pool):
    """`accounts_of(settings)`: the accounts service's parts with their payment providers (the stack's simulators),
    an agents client (the stack's agents service) and a bus that never connected (the gateways' invalidation is
    best effort)."""
    closers = []

    def make(settings=cfg) -> AccountsParts:
        agents, channel = rpc.connect("agents", settings, forward_tenant=True)
        hot = PooledAccounts(Database(database.engine, pool=pool))
        parts = wire(settings, accounts_units(database), hot, EventBus("nats://127.0.0.1:9", "accounts-service-tier"),
                     GrpcAgents(agents))
        closers.extend((*parts.billing.closers, channel.close))
        return parts
    yield make
    for close in closers:
        await close()


def vapi_port(cfg: settings.Settings, client: VapiClient | None = None) -> VapiVoice:
    """The voice port the use cases take, over `client` (default: the simulator's real client, one attempt per
    request), configured as the stack's services are."""
    client = client or VapiClient(cfg.voice_api_url, cfg.voice_api_key.reveal(), max_attempts=1)
    return VapiVoice(client, WebhookAuth.of(cfg), cfg.public_base_url, cfg.voice_sip_credential_id)


class LeaseStealingVoice(VapiClient):
    """The real client of the simulator. With `steal` set to a table and its provider-id column, once the provider
    has accepted the next assistant or phone-number update, another writer takes that row's lease, as if this
    write had outlived it."""

    def __init__(self, cfg, engine):
        super().__init__(cfg.voice_api_url, cfg.voice_api_key.reveal(), max_attempts=1)
        self.engine, self.steal = engine, None

    async def update_assistant(self, assistant_id: str, body: dict) -> dict:
        result = await super().update_assistant(assistant_id, body)
        await self._take_lease(assistant_id)
        return result

    async def update_phone_number(self, phone_number_id: str, body: dict) -> dict:
        result = await super().update_phone_number(phone_number_id, body)
        await self._take_lease(phone_number_id)
        return result

    async def _take_lease(self, provider_id: str) -> None:
        if self.steal is None:
            return
        table, column = self.steal
        self.steal = None
        async with self.engine.begin() as conn:
            await conn.execute(table.update().where(column == provider_id).values(lease_token=OTHER_WRITER))
