"""The workspace and API-key use cases (services/accounts/workspaces, identity, lifecycle.py) in the fast tier, on the
in-memory database (tests/memory): creating, reading, renaming, pausing and resuming workspaces; creating, listing,
changing, revoking and authenticating keys. The provisioning saga, usage, signup and billing have theirs
(test_provisioning_use_cases.py, test_usage_use_cases.py, test_billing_use_cases.py); sign-in links and sessions'
writes stay with the stack-backed tests (tests/service, tests/e2e)."""
from datetime import timedelta
from typing import NamedTuple

import pytest

from contracts import accounts as accounts_contract
from core.bus import EventBus
from core.ids import new_id, utcnow
from core.settings import Settings
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from services.accounts import domain, secret_keys
from services.accounts.billing.payments_service import Payments
from services.accounts.billing.workspace_billing import WorkspaceBilling
from services.accounts.identity.service import Identity, KeyChanges
from services.accounts.schema import outbox, sessions, users
from services.accounts.workspaces.service import Workspaces
from services.accounts.workspaces.servicer import workspace_message
from tests.memory import insert
from tests.memory.accounts import MemoryAccounts, MemoryAccountsUnit, MemoryHotPath
from tests.use_cases import refused

SESSION = "fast-tier-session-token"


class Parts(NamedTuple):
    identity: Identity
    workspaces: Workspaces


@pytest.fixture
def account_id() -> str:
    return new_id()


@pytest.fixture
async def accounts(database, account_id):
    """identity's and workspaces' use cases with a bus that never connected (the gateways' invalidation is best
    effort), and billing's own rules with no payment provider, x402 gate or provisioning (none of these use cases
    reaches them); the account has a live dashboard session."""
    settings, uow, hot = Settings(), UnitOfWork(database, MemoryAccountsUnit, events=outbox), MemoryHotPath(database)
    identity = Identity(uow, hot, EventBus("nats://127.0.0.1:9", "accounts-fast-tier"), settings)
    payments = Payments(uow, None, None, None, settings.public_base_url,
                        timedelta(hours=settings.payment_grace_hours), {})
    service = Parts(identity, Workspaces(uow, hot, WorkspaceBilling(uow, payments, None), identity,
                                         timedelta(days=settings.teardown_grace_days)))
    now = utcnow()
    async with database.transaction() as conn:
        insert(conn.rows(users), users, {"id": account_id, "email": f"{account_id}@example.com", "created_at": now})
        insert(conn.rows(sessions), sessions, {"token_hash": identity.keys.hash(secret_keys.SESSION, SESSION), "account_id": account_id,
                                               "created_at": now, "expires_at": now + timedelta(days=1),
                                               "last_used_at": now})
    with acting_as(Tenant(account_id=account_id)):
        yield service


def caller(account_id, *business_ids, **fields) -> Tenant:
    return Tenant(account_id=account_id, business_ids=business_ids, **fields)


async def a_workspace(database, account_id: str, name: str = "North", metadata: dict | None = None):
    """A workspace of the account in its trial, as its signup makes it (one made through the API is billed on the
    account's subscription: tests/e2e/test_workspace_billing.py)."""
    now = utcnow()
    async with database.transaction() as conn:
        return await MemoryAccounts(conn).add_business(
            id=new_id(), account_id=account_id, name=name, lifecycle_state="active", metadata=metadata or {},
            plan_id="starter", subscription_status="trialing", trial_ends_at=now + domain.trial_length(),
            created_at=now, updated_at=now, timezone="UTC")


async def test_a_workspace_is_read_by_its_account_only(accounts, account_id, database):
    made = await a_workspace(database, account_id)
    with acting_as(caller(account_id, made.id)):
        row, provisioning = await accounts.workspaces.get_workspace(made.id)
        reply = workspace_message(row, provisioning)
    assert (reply.id, reply.name, reply.standing, reply.timezone, provisioning) == (
        made.id, "North", "trialing", "UTC", None)
    await refused(accounts.workspaces.get_workspace(made.id), "not_found", "workspace")  # the caller does not hold it yet
    await refused(accounts.workspaces.get_workspace("nope"), "invalid_request", "id")
    gone = new_id()
    with acting_as(caller(account_id, made.id, gone)):
        await refused(accounts.workspaces.get_workspace(gone), "not_found", "workspace")


async def test_a_workspace_is_refused_to_a_bound_key_and_a_bad_name(accounts, account_id, database):
    business_id = new_id()
    with acting_as(caller(account_id, business_id, bound_business_id=business_id)):
        await refused(accounts.workspaces.create_workspace("North", {}, None), "forbidden", "limited to one business")
    await refused(accounts.workspaces.create_workspace("  ", {}, None), "invalid_request", "name is required")
    await refused(accounts.workspaces.create_workspace("North", {}, None, "Mars/Olympus"), "invalid_request", "time zone")
    assert database.tables.get("accounts.businesses", {}) == {}


