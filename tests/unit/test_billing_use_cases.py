"""The accounts service's billing use cases (services/accounts/billing) in the fast tier, on the in-memory database
(tests/memory), the payments simulator and the x402 facilitator served in this process with their real clients
(tests/unit/conftest.py), and the real provisioning saga on an in-memory agents port: signup by card opens a checkout and the account waits for its payment (a new checkout
replaces an unpaid link); the provider's events, applied as its consumer applies them (Payments.apply_event), start
the subscription and resume the signup's provisioning once; billing's sweep pauses a trial ended unpaid and a
payment past its grace period, and the owner cannot lift that hold; workspaces are added to the account's
subscription up to the plan's limit; signup by x402 pays once, and a settlement left unanswered is reconciled.
x402 renewals, reminders and workspaces paid by x402 stay with the stack-backed tests
(tests/e2e/test_signup_payments.py, test_workspace_billing.py)."""
from datetime import timedelta
from typing import NamedTuple

import pytest

from contracts import billing as billing_contract
from core import plans
from core.bus import EventBus
from core.errors import ServiceError
from core.settings import Settings
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from providers.x402 import payer
from services.accounts.billing import payments_domain as pay
from services.accounts.billing import payments_service
from services.accounts.billing.checkouts import Checkouts
from services.accounts.billing.payments_service import Payments
from services.accounts.billing.signup import SignedUp, Signup
from services.accounts.billing.workspace_billing import WorkspaceBilling
from services.accounts.billing.x402_billing import X402Billing
from services.accounts.identity.service import Identity
from services.accounts.provisioning.service import Provisioning
from services.accounts.schema import outbox
from services.accounts.workspaces.service import Workspaces
from tests.billing import DECLINED_CARD
from tests.memory.accounts import MemoryAccountsUnit, MemoryHotPath
from tests.memory.agents_port import InMemoryAgents
from tests.use_cases import refused

GRACE = timedelta(hours=72)
STARTER = plans.WORKSPACE_LIMITS["starter"]


def saga(database, business_id: str) -> dict:
    """The signup's provisioning saga as stored."""
    [row] = [r for r in database.tables["accounts.provisionings"].values() if r["business_id"] == business_id]
    return row


class Billing(NamedTuple):
    signup: Signup
    payments: Payments
    x402: X402Billing
    checkouts: Checkouts
    workspaces: Workspaces
    agents: InMemoryAgents


@pytest.fixture
def billing(database, payments_client, x402_gate) -> Billing:
    """Billing's use cases as services.accounts.billing.worker.payment_parts wires them, on the payments
    simulator's real client and the facilitator's real x402 gate, with the owner's workspace use cases over them
    (their gateways' invalidation over a bus that never connected: best effort)."""
    settings, agents = Settings(), InMemoryAgents(["+14155550123"])
    uow = UnitOfWork(database, MemoryAccountsUnit, events=outbox)
    sagas = Provisioning(uow, agents, retry_seconds=60)
    payments = Payments(uow, payments_client, x402_gate, sagas, settings.public_base_url, GRACE,
                        settings.checkout_prices)
    x402 = X402Billing(payments, timedelta(seconds=1))
    identity = Identity(uow, MemoryHotPath(database), EventBus("nats://127.0.0.1:9", "accounts-fast-tier"), settings)
    workspaces = Workspaces(uow, MemoryHotPath(database), WorkspaceBilling(uow, payments, x402), identity,
                            timedelta(days=settings.teardown_grace_days))
    return Billing(Signup(uow, settings, payments, x402, sagas), payments, x402, Checkouts(uow, payments), workspaces,
                   agents)


async def signed_up(billing: Billing, email: str = "owner@acme-plumbing.com", payment: str | None = None) -> SignedUp:
    """A signup from one address, paid by card, or by x402 with `payment` (a PAYMENT-SIGNATURE header; "": none)."""
    return await billing.signup.signup("Acme Plumbing", email, "plumbing", "https://acme.example", "+14155550100",
                                       "starter", "203.0.113.7", payment or "", x402=payment is not None)


