"""core.standings: the gateway's word when the token carries it, else the accounts service's, kept briefly (a fixed
clock here) and forgotten when a standing change is heard; what nobody can tell is held."""
import json
from types import SimpleNamespace

import pytest

from core import standing, standings
from core.errors import ServiceError
from core.standings import Facts, Standings
from core.tenant import Tenant, acting_as, acting_for


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Connected:
    """What HeardInvalidations reads of a NATS connection that is up."""
    is_connected = True

    def __init__(self):
        self.stats = {"reconnects": 0}


class Accounts:
    def __init__(self, known: dict[str, str]):
        self.known, self.asked = known, 0

    async def __call__(self, business_id: str) -> Facts:
        self.asked += 1
        return Facts(self.known[business_id], "starter") if business_id in self.known else standings.UNKNOWN_FACTS


def listening(ask, clock) -> Standings:
    kept = Standings(ask, ttl=30, clock=clock)
    kept.heard.attach(Connected())  # as attach() does once subscribed
    return kept


async def test_the_gateways_word_is_used_without_asking():
    accounts = Accounts({"b1": "paused"})
    kept = listening(accounts, Clock())
    with acting_as(Tenant(account_id="a", business_ids=("b1",), standings=(("b1", "trialing"),))):
        await kept.require_good("b1", "placing calls")
    assert accounts.asked == 0


async def test_without_it_the_accounts_service_is_asked_and_kept_until_the_ttl_or_a_change():
    accounts, clock = Accounts({"b1": "paused"}), Clock()
    kept = listening(accounts, clock)
    with acting_as(acting_for("b1", "test")):
        with pytest.raises(ServiceError) as refused:
            await kept.require_good("b1", "placing calls")
        assert refused.value.code == "forbidden" and "paused" in refused.value.message
        accounts.known["b1"] = "active"
        assert not await kept.is_good("b1") and accounts.asked == 1  # kept
        await kept._on_change(SimpleNamespace(data=json.dumps({"business_id": "b1", "type": "x"}).encode()))
        assert await kept.is_good("b1") and accounts.asked == 2  # forgotten on the change
        accounts.known["b1"] = "canceled"
        clock.now += 31
        assert not await kept.is_good("b1") and accounts.asked == 3  # asked again after the ttl


async def test_nothing_is_kept_while_changes_cannot_be_heard():
    accounts = Accounts({"b1": "active"})
    kept = Standings(accounts, clock=Clock())  # never attached: not connected to NATS
    with acting_as(acting_for("b1", "test")):
        assert await kept.is_good("b1") and await kept.is_good("b1")
    assert accounts.asked == 2


async def test_unknown_standing_is_held():
    kept = listening(Accounts({}), Clock())  # no record of the business
    with acting_as(acting_for("b1", "test")):
        with pytest.raises(ServiceError) as refused:
            await kept.require_good("b1", "answering calls")
    assert refused.value.code == "forbidden" and "could not be confirmed" in refused.value.message
    assert not standing.is_good("") and not standing.is_good(standing.UNKNOWN)


class Unreachable:
    async def GetWorkspace(self, request):
        raise ConnectionError("accounts is down")


class NoRecord:
    async def GetWorkspace(self, request):
        raise ServiceError("not_found", "workspace not found")


@pytest.mark.parametrize("accounts", [Unreachable(), NoRecord()], ids=["unreachable", "no record"])
async def test_an_accounts_service_that_cannot_tell_means_held(accounts):
    facts = await standings.asking(accounts)("b1")
    assert facts.standing == standing.UNKNOWN and not standing.is_good(facts.standing)