async def test_a_workspace_is_renamed_paused_and_resumed_with_its_events(accounts, account_id, database):
    made = await a_workspace(database, account_id, metadata={"crm": "x1"})
    with acting_as(caller(account_id, made.id)):
        renamed = await accounts.workspaces.update_workspace(made.id, " South ", {"tier": "gold"}, None, "Europe/Paris")
        assert (renamed.name, renamed.metadata, renamed.timezone) == ("South", {"crm": "x1", "tier": "gold"},
                                                                      "Europe/Paris")
        assert database.events == []
        paused = await accounts.workspaces.update_workspace(made.id, None, None, "pause")
        assert (paused.lifecycle_state, paused.name) == ("paused", "South")
        assert database.tables["accounts.businesses"][(made.id,)]["paused_by_billing"] is False  # the owner's pause
        assert [(e["type"], e["business_id"]) for e in database.events] == [
            ("workspace.paused", made.id), ("workspace.standing_changed", made.id)]
        assert database.events[1]["data"]["standing"] == "paused"
        again = await accounts.workspaces.update_workspace(made.id, None, None, "pause")  # a no-op move
        assert again.lifecycle_state == "paused" and len(database.events) == 2
        resumed = await accounts.workspaces.update_workspace(made.id, None, None, "resume")
        assert resumed.lifecycle_state == "active"
        assert (database.events[-1]["type"], database.events[-1]["data"]["standing"]) == (
            "workspace.standing_changed", "trialing")
        await refused(accounts.workspaces.update_workspace(made.id, None, None, "explode"), "invalid_request", "action")
        await refused(accounts.workspaces.update_workspace(made.id, "", None, None), "invalid_request", "name must be")
        (row, _) = await accounts.workspaces.get_workspace(made.id)
        assert (row.name, row.lifecycle_state) == ("South", "active")
    await refused(accounts.workspaces.update_workspace(made.id, "Theirs", None, None), "not_found", "workspace")


async def test_a_key_is_made_listed_and_authenticated_bound_to_its_accounts_business_only(accounts, account_id,
                                                                                         database):
    made = await a_workspace(database, account_id)
    key = await accounts.identity.create_key(SESSION, None, None, None, None)
    assert key.secret.startswith(domain.KEY_PREFIX) and key.is_active
    assert (key.key.name, key.key.prefix, key.key.business_id) == (accounts_contract.DEFAULT_KEY_NAME, key.secret[:12], None)
    bound = await accounts.identity.create_key(SESSION, "deploys", ["calls:read"], made.id, utcnow() + timedelta(days=1))
    assert [k.key.id for k in await accounts.identity.list_keys(SESSION)] == [bound.key.id, key.key.id]
    assert all(k.secret is None for k in await accounts.identity.list_keys(SESSION))
    principal = await accounts.identity.authenticate_key(key.secret)
    assert (principal.account_id, principal.business_ids, principal.bound_business_id, principal.standings) == (
        account_id, [made.id], None, {made.id: "trialing"})
    principal = await accounts.identity.authenticate_key(bound.secret)
    assert (principal.business_ids, principal.bound_business_id, principal.scopes) == (
        [made.id], made.id, ["calls:read"])
    await refused(accounts.identity.create_key(SESSION, None, None, new_id(), None), "forbidden", "not one of your businesses")
    await refused(accounts.identity.create_key(SESSION, None, ["calls:explode"], None, None), "invalid_request")
    await refused(accounts.identity.create_key(SESSION, None, None, None, utcnow() - timedelta(1)), "invalid_request",
                  "in the future")
    await refused(accounts.identity.create_key("not-a-session", None, None, None, None), "unauthorized")
    await refused(accounts.identity.list_keys(""), "unauthorized")
    await refused(accounts.identity.authenticate_key("svc_live_unknown"), "unauthorized", "invalid, expired or revoked")
    await refused(accounts.identity.authenticate_key("sk_other"), "unauthorized", domain.KEY_PREFIX)


async def test_a_key_is_changed_expired_and_revoked_once(accounts):
    key = await accounts.identity.create_key(SESSION, "ci", None, None, None)
    changed = await accounts.identity.update_key(SESSION, key.key.id, KeyChanges(name="deploys", scopes=["leads:read"]))
    assert (changed.key.name, changed.key.scopes, changed.is_active) == ("deploys", ["leads:read"], True)
    assert (await accounts.identity.authenticate_key(key.secret)).scopes == ["leads:read"]
    revoked = await accounts.identity.update_key(SESSION, key.key.id, KeyChanges(revoke=True))
    assert not revoked.is_active and revoked.key.revoked_at is not None
    await refused(accounts.identity.authenticate_key(key.secret), "unauthorized")
    await accounts.identity.revoke_key(SESSION, key.key.id)
    [listed] = await accounts.identity.list_keys(SESSION)
    assert listed.key.revoked_at == revoked.key.revoked_at  # the first revocation stays
    other = await accounts.identity.create_key(SESSION, None, None, None, None)
    expired = await accounts.identity.update_key(SESSION, other.key.id, KeyChanges(expire=True))
    assert not expired.is_active
    await refused(accounts.identity.authenticate_key(other.secret), "unauthorized")
    await refused(accounts.identity.revoke_key(SESSION, new_id()), "not_found", "API key")
    await refused(accounts.identity.update_key(SESSION, "nope", KeyChanges()), "invalid_request", "id")