async def x402_terms(billing: Billing) -> str:
    """The PAYMENT-REQUIRED header a signup by x402 without a payment is answered (402 payment_required)."""
    with pytest.raises(ServiceError) as asked:
        await signed_up(billing, payment="")
    assert asked.value.code == "payment_required"
    return asked.value.details["payment_required"]


def business(database, business_id: str) -> dict:
    return database.tables["accounts.businesses"][(business_id,)]


async def applied(billing: Billing, payments_provider) -> list[str]:
    """The provider's new events applied as the PROVIDER stream's consumer applies them: their types."""
    events = payments_provider.new_events()
    for event in events:
        await billing.payments.apply_event(event)
    return [event["type"] for event in events]


async def card_fails(payments_provider, sub_id: str, fail: bool) -> None:
    """The subscription's card is declined (or works) from its next charge on."""
    assert (await payments_provider.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": fail}))[0] == 200


async def paid_signup(billing: Billing, payments_provider, database) -> tuple[SignedUp, str]:
    """A signup whose checkout was paid with the prefilled test card and its events applied: it and its
    subscription at the provider."""
    made = await signed_up(billing)
    assert (await payments_provider.check_out(made.checkout_url))[0] == 303
    await applied(billing, payments_provider)
    return made, business(database, made.business_id)["subscription_id"]


async def test_signup_by_card_opens_a_checkout_and_the_account_waits_for_its_payment(billing, payments_provider,
                                                                                    database):
    made = await signed_up(billing)
    assert (made.payment_capture, made.provisioning_deferred, made.agent_id) == ("stripe_checkout", True, None)
    assert made.checkout_url.startswith(payments_provider.url + "/c/pay/")
    row = business(database, made.business_id)
    assert (row["lifecycle_state"], row["subscription_status"], row["plan_id"]) == ("active", "incomplete", "starter")
    assert row["checkout_session_id"] == made.checkout_url.rsplit("/", 1)[-1]
    assert saga(database, made.business_id)["status"] == "waiting_payment"
    [user] = database.tables["accounts.users"].values()
    assert user["email"] == "owner@acme-plumbing.com" and row["account_id"] == user["id"]
    assert len(database.tables["accounts.api_keys"]) == len(database.tables["accounts.magic_links"]) == 1
    # The address is taken now: a second signup is refused before any checkout is opened.
    await refused(signed_up(billing), "email_exists")
    assert len(database.tables["accounts.businesses"]) == 1
    # A declined card changes nothing: no event, the account still waits.
    status, page = await payments_provider.check_out(made.checkout_url, card=DECLINED_CARD)
    assert status == 402 and payments_provider.new_events() == []
    assert business(database, made.business_id)["subscription_status"] == "incomplete"


async def test_a_new_checkout_replaces_the_signups_unpaid_one_and_none_is_opened_once_paid(
        billing, payments_provider, database):
    made = await signed_up(billing)
    first = business(database, made.business_id)["checkout_session_id"]
    account_id = business(database, made.business_id)["account_id"]
    with acting_as(Tenant(account_id=account_id, business_ids=(made.business_id,))):
        business_id, checkout = await billing.checkouts.reopen(None)
        assert business_id == made.business_id and checkout.id != first
        assert business(database, made.business_id)["checkout_session_id"] == checkout.id
        # The earlier link was expired at the provider (it can no longer be paid beside the new one), and its event
        # leaves the new one on the business.
        assert await applied(billing, payments_provider) == ["checkout.session.expired"]
        assert business(database, made.business_id)["checkout_session_id"] == checkout.id
        assert (await payments_provider.check_out(checkout.url))[0] == 303
        await applied(billing, payments_provider)
        assert business(database, made.business_id)["subscription_status"] == "trialing"
        await refused(billing.checkouts.reopen(made.business_id), "conflict", "the subscription is already trialing")


async def test_the_checkouts_events_start_the_trial_and_resume_provisioning_once(billing, payments_provider,
                                                                               database):
    made = await signed_up(billing)
    assert (await payments_provider.check_out(made.checkout_url))[0] == 303
    events = payments_provider.new_events()
    assert [e["type"] for e in events][-1] == "checkout.session.completed"
    for event in events:
        await billing.payments.apply_event(event)
    row = business(database, made.business_id)
    assert (row["lifecycle_state"], row["subscription_status"]) == ("active", "trialing")
    assert row["subscription_id"].startswith("sub_") and row["customer_id"].startswith("cus_")
    due = saga(database, made.business_id)
    assert due["status"] == "pending"  # the billing worker runs it
    standing = [e["data"] for e in database.events if e["type"] == "workspace.standing_changed"]
    assert [(s["previous_standing"], s["standing"]) for s in standing] == [("unpaid", "trialing")]
    # Delivered again (a redelivery, or a second replica): applied once.
    for event in events:
        await billing.payments.apply_event(event)
    assert saga(database, made.business_id) == due and len(database.events) == len(standing)
    assert len(database.tables["accounts.payment_events"]) == len(events)


async def test_a_trial_that_ends_without_a_checkout_is_paused_by_the_sweep(billing, database, monkeypatch):
    made = await signed_up(billing)
    monkeypatch.setattr(payments_service, "utcnow", lambda: made.trial_ends_at - timedelta(seconds=1))
    assert await billing.payments.sweep() == 0
    monkeypatch.setattr(payments_service, "utcnow", lambda: made.trial_ends_at)
    assert await billing.payments.sweep() == 1
    row = business(database, made.business_id)
    assert (row["lifecycle_state"], row["paused_by_billing"]) == ("paused", True)
    [paused] = [e for e in database.events if e["type"] == "workspace.paused"]
    assert paused["data"]["reason"] == pay.TRIAL_ENDED_UNPAID


async def test_workspaces_are_added_to_the_subscription_up_to_the_plans_limit(billing, payments_provider,
                                                                             database):
    made, sub_id = await paid_signup(billing, payments_provider, database)
    account_id = business(database, made.business_id)["account_id"]
    with acting_as(Tenant(account_id=account_id)):
        branches = [await billing.workspaces.create_workspace(f"Branch {n}", {}, None) for n in range(STARTER - 1)]
        await refused(billing.workspaces.create_workspace("One too many", {}, None), "forbidden",
                      f"the starter plan allows {STARTER} workspaces")
    for branch in branches:  # no trial of its own: the account's, in its standing
        row = business(database, branch.workspace.id)
        assert (row["billed_on"], row["subscription_status"], row["lease_token"]) == (made.business_id, "trialing",
                                                                                     None)
        assert row["trial_ends_at"] == business(database, made.business_id)["trial_ends_at"]
    [item] = (await payments_provider.client.get_subscription(sub_id))["items"]["data"]
    assert item["quantity"] == STARTER


async def test_a_failed_payment_past_its_grace_pauses_every_workspace_and_the_owner_cannot_resume_them(
        billing, payments_provider, database, monkeypatch):
    made, sub_id = await paid_signup(billing, payments_provider, database)
    account_id = business(database, made.business_id)["account_id"]
    with acting_as(Tenant(account_id=account_id)):
        branch = (await billing.workspaces.create_workspace("Branch", {}, None)).workspace.id
    # The trial ends and its first charge is declined: past due, every workspace still running in its grace.
    await card_fails(payments_provider, sub_id, True)
    assert await payments_provider.advance(sub_id, until="payment") == ["trial_end", "payment"]
    assert "invoice.payment_failed" in await applied(billing, payments_provider)
    overdue = business(database, made.business_id)["past_due_since"]
    for business_id in (made.business_id, branch):
        row = business(database, business_id)
        assert (row["subscription_status"], row["past_due_since"], row["lifecycle_state"]) == (
            "past_due", overdue, "active")
    monkeypatch.setattr(payments_service, "utcnow", lambda: overdue + GRACE - timedelta(seconds=1))
    assert await billing.payments.sweep() == 0
    monkeypatch.setattr(payments_service, "utcnow", lambda: overdue + GRACE)
    assert await billing.payments.sweep() == 2
    assert all(business(database, b)["lifecycle_state"] == "paused" for b in (made.business_id, branch))
    assert {e["data"]["reason"] for e in database.events if e["type"] == "workspace.paused"} == {pay.PAYMENT_OVERDUE}

    # Billing's hold is not the owner's to lift: not by resuming, nor by pausing first to make the pause theirs.
    with acting_as(Tenant(account_id=account_id, business_ids=(made.business_id, branch))):
        for business_id in (made.business_id, branch):
            await refused(billing.workspaces.update_workspace(business_id, None, None, "resume"), "forbidden",
                          "billing paused this workspace")
        await billing.workspaces.update_workspace(branch, None, None, "pause")
        await refused(billing.workspaces.update_workspace(branch, None, None, "resume"), "forbidden",
                      "billing paused")

    # Paid (the next retry goes through with a working card): billing resumes every workspace.
    monkeypatch.undo()
    await card_fails(payments_provider, sub_id, False)
    assert (await payments_provider.control("POST", f"/subscriptions/{sub_id}/advance"))[0] == 200
    assert "invoice.paid" in await applied(billing, payments_provider)
    for business_id in (made.business_id, branch):
        row = business(database, business_id)
        assert (row["subscription_status"], row["lifecycle_state"], row["paused_by_billing"]) == (
            "active", "active", False)


async def test_signup_by_x402_asks_for_the_payment_and_a_settled_one_pays_once(billing, database):
    required = await x402_terms(billing)
    assert database.tables.get("accounts.users", {}) == {}  # nothing is made before the payment
    paid = payer.pay(payer.new_private_key(), required)
    made = await signed_up(billing, payment=paid)
    assert (made.payment_capture, made.payment_status, made.checkout_url) == ("x402", "settled", None)
    assert payer.payment_response(made.payment_response).success is True
    row = business(database, made.business_id)
    assert (row["lifecycle_state"], row["subscription_status"], row["payment_capture"]) == ("active", "active", "x402")
    assert row["paid_through"] == row["trial_ends_at"] + billing_contract.X402_PERIOD  # the trial and a month
    [payment] = database.tables["accounts.x402_payments"].values()
    assert (payment["business_id"], payment["purpose"], payment["status"]) == (made.business_id, "signup", "settled")
    provisioned = saga(database, made.business_id)  # at once, within the signup's answer
    assert (provisioned["status"], made.provisioning_deferred, made.phone_number, made.agent_id) == (
        "done", False, "+14155550123", provisioned["agent_id"])
    # The same payment again pays for nothing more: the account it would have made is undone.
    await refused(signed_up(billing, "second@acme-plumbing.com", payment=paid), "payment_required", pay.NONCE_USED)
    assert [len(database.tables[f"accounts.{t}"]) for t in ("users", "businesses", "api_keys", "x402_payments")] == [
        1, 1, 1, 1]


async def test_an_unanswered_settlement_leaves_the_account_unpaid_until_the_reconciler_settles_it(
        billing, facilitator, database):
    required = await x402_terms(billing)
    await facilitator.fail_next("/settle", 500)
    made = await signed_up(billing, payment=payer.pay(payer.new_private_key(), required))
    assert (made.payment_status, made.provisioning_deferred) == ("pending", True)
    assert business(database, made.business_id)["subscription_status"] == "incomplete"
    assert saga(database, made.business_id)["status"] == "waiting_payment"
    assert await billing.x402.reconcile() == 1  # asked again: the authorization pays once, now
    row = business(database, made.business_id)
    assert (row["subscription_status"], row["lifecycle_state"]) == ("active", "active")
    [payment] = database.tables["accounts.x402_payments"].values()
    assert (payment["status"], payment["attempts"], payment["transaction"].startswith("0x")) == ("settled", 1, True)
    assert saga(database, made.business_id)["status"] == "pending"
    [notice] = [e for e in database.events if e["type"] == "workspace.owner_notice"]
    assert "is confirmed" in notice["data"]["subject"]
    assert await billing.x402.reconcile() == 0
