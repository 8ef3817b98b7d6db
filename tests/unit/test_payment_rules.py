"""Payment, billing and provisioning rules (services.accounts.billing.payments_domain, provisioning_domain)."""
from datetime import UTC, datetime, timedelta

import pytest

from contracts import billing as billing_contract
from core import plans
from services.accounts.billing import payments_domain as pay
from services.accounts.billing.workspace_billing import limit_refusal
from services.accounts.provisioning import domain as saga

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
GRACE = timedelta(hours=72)


def billing(state="active", status="trialing", by_billing=False, past_due_since=None, trial_ends_at=None,
            paid_through=None) -> pay.Billing:
    return pay.Billing(state, status, by_billing, past_due_since, trial_ends_at, paid_through)


@pytest.mark.parametrize("provider, ours", [("trialing", "trialing"), ("active", "active"), ("past_due", "past_due"),
                                             ("unpaid", "past_due"), ("paused", "past_due"),
                                             ("canceled", "canceled"), ("incomplete_expired", "canceled"),
                                             ("incomplete", "incomplete"), ("something_new", None)])
def test_provider_statuses_read_as_ours(provider, ours):
    assert pay.our_status(provider) == ours


def test_an_event_sets_the_status_only_when_newer_and_canceled_is_final():
    assert pay.applies(NOW, None, "trialing")
    assert pay.applies(NOW, NOW, "trialing")  # the same second: arrival order
    assert not pay.applies(NOW - timedelta(seconds=1), NOW, "active")
    assert not pay.applies(NOW + timedelta(days=1), NOW, "canceled")


def test_overdue_past_the_grace_period_pauses_and_payment_resumes():
    overdue = billing(status="past_due", past_due_since=NOW - GRACE)
    assert pay.billing_move(overdue, NOW, GRACE) == ("pause", pay.PAYMENT_OVERDUE)
    within = billing(status="past_due", past_due_since=NOW - GRACE + timedelta(minutes=1))
    assert pay.billing_move(within, NOW, GRACE) is None
    paid = billing(state="paused", status="active", by_billing=True)
    assert pay.billing_move(paid, NOW, GRACE) == ("resume", None)
    # A pause the owner made is theirs to undo.
    assert pay.billing_move(billing(state="paused", status="active"), NOW, GRACE) is None


def test_a_trial_that_ends_without_a_checkout_pauses():
    unpaid = billing(status="incomplete", trial_ends_at=NOW)
    assert pay.billing_move(unpaid, NOW, GRACE) == ("pause", pay.TRIAL_ENDED_UNPAID)
    assert pay.billing_move(billing(status="incomplete", trial_ends_at=NOW + timedelta(days=1)), NOW, GRACE) is None


def test_a_canceled_subscription_cancels_the_workspace_once():
    assert pay.billing_move(billing(status="canceled"), NOW, GRACE) == ("cancel", pay.SUBSCRIPTION_CANCELED)
    assert pay.billing_move(billing(state="paused", status="canceled"), NOW, GRACE)[0] == "cancel"
    assert pay.billing_move(billing(state="canceled", status="canceled"), NOW, GRACE) is None
    assert pay.billing_move(billing(state="inactive", status="canceled"), NOW, GRACE) is None


def test_an_x402_period_that_ran_out_pauses_after_the_grace_period():
    assert pay.billing_move(billing(status="active", paid_through=NOW - GRACE), NOW, GRACE) == \
        ("pause", pay.PAYMENT_OVERDUE)
    assert pay.billing_move(billing(status="active", paid_through=NOW), NOW, GRACE) is None


def test_x402_amounts_are_the_monthly_price_in_usdc_atomic_units():
    assert pay.x402_amount("starter") == "49000000"
    assert all(int(pay.x402_amount(p)) == plans.MONTHLY_PRICE_CENTS[p] * 10**4 for p in plans.PLANS)


def test_the_checkout_price_of_a_plan():
    prices = {"price_s": "starter", "price_g": "growth"}
    assert pay.price_of("growth", prices) == "price_g"
    assert pay.price_of("scale", prices) is None


@pytest.mark.parametrize("obj, business", [
    ({"metadata": {"business_id": "b1"}}, "b1"),
    ({"client_reference_id": "b2", "metadata": {}}, "b2"),
    ({"parent": {"subscription_details": {"metadata": {"business_id": "b3"}}}}, "b3"),
    ({"subscription_details": {"metadata": {"business_id": "b4"}}}, "b4"),
    ({"metadata": {}}, None),
])
def test_the_business_an_event_is_about(obj, business):
    assert pay.business_of_event(obj) == business


