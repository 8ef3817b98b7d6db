"""Lead rules and scoring as plain functions."""
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import ServiceError
from services.sdr import domain, scoring

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def facts(**overrides) -> scoring.LeadFacts:
    base = dict(source="api", status="new", has_email=False, has_phone=False, interactions=0,
                last_activity=NOW, intent=None)
    return scoring.LeadFacts(**{**base, **overrides})


def test_score_adds_up_documented_factors():
    s = scoring.score_lead(facts(), NOW)
    assert s.score == 25 and s.confidence == "low"  # api 10 + active within a day 15
    assert s.factors == ["source api: +10", "active within a day: +15"]
    s = scoring.score_lead(facts(source="inbound_call", status="qualified", has_email=True, has_phone=True,
                                 interactions=5, intent="quote"), NOW)
    assert s.score == 100  # 109 before clamping
    assert s.confidence == "high" and s.explanation.startswith("score 100 from source inbound_call (+25)")
    assert scoring.score_lead(facts(last_activity=NOW - timedelta(days=3)), NOW).score == 18
    assert scoring.score_lead(facts(last_activity=NOW - timedelta(days=30), source="mystery"), NOW).score == 5
    assert scoring.score_lead(facts(interactions=1), NOW).confidence == "medium"


@pytest.mark.parametrize("status, expected", [("converted", 100), ("lost", 0), ("spam", 0), ("do_not_contact", 0)])
def test_closed_statuses_have_fixed_scores(status, expected):
    assert scoring.score_lead(facts(status=status, interactions=9, intent="x"), NOW).score == expected


def test_create_defaults_and_derived_name():
    values = domain.new_lead_values({"first_name": " Dana ", "last_name": "Reyes", "email": "D@X.io"})
    assert values == {"first_name": "Dana", "last_name": "Reyes", "email": "d@x.io", "name": "Dana Reyes",
                      "status": "new", "source": "api"}
    assert domain.new_lead_values({"name": "Sam", "first_name": "S"})["name"] == "Sam"


def test_patch_keeps_to_its_fields_and_statuses():
    current = {"name": "Dana Reyes", "first_name": "Dana", "last_name": "Reyes", "status": "new", "city": None}
    assert domain.changed_values(current, {"city": "Oakland", "status": "new"}) == {"city": "Oakland"}
    assert domain.changed_values(current, {"last_name": "Ruiz"}) == {"last_name": "Ruiz", "name": "Dana Ruiz"}
    for bad in ({"status": "spam"}, {"agent_id": "x"}, {"source": " "}, {"phone": "555"}):
        with pytest.raises(ServiceError):
            domain.changed_values(current, bad)


def test_interaction_and_audit_bounds():
    domain.check_interaction("call", "inbound", "call-1")
    for args in (("fax", "inbound", "r"), ("call", "sideways", "r"), ("sms", "outbound", " ")):
        with pytest.raises(ServiceError):
            domain.check_interaction(*args)
    domain.check_audit(24, 3, 80)
    for args in ((0, 3, 80), (24, 0, 80), (24, 3, 101)):
        with pytest.raises(ServiceError):
            domain.check_audit(*args)


def test_an_address_is_known_only_when_the_caller_gave_it_on_an_inbound_call():
    lead = {"email": "dana@example.com", "email_known_at": None}
    assert domain.email_given_on_call(lead, "inbound", {"email": " Dana@Example.com "})
    assert not domain.email_given_on_call(lead, "outbound", {"email": "dana@example.com"})
    assert not domain.email_given_on_call(lead, "inbound", {"email": "someone@example.com"})  # a key's address stays
    assert not domain.email_given_on_call(lead, "inbound", {})
    assert not domain.email_given_on_call({**lead, "email_known_at": datetime(2026, 1, 1, tzinfo=UTC)}, "inbound",
                                          {"email": "dana@example.com"})
    # Written through the API, an address is a stranger's again; other fields leave it as it is.
    assert domain.email_known_at({"email": "x@example.com"}) == {"email_known_at": None}
    assert domain.email_known_at({"name": "Dana"}) == {}
