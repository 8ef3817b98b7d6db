"""A torn-down business's data deletion's rules (services/accounts/privacy/teardown_deletion.py, accounts.domain):
when it is due, which step is next, how the rounds of a step add up."""
from datetime import UTC, datetime, timedelta

from services.accounts.domain import data_deletion_due
from services.accounts.privacy.teardown_deletion import STEPS, next_step, report_lines, with_round

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_a_teardown_makes_the_deletion_due_at_the_end_of_the_grace_period():
    due = data_deletion_due(NOW, timedelta(days=30))
    assert due["data_deletion_due_at"] == due["data_deletion_next_at"] == datetime(2026, 3, 31, 12, tzinfo=UTC)
    assert due["data_deletion_steps"] == {} and due["data_deletion_attempts"] == 0
    assert data_deletion_due(NOW, timedelta(0))["data_deletion_due_at"] == NOW


def test_the_agents_step_comes_first_and_the_accounts_step_last():
    assert STEPS[0] == "agents" and STEPS[-1] == "accounts"
    assert next_step({}) == "agents"


def test_a_step_that_says_more_stays_next_and_its_rounds_add_up():
    line = {"what": "calls.call", "action": "redacted", "count": 100}
    steps = with_round({}, "agents", [], False)
    steps = with_round(steps, "sdr", [], False)
    steps = with_round(steps, "calls", [line], True)
    assert next_step(steps) == "calls"
    steps = with_round(steps, "calls", [{**line, "count": 7}, {"what": "provider.call", "action": "provider_deleted",
                                                               "count": 7}], False)
    assert next_step(steps) == "messaging"
    assert [(r["service"], r["what"], r["count"]) for r in report_lines(steps)] == [
        ("calls", "calls.call", 107), ("calls", "provider.call", 7)]


def test_every_step_done_leaves_nothing_next():
    steps: dict = {}
    for step in STEPS:
        steps = with_round(steps, step, [], False)
    assert next_step(steps) is None
