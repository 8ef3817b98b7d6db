"""Plain-function rules of the accounts domain."""
from datetime import UTC, datetime, timedelta

import pytest

from core import events, plans
from core.errors import ServiceError
from core.scopes import DEFAULT_SCOPES, has_scope
from services.accounts import domain


@pytest.mark.parametrize("state, action, expected, changed", [
    ("active", "pause", "paused", True),
    ("paused", "resume", "active", True),
    ("active", "cancel", "canceled", True),
    ("paused", "cancel", "canceled", True),
    ("canceled", "resume", "active", True),
    ("canceled", "teardown", "inactive", True),
    ("paused", "pause", "paused", False),
    ("active", "resume", "active", False),
    ("inactive", "teardown", "inactive", False),
])
def test_lifecycle_moves(state, action, expected, changed):
    assert domain.next_lifecycle_state(state, action) == (expected, changed)


@pytest.mark.parametrize("state, action", [
    ("active", "teardown"), ("paused", "teardown"), ("canceled", "pause"),
    ("inactive", "resume"), ("inactive", "pause"), ("inactive", "cancel"),
])
def test_refused_lifecycle_moves(state, action):
    with pytest.raises(ServiceError) as err:
        domain.next_lifecycle_state(state, action)
    assert err.value.code == "invalid_request" and state in err.value.message


def test_every_changing_action_that_ends_service_emits_an_event():
    assert {action: events.type_of(payload()) for action, payload in domain.ACTION_EVENTS.items()} == {
        "pause": "workspace.paused", "cancel": "workspace.canceled", "teardown": "workspace.teardown_completed"}


def test_scopes():
    assert domain.check_scopes(["calls:read", "calls:read", "*"]) == ["calls:read", "*"]
    with pytest.raises(ServiceError):
        domain.check_scopes(["calls:delete"])
    with pytest.raises(ServiceError):
        domain.check_scopes([])
    assert has_scope(("*",), "lifecycle:write")
    assert not has_scope(("workspaces:write",), "lifecycle:write")
    assert not any(s.endswith(":write") for s in DEFAULT_SCOPES)


def test_keys_are_prefixed_random_and_hashed_with_the_secret():
    key, prefix = domain.new_api_key()
    other, _ = domain.new_api_key()
    assert key.startswith("svc_live_") and key.startswith(prefix) and len(prefix) == 12 and key != other
    assert domain.keyed_hash("s1", key) != domain.keyed_hash("s2", key)
    assert domain.keyed_hash("s1", key) == domain.keyed_hash("s1", key)


def test_key_usability():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert domain.key_usable(None, None, now)
    assert domain.key_usable(None, now + timedelta(seconds=1), now)
    assert not domain.key_usable(None, now, now)
    assert not domain.key_usable(now, None, now)


def test_signup_limit_clears_as_attempts_age_out_of_the_hour():
    assert domain.signup_allowed(4, 5) and not domain.signup_allowed(5, 5)
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert domain.signup_retry_after(now - timedelta(minutes=59), now) == 61
    assert domain.signup_retry_after(now - timedelta(minutes=60), now) == 1


def test_signup_validation_normalises():
    form = domain.validate_signup("  Acme  ", "Owner@Example.COM", phone_forward_to="+44 20 7946 0958".replace(" ", ""))
    assert form.business_name == "Acme" and form.email == "owner@example.com"
    assert form.phone_forward_to == "+442079460958" and form.plan_id == "starter"
    with pytest.raises(ServiceError) as err:
        domain.validate_signup("Acme", "a@example.com", phone_forward_to="+15555555555")  # not a real number
    assert err.value.code == "validation_error"


def test_plan_id_is_a_plan_name_or_an_offered_checkout_price():
    prices = plans.parse_checkout_prices("starter=price_s, growth=price_g")
    assert prices == {"price_s": "starter", "price_g": "growth"}
    assert domain.validate_signup("Acme", "a@example.com", plan_id="price_g", prices=prices).plan_id == "growth"
    assert domain.validate_signup("Acme", "a@example.com", plan_id="scale", prices=prices).plan_id == "scale"
    assert domain.validate_signup("Acme", "a@example.com", prices=prices).plan_id == "starter"
    with pytest.raises(ServiceError) as err:
        domain.validate_signup("Acme", "a@example.com", plan_id="price_unknown", prices=prices)
    assert err.value.code == "validation_error" and "price_g" in err.value.message
    with pytest.raises(SystemExit):
        plans.parse_checkout_prices("platinum=price_p")