def test_saga_steps_skip_forwarding_without_a_phone():
    assert saga.next_step(saga.AGENT, None) == saga.NUMBER
    assert saga.next_step(saga.NUMBER, None) == saga.DONE
    assert saga.next_step(saga.NUMBER, "+14155550177") == saga.FORWARDING
    assert saga.next_step(saga.FORWARDING, "+14155550177") == saga.DONE


def test_saga_retries_double_and_are_capped():
    assert [saga.retry_delay(n, 5).total_seconds() for n in (1, 2, 3)] == [5, 10, 20]
    assert saga.retry_delay(50, 5).total_seconds() == 5 * saga.MAX_RETRY_FACTOR


def test_the_intake_agent_names_the_business():
    name, prompt, greeting = saga.intake_agent("Acme Plumbing", "plumber", "https://acme.example")
    assert name == "Acme Plumbing intake" and "a plumber" in prompt and "https://acme.example" in prompt
    assert "Acme Plumbing" in greeting
    assert len(saga.intake_agent("x" * 200, None, None)[0]) <= 100


def test_a_number_is_looked_for_near_the_forward_to_phone_first():
    assert saga.number_searches("+14155550177") == [("US", "415"), ("US", None), (None, None)]
    assert saga.number_searches("+442079460000") == [("GB", "20"), ("GB", None), (None, None)]
    assert saga.number_searches(None) == [("US", None), (None, None)]


@pytest.mark.parametrize("lifecycle, status, allowed", [
    ("active", "incomplete", True), ("paused", "incomplete", True), ("canceled", "canceled", True),
    ("active", "past_due", True),  # its open invoice's page
    ("active", "trialing", False), ("active", "active", False), ("inactive", "canceled", False)])
def test_a_new_checkout_only_without_a_paid_subscription_in_force(lifecycle, status, allowed):
    assert (pay.checkout_refusal(lifecycle, status) is None) == allowed


def test_a_reopened_signup_keeps_its_trial_and_a_resubscription_has_none():
    assert (pay.checkout_trial_days("incomplete", 7), pay.checkout_trial_days("canceled", 7)) == (7, 0)


def test_an_earlier_checkout_paid_meanwhile_stops_a_new_one():
    assert pay.starts_a_subscription("complete", "sub_new", None)  # the signup's, paid a moment ago
    assert pay.starts_a_subscription("complete", "sub_new", "sub_old")  # a resubscription, paid a moment ago
    assert not pay.starts_a_subscription("complete", "sub_old", "sub_old")  # the canceled one's own checkout
    assert not pay.starts_a_subscription("expired", None, None)


def test_the_trial_notice_names_the_business_the_day_and_the_dashboard():
    subject, body = pay.trial_ending_notice("Acme Plumbing", datetime(2026, 12, 1, 9, 30, tzinfo=UTC),
                                            "https://sb.example/dashboard")
    assert subject == "Your Switchboard trial for Acme Plumbing ends on 01 December"
    assert "Tuesday 01 December 2026 (09:30 UTC)" in body and "https://sb.example/dashboard" in body


def test_the_plan_follows_the_subscriptions_price_when_we_offer_it():
    prices = {"price_growth_monthly": "growth"}
    sub = {"items": {"data": [{"price": {"id": "price_growth_monthly"}}]}}
    assert pay.plan_of_subscription(sub, prices) == "growth"
    assert pay.plan_of_subscription({"items": {"data": [{"price": {"id": "price_other"}}]}}, prices) is None
    assert pay.plan_of_subscription({}, prices) is None


def test_the_events_that_write_to_the_owner():
    link = {"hosted_invoice_url": "https://invoice.example/i/in_1"}
    subject, body = pay.owner_notice("invoice.payment_action_required", link, "Acme", "https://sb.example/dashboard")
    assert "needs your confirmation" in subject and "https://invoice.example/i/in_1" in body
    ends = {"trial_end": int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())}
    assert "ends on 01 December" in pay.owner_notice("customer.subscription.trial_will_end", ends, "Acme", "u")[0]
    assert pay.owner_notice("invoice.paid", link, "Acme", "u") is None
    assert pay.owner_notice("invoice.payment_action_required", {}, "Acme", "u") is None


# -- x402 periods ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("paid_through, trial_ends_at, start", [
    (None, NOW + timedelta(days=7), NOW + timedelta(days=7)),  # a signup: its trial, then the month
    (NOW + timedelta(days=2), NOW - timedelta(days=28), NOW + timedelta(days=2)),  # renewed before the end
    (NOW - timedelta(days=3), NOW - timedelta(days=40), NOW),  # renewed after it ran out: from now
    (None, None, NOW),  # a canceled card subscription moving to x402
])
def test_a_settled_x402_payment_pays_one_period_on_from_what_is_paid(paid_through, trial_ends_at, start):
    grant = pay.x402_grant(paid_through, trial_ends_at, NOW)
    assert grant["paid_through"] == start + billing_contract.X402_PERIOD
    assert (grant["subscription_status"], grant["payment_capture"], grant["past_due_since"]) == (
        billing_contract.ACTIVE, billing_contract.X402, None)


