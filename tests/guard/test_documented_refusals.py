"""The fuzzing guard's own checks (schemathesis_hooks). Documented refusals on the messages the services really
write: a run refused for problems no schema can state is documented, one with a problem its published schema states
is not (issue 50's random-seed run: a preview refused for a scheduled_at a thousand years back). And a 404 after a
POST is a created record not found only for an id the link gave."""
import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from services.sdr import runs_domain as rules
from tests.guard import schemathesis_hooks as hooks
from tests.guard.schemathesis_hooks import RUN_REFUSED_BY_RULES

NOW = datetime(2027, 1, 13, 15, 0, tzinfo=UTC)
AGENT = "6f1c2b84-3f0e-4d55-9b7a-0a4c1d2e3f40"
OTHER_AGENT = "8f14e45f-ceea-467e-9a0a-1f2b3c4d5e6f"


def refusal(*touches: dict, numbers: dict | None = None, **run) -> str:
    """The 400 message preview and create answer for this run."""
    checked, problems = rules.check_run({"external_ref": "crm-1", "touches": list(touches), **run}, NOW)
    if checked is not None:
        _, problems = rules.agent_problems(checked, numbers or {AGENT: "+12125550100"})
    assert problems
    return rules.problems_error(problems).message


def touch(touch_id: str = "t'1; x", channel: str = "call", phone: str = "+12125550142", at: datetime = NOW,
          **extra) -> dict:
    return {"touch_id": touch_id, "channel": channel, "target": {"phone": phone},
            "scheduled_at": at.isoformat(), **extra}


@pytest.mark.parametrize("message", [
    refusal(touch(at=datetime(1076, 1, 22, 18, 5, tzinfo=UTC))),
    refusal(*(touch(f"t{i}", at=NOW + timedelta(days=91)) for i in range(7))),  # "(and 2 more)"
    refusal(touch(phone="+12125550000"), touch("t2", phone="+1999"), touch("t2")),
    refusal({**touch(), "target": {"phone": "+12125550142", "timezone": "Mars/Base"}}),
    refusal(touch(context={"notes": "x" * 9000})),
    refusal(touch(), agent_id=OTHER_AGENT),
    refusal(touch(), numbers={AGENT: "+12125550100", OTHER_AGENT: "+12125550101"}),
    refusal(touch(context={"agent_id": AGENT}), touch("t2", context={"agent_id": OTHER_AGENT}),
            numbers={AGENT: "+12125550100", OTHER_AGENT: "+12125550101"}),
])
def test_a_run_refused_for_rules_no_schema_states_is_documented(message):
    assert re.search(RUN_REFUSED_BY_RULES, message), message


@pytest.mark.parametrize("message", [
    refusal(touch(channel="sms")),  # context.body: the published schema requires it of an sms touch
    refusal(touch(at=NOW - timedelta(days=2)), touch("t2", channel="fax")),  # one documented, one not
    refusal(touch(touch_id="  ")),
    refusal(touch(), external_ref=""),
])
def test_a_run_refused_for_what_its_schema_states_is_not(message):
    assert not re.search(RUN_REFUSED_BY_RULES, message), message


class _Internals:
    def __init__(self, answer: dict):
        self.answer = answer

    def find_parent(self, case_id):
        return SimpleNamespace(id="parent")

    def find_response(self, case_id):
        return SimpleNamespace(json=lambda: self.answer)


@pytest.mark.parametrize("body, judged", [
    ({"id": "e14ad453-16fd-57b3-91fa-11947073d862", "name": "x"}, False),  # a generated id: its 404 is right
    ({"id": "a0d1c1c6-0c3e-4b1e-9d6a-3f1f6e0b2c55", "name": "x"}, True),  # the created agent's: judged
])
def test_a_404_is_judged_a_created_record_not_found_only_for_the_ids_the_link_gave(monkeypatch, body, judged):
    stock = []
    monkeypatch.setattr(hooks, "ensure_resource_availability", lambda *args: stock.append(args))
    ctx = SimpleNamespace(internals=_Internals({"id": "a0d1c1c6-0c3e-4b1e-9d6a-3f1f6e0b2c55", "version": 1,
                                                "business_id": "456f7824-d0d8-4279-b520-6b0df35898f4"}))
    hooks.ensure_resource_availability_of_linked_ids(ctx, SimpleNamespace(status_code=404), SimpleNamespace(
        id="case", body=body))
    assert bool(stock) is judged
