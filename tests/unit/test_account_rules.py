"""Plain-function rules of the accounts domain."""
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest

from core import events, plans
from core.errors import ServiceError
from core.scopes import DEFAULT_SCOPES, has_scope
from services.accounts import domain
from services.accounts.secret_keys import API_KEY, OAUTH_ACCESS_TOKEN, PURPOSES, SESSION, SecretKeys


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
    assert SecretKeys("s1").hash(API_KEY, key) != SecretKeys("s2").hash(API_KEY, key)
    assert SecretKeys("s1").hash(API_KEY, key) == SecretKeys("s1").hash(API_KEY, key)


def test_a_hash_names_its_version_and_one_purpose_is_no_use_for_another():
    keys = SecretKeys("s1", 3)
    assert keys.hash(API_KEY, "x").startswith("v3:") and keys.is_current(keys.hash(API_KEY, "x"))
    assert len({keys.hash(purpose, "x") for purpose in PURPOSES}) == len(PURPOSES)
    assert keys.signing_key(OAUTH_ACCESS_TOKEN)[1] != keys.signing_key(SESSION)[1]


def test_a_rotation_keeps_the_previous_version_and_the_hashes_from_before_versions():
    legacy = hmac.new(b"s1", b"x", hashlib.sha256).hexdigest()  # how every hash was made before versions
    before = SecretKeys("s1")
    assert before.hashes(SESSION, "x") == [before.hash(SESSION, "x"), legacy]
    rotated = SecretKeys("s2", 2, previous="s1")
    accepted = rotated.hashes(SESSION, "x")
    assert accepted[0] == rotated.hash(SESSION, "x") and before.hash(SESSION, "x") in accepted and legacy in accepted
    assert not rotated.is_current(before.hash(SESSION, "x"))
    assert rotated.verifying_key(OAUTH_ACCESS_TOKEN, "v1") == before.signing_key(OAUTH_ACCESS_TOKEN)[1]
    assert rotated.verifying_key(OAUTH_ACCESS_TOKEN, None) == hmac.new(
        b"s1", b"oauth access tokens", hashlib.sha256).hexdigest().encode()
    # the next rotation lets version 1 and the hashes from before versions go
    again = SecretKeys("s3", 3, previous="s2")
    assert before.hash(SESSION, "x") not in again.hashes(SESSION, "x") and legacy not in again.hashes(SESSION, "x")
    assert again.verifying_key(OAUTH_ACCESS_TOKEN, "v1") is None and again.verifying_key(OAUTH_ACCESS_TOKEN, None) is None
    with pytest.raises(ValueError):
        SecretKeys("s2", 1, previous="s1")


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
