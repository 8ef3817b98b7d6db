"""core.costs: only tagged work is counted, per tag, and taking a tag's counts forgets them."""
import asyncio

import pytest

from core import costs


@pytest.fixture
def counting(monkeypatch):
    monkeypatch.setattr(costs, "enabled", True)


def test_nothing_is_counted_while_counting_is_off(monkeypatch):
    monkeypatch.setattr(costs, "enabled", False)
    with costs.tagged("t-off"):
        costs.count(costs.SQL, "SELECT 1")
        assert costs.metadata() == ()
    assert costs.take("t-off") == {}


def test_tagged_work_is_counted_under_its_tag_and_forgotten_once_taken(counting):
    costs.count(costs.SQL, "SELECT untagged")
    with costs.tagged("t-1"):
        costs.count_statement("BEGIN")
        costs.count_statement("SELECT  1\n FROM x")
        costs.count_statement("COMMIT")
        costs.count(costs.RPC, "GetWorkspace")
        assert costs.metadata() == ((costs.METADATA_KEY, "t-1"),)
    assert costs.take("t-1") == {"transaction": 1, "sql": 1, "sql:SELECT 1 FROM x": 1, "rpc": 1,
                                 "rpc:GetWorkspace": 1}
    assert costs.take("t-1") == {}


async def test_a_task_started_by_a_tagged_request_counts_under_its_tag(counting):
    async def provider_call():
        costs.count(costs.PROVIDER, "VapiClient")
    with costs.tagged("t-2"):
        task = asyncio.ensure_future(provider_call())
    await task
    assert costs.take("t-2") == {"provider": 1, "provider:VapiClient": 1}


def test_a_budget_names_each_kind_spent_beyond_it():
    budget = costs.Budget(sql=1, rpc=1)
    assert budget.over({"sql": 1, "rpc": 1}) == {}
    assert budget.over({"sql": 3, "rpc": 1, "provider": 1}) == {"sql": (3, 1), "provider": (1, 0)}
    assert budget.plus(costs.Budget(rpc=1, sql=2)) == costs.Budget(sql=3, rpc=2)


def test_what_a_request_leaves_to_consumers_carries_its_after_tag_onward(counting):
    assert costs.carried() == {}
    with costs.tagged("t-3"):
        headers = costs.carried()
    assert headers == {costs.METADATA_KEY: "t-3:after"}
    with costs.tagged(costs.tag_of(headers)):  # a consumer's own events carry the same after-tag, not a new one
        assert costs.carried() == headers


def test_a_batch_is_cut_into_runs_of_one_tag_in_order(counting, monkeypatch):
    a, b = {costs.METADATA_KEY: "a"}, {costs.METADATA_KEY: "b"}
    batch = [(1, a), (2, a), (3, None), (4, b), (5, a)]
    assert [[n for n, _ in run] for run in costs.by_tag(batch, lambda m: m[1])] == [[1, 2], [3], [4], [5]]
    monkeypatch.setattr(costs, "enabled", False)
    assert costs.by_tag(batch, lambda m: m[1]) == [batch]  # production batches are never cut