@pytest.mark.parametrize("state, status, capture, paid_through, pending, refused", [
    ("active", billing_contract.ACTIVE, billing_contract.X402, NOW + timedelta(days=10), False, None),
    ("paused", billing_contract.ACTIVE, billing_contract.X402, NOW - timedelta(days=1), False, None),  # paused for non-payment
    ("active", billing_contract.INCOMPLETE, billing_contract.X402, None, False, None),  # a signup whose x402 payment failed
    ("canceled", billing_contract.CANCELED, billing_contract.HOSTED_CHECKOUT, None, False, None),  # resubscribe by x402
    ("active", billing_contract.INCOMPLETE, billing_contract.HOSTED_CHECKOUT, None, False, None),  # a checkout never completed
    ("active", billing_contract.TRIALING, billing_contract.HOSTED_CHECKOUT, None, False, "billed to the card"),
    ("active", billing_contract.PAST_DUE, billing_contract.HOSTED_CHECKOUT, None, False, "billed to the card"),
    ("active", billing_contract.ACTIVE, billing_contract.X402, NOW + timedelta(days=31), False, "can be paid from"),
    ("active", billing_contract.ACTIVE, billing_contract.X402, NOW + timedelta(days=10), True, "still being confirmed"),
    ("inactive", billing_contract.ACTIVE, billing_contract.X402, NOW + timedelta(days=10), False, "torn down"),
])
def test_who_may_pay_the_next_x402_period(state, status, capture, paid_through, pending, refused):
    why = pay.x402_renewal_refusal(state, status, capture, paid_through, NOW, pending)
    assert (why is None) if refused is None else (refused in why), why


@pytest.mark.parametrize("reason, fate", [
    (pay.NONCE_USED, billing_contract.X402_SETTLED),  # the earlier settlement took it: it pays only us
    (pay.AUTHORIZATION_EXPIRED, billing_contract.X402_UNRESOLVED),  # expired: the facilitator cannot say whether it was taken
    ("invalid_exact_evm_insufficient_balance", billing_contract.X402_FAILED),
    ("invalid_exact_evm_payload_signature", billing_contract.X402_FAILED),
])
def test_what_a_refused_second_settlement_says_about_a_pending_payment(reason, fate):
    assert pay.x402_fate(reason) == fate


def test_the_renewal_reminder_names_the_route_the_amount_and_the_pause():
    subject, body = pay.renewal_reminder("Acme", "starter", NOW + timedelta(days=3), GRACE, "https://sb.example")
    assert "ends on 26 November" in subject
    assert "https://sb.example/api/v1/subscription/x402" in body and "49.00 USDC" in body and "72 hours" in body


# -- the owner's resume (issue 51) ------------------------------------------------------------------------

GRACE = timedelta(hours=72)


@pytest.mark.parametrize("state, status, by_billing, past_due_since, refused", [
    ("paused", billing_contract.ACTIVE, False, None, False),  # the owner's own pause
    ("paused", billing_contract.PAST_DUE, True, NOW - timedelta(days=4), True),  # billing's, still overdue
    ("paused", billing_contract.ACTIVE, True, None, False),  # billing's, paid again: billing resumes it anyway
    ("canceled", billing_contract.PAST_DUE, True, NOW - timedelta(days=4), True),  # canceled by the owner since: still billing's
    ("canceled", billing_contract.ACTIVE, True, None, False),  # ... and paid again since
])
def test_only_the_owners_own_pause_is_the_owners_to_resume(state, status, by_billing, past_due_since, refused):
    why = pay.owner_resume_refusal(pay.Billing(state, status, by_billing, past_due_since, None, None), NOW, GRACE)
    assert (why is not None) == refused
    if refused:
        assert "billing paused this workspace" in why and "/api/v1/subscription/checkout" in why


def test_a_settled_x402_payment_makes_a_workspace_pay_for_itself():
    assert pay.x402_grant(None, None, NOW)["billed_on"] is None


@pytest.mark.parametrize("plan, count, refused", [
    ("starter", 2, False), ("starter", 3, True), ("growth", 9, False), ("growth", 10, True), ("scale", 25, True)])
def test_each_plan_limits_the_accounts_workspaces(plan, count, refused):
    why = limit_refusal(plan, count)
    assert (why is not None) == refused
    if refused:
        assert f"the {plan} plan allows {plans.WORKSPACE_LIMITS[plan]} workspaces" in why
