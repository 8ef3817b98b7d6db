"""What a business may spend (core.standing), how the tenant carries it between processes, and who an API
caller's email may reach without the owner (services.messaging.domain)."""
from datetime import UTC, datetime, timedelta

import pytest

from core import caller, standing
from core.errors import ServiceError
from core.tenant import Tenant
from services.messaging import domain


@pytest.mark.parametrize("lifecycle, subscription, expected", [
    ("active", "trialing", "trialing"), ("active", "active", "active"),
    ("active", "past_due", "past_due"),  # the provider retries; billing pauses it after the grace period
    ("active", "incomplete", "unpaid"), ("active", "canceled", "canceled"),
    ("paused", "active", "paused"), ("canceled", "trialing", "canceled"), ("inactive", "canceled", "inactive")])
def test_standing_follows_the_lifecycle_first_then_the_subscription(lifecycle, subscription, expected):
    value = standing.standing(lifecycle, subscription)
    assert value == expected
    assert standing.is_good(value) == (value in standing.GOOD)


def test_a_refusal_names_the_state_and_what_to_do():
    for value in standing.HELD:
        err = standing.refusal(value, "placing calls")
        assert err.code == "forbidden" and err.message.startswith("placing calls is not allowed while ")
    assert "checkout" in standing.refusal(standing.UNPAID, "x").message
    assert "action resume" in standing.refusal(standing.PAUSED, "x").message


def test_the_tenant_carries_each_business_standing_through_metadata():
    who = Tenant(account_id="a", business_ids=("b1", "b2"), standings=(("b1", "trialing"), ("b2", "paused")))
    signing, verify = caller.new_key("gateway:1")
    keys = caller.KeyRing.parse(signing, verify)
    back = caller.Verifier(keys, "calls").verify(caller.Signer(keys).token_for(who, "calls"))  # as the interceptor
    assert back == who
    back.require_good_standing("b1", "texting")
    with pytest.raises(ServiceError) as refused:
        back.require_good_standing("b2", "texting")
    assert refused.value.code == "forbidden" and "paused" in refused.value.message
    # A token without the business's standing (a worker's) is not good standing: unknown is held (core.standings
    # asks the accounts service instead).
    with pytest.raises(ServiceError) as refused:
        Tenant(account_id="service:x", business_ids=("b2",)).require_good_standing("b2", "texting")
    assert refused.value.code == "forbidden" and "could not be confirmed" in refused.value.message


@pytest.mark.parametrize("recipient, approve, in_person, status", [
    (domain.OWNER, True, False, "approved"), (domain.KNOWN, True, False, "approved"),
    (domain.OTHER, True, False, "pending_approval"), (domain.OTHER, True, True, "approved"),
    (domain.KNOWN, False, True, "pending_approval")])
def test_only_the_owner_in_person_mails_a_stranger(recipient, approve, in_person, status):
    assert domain.queued_status(recipient, approve, in_person) == status
    assert (domain.approval_refusal(recipient, in_person) is None) == (recipient != domain.OTHER or in_person)


def test_the_recipient_is_the_owner_a_known_address_or_another_address():
    assert domain.recipient_of("o@example.com", "o@example.com", known=True) == domain.OWNER
    assert domain.recipient_of("l@example.com", "o@example.com", known=True) == domain.KNOWN
    assert domain.recipient_of("x@example.com", "o@example.com", known=False) == domain.OTHER
    # Before the owner confirmed the address, it is anyone's.
    assert domain.recipient_of("o@example.com", None, known=False) == domain.OTHER


def test_only_the_owner_in_person_approving_mail_to_a_stranger_approves_the_address():
    assert domain.approves_address(domain.OTHER, True)
    assert not domain.approves_address(domain.OTHER, False)
    assert not domain.approves_address(domain.KNOWN, True) and not domain.approves_address(domain.OWNER, True)


def test_the_quota_clears_when_the_oldest_email_leaves_the_day():
    now = datetime(2026, 11, 24, 12, tzinfo=UTC)
    assert domain.quota_retry_after(now - timedelta(hours=23), now) == 3601
    assert domain.quota_retry_after(now - timedelta(days=2), now) == 1
