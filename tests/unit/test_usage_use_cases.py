"""What each business used (services/accounts/billing/usage.py) in the fast tier, on the in-memory database
(tests/memory) with the agents service's number counts behind its port in memory (tests/memory/agents_port.py):
the gateways' usage recorded in batches and listed to its account only, calls billed once each, and the balances
an owner reads."""
import dataclasses
from datetime import timedelta

import pytest

from core.ids import new_id, utcnow
from core.pagination import Page
from core.tenant import Tenant, acting_as, acting_for
from core.uow import UnitOfWork
from services.accounts.billing.usage import Balance, CallCost, Usage
from services.accounts.records import UsageRecord
from services.accounts.schema import outbox
from tests.memory.accounts import MemoryAccountsUnit, MemoryHotPath
from tests.memory.agents_port import InMemoryAgents
from tests.use_cases import refused

AT = utcnow().replace(microsecond=0) - timedelta(hours=1)


@pytest.fixture
def agents():
    return InMemoryAgents(["+14155550110", "+14155550111", "+14155550112"])


@pytest.fixture
def usage(database, agents):
    return Usage(UnitOfWork(database, MemoryAccountsUnit, events=outbox), MemoryHotPath(database), agents)


async def an_account(usage: Usage, *statuses: str) -> tuple[str, list[str], str]:
    """An account with a workspace of each subscription status (oldest first) and an API key: (account, workspaces,
    key)."""
    account_id = new_id()
    async with usage.uow.transaction() as work:
        business_ids = [(await work.accounts.add_business(
            id=new_id(), account_id=account_id, name="Acme", lifecycle_state="active", metadata={}, plan_id="starter",
            subscription_status=status, created_at=AT + timedelta(minutes=n), updated_at=AT)).id
            for n, status in enumerate(statuses)]
        key = await work.accounts.add_key(id=new_id(), account_id=account_id, name="ci", prefix="sk_live_ab",
                                          key_hash=f"hash-{new_id()}", scopes=["calls:read"], created_at=AT)
    return account_id, business_ids, key.id


def request(account_id: str, business_id: str | None, key_id: str, minutes_ago: int, **values) -> UsageRecord:
    """An API request as a gateway records it."""
    return UsageRecord(**{"id": new_id(), "account_id": account_id, "business_id": business_id, "api_key_id": key_id,
                          "endpoint": "/api/v1/agents", "method": "GET", "status_code": 200, "call_id": None,
                          "cost_cents": 0, "created_at": AT - timedelta(minutes=minutes_ago), **values})


async def listed(usage: Usage, who: Tenant, start=None, end=None) -> list:
    """Every entry the caller lists, page after page of two."""
    rows, page = [], Page(limit=2)
    with acting_as(who):
        while True:
            paged = await usage.list_usage(start, end, page)
            rows += paged.rows
            if not paged.has_more:
                return rows
            page = Page(limit=2, cursor=paged.next_cursor)


async def test_usage_is_recorded_and_listed_newest_first_to_its_account_only(usage):
    account_id, (one, two), key_id = await an_account(usage, "active", "active")
    entries = [request(account_id, one, key_id, 3), request(account_id, two, key_id, 2),
               request(account_id, one, key_id, 1), request(account_id, "", key_id, 4, id="gw-1", endpoint="/" * 600)]
    assert await usage.record_usage(entries) == 4
    assert await usage.record_usage([]) == 0
    who = Tenant(account_id=account_id, business_ids=(one, two), api_key_id=key_id)
    everything = await listed(usage, who)
    assert [e.id for e in everything[:3]] == [entries[2].id, entries[1].id, entries[0].id]
    assert (everything[3].business_id, len(everything[3].endpoint)) == (None, 500) and everything[3].id != "gw-1"
    assert [e.id for e in await listed(usage, dataclasses.replace(who, bound_business_id=one))] == [
        entries[2].id, entries[0].id]  # a key bound to one workspace sees its entries only
    assert [e.id for e in await listed(usage, who, AT - timedelta(minutes=3), AT - timedelta(minutes=1))] == [
        entries[1].id, entries[0].id]
    assert await listed(usage, Tenant(account_id=new_id(), business_ids=(new_id(),))) == []  # another account's key
    with acting_as(who):
        await refused(usage.list_usage(AT, AT, Page(limit=2)), "invalid_request", "start must be before end")
    await refused(usage.list_usage(None, None, Page(limit=2)), "unauthorized")
    async with usage.uow.read() as work:
        [key] = await work.accounts.keys_of(account_id)
    assert key.last_used_at == AT - timedelta(minutes=1)  # its newest request


async def test_a_batch_with_an_entry_of_no_key_is_refused_whole(usage):
    account_id, (business_id,), key_id = await an_account(usage, "active")
    good = request(account_id, business_id, key_id, 1)
    await refused(usage.record_usage([good, dataclasses.replace(good, id=new_id(), api_key_id="not-a-key")]),
                  "invalid_request", "api_key_id")
    await refused(usage.record_usage([dataclasses.replace(good, account_id="")]), "invalid_request")
    assert await listed(usage, Tenant(account_id=account_id, business_ids=(business_id,))) == []


async def test_call_costs_are_billed_once_per_call_in_their_businesses_balances(usage, agents):
    account_id, (business_id, idle), _ = await an_account(usage, "active", "trialing")
    first, second = new_id(), new_id()
    costs = [CallCost(business_id, first, 61, 12, AT), CallCost(business_id, first, 61, 12, AT),  # redelivered
             CallCost(business_id, second, 0, -1, AT), CallCost(new_id(), new_id(), 30, 5, AT)]  # a gone business
    assert await usage.record_call_usage(costs) == 2
    assert await usage.record_call_usage(costs[:1]) == 0  # once per call, whichever batch brings it again
    assert await usage.record_call_usage([]) == 0
    who = Tenant(account_id=account_id, business_ids=(business_id, idle))
    calls = await listed(usage, who)
    assert sorted((c.call_id, c.cost_cents, c.method, c.api_key_id) for c in calls) == sorted(
        [(first, 12, "CALL", None), (second, 0, "CALL", None)])
    with acting_as(who):
        assert await usage.balances() == [Balance(business_id, 2, 0, "active"), Balance(idle, 0, 0, "trialing")]


async def test_balances_count_each_workspaces_numbers_oldest_first_and_no_other_accounts(usage, agents):
    account_id, (older, newer), _ = await an_account(usage, "active", "past_due")
    _, (theirs,), _ = await an_account(usage, "active")
    for business_id, number in ((newer, "+14155550110"), (newer, "+14155550111"), (theirs, "+14155550112")):
        with acting_as(acting_for(business_id, "test")):
            await agents.assign_number(business_id, number, new_id())
    await usage.record_call_usage([CallCost(older, new_id(), 300, 40, AT), CallCost(theirs, new_id(), 60, 8, AT)])
    with acting_as(Tenant(account_id=account_id, business_ids=(newer, older))):
        assert await usage.balances() == [Balance(older, 5, 0, "active"), Balance(newer, 0, 2, "past_due")]
