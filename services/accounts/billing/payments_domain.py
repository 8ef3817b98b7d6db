"""Subscription and payment rules as plain functions: how the payment provider's statuses read as ours, which
of two events is newer, and what billing does to a workspace's lifecycle.

A subscription is `incomplete` from signup until its card checkout completes, then follows the provider:
`trialing` (the 7-day trial, card on file), `active`, `past_due` (a payment failed; the provider retries) and
`canceled` (final). One paid by x402 is `active` at once and paid through the end of its trial plus one month.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from contracts.billing import (
    ACTIVE,
    CANCELED,
    INCOMPLETE,
    PAST_DUE,
    TRIALING,
    X402,
    X402_FAILED,
    X402_PERIOD,
    X402_SETTLED,
    X402_UNRESOLVED,
)
from core import plans
from providers.x402 import USDC_DECIMALS
from services.accounts.records import Business

# The provider's subscription statuses as ours (Stripe: unpaid is past due with retries exhausted, paused is a
# trial that ended without a payment method, incomplete_expired a first payment never made).
PROVIDER_STATUSES = {"incomplete": INCOMPLETE, "trialing": TRIALING, "active": ACTIVE, "past_due": PAST_DUE,
                     "unpaid": PAST_DUE, "paused": PAST_DUE, "canceled": CANCELED,
                     "incomplete_expired": CANCELED}

# What an x402 payment pays for (where it stands: contracts.billing; an unresolved one is checked on the chain by an
# operator: services.accounts.billing.x402_billing).
X402_SIGNUP, X402_RENEWAL, X402_WORKSPACE = "signup", "renewal", "workspace"
# The facilitator's reasons that tell a pending payment's fate when it is settled again: the authorization was
# used (by our earlier settlement: it pays only us, exactly the amount), or it expired (used or not: the
# facilitator checks the expiry first and cannot tell).
NONCE_USED = "invalid_exact_evm_nonce_already_used"
AUTHORIZATION_EXPIRED = "invalid_exact_evm_payload_authorization_valid_before"
# USDC has 6 decimals: one cent is 10**4 atomic units.
ATOMIC_UNITS_PER_CENT = 10**4

# Why billing moved a workspace (the reason of workspace.paused and workspace.canceled).
PAYMENT_OVERDUE = "payment_overdue"
TRIAL_ENDED_UNPAID = "trial_ended_unpaid"
SUBSCRIPTION_CANCELED = "subscription_canceled"

# What a workspace billed on another business's subscription copies from it, so its standing and billing's moves
# (billing_move) follow its payer's.
PAYER_COLUMNS = ("plan_id", "subscription_status", "subscription_event_at", "past_due_since", "paid_through",
                 "trial_ends_at")


def our_status(provider_status: str) -> str | None:
    """Our subscription status for the provider's, or None for one we do not know (left as it is)."""
    return PROVIDER_STATUSES.get(provider_status)


def x402_amount(plan: str) -> str:
    """What an x402 signup pays for a plan: its monthly price, in atomic units of USDC."""
    return str(plans.MONTHLY_PRICE_CENTS[plan] * ATOMIC_UNITS_PER_CENT)


def price_of(plan: str, prices: dict[str, str]) -> str | None:
    """The checkout price id offered for a plan (`prices` maps price id to plan), or None."""
    return next((price for price, offered in prices.items() if offered == plan), None)


def owner_notice(kind: str, obj: dict[str, Any], business_name: str, dashboard_url: str) -> tuple[str, str] | None:
    """The owner's e-mail (subject, body) a provider event calls for, or None: a trial ending soon, or a payment
    waiting for the customer to authenticate it (at the invoice's hosted page)."""
    if kind == "customer.subscription.trial_will_end" and isinstance(obj.get("trial_end"), int):
        return trial_ending_notice(business_name, datetime.fromtimestamp(obj["trial_end"], UTC),
                                   dashboard_url)
    if kind == "invoice.payment_action_required" and isinstance(obj.get("hosted_invoice_url"), str):
        return (f"Your Switchboard payment for {business_name} needs your confirmation",
                f"Your bank asks you to confirm the payment for {business_name}'s subscription. Until it is "
                f"confirmed the payment is overdue, and after the grace period the workspace is paused. Confirm it "
                f"here: {obj['hosted_invoice_url']}\n")
    return None


def trial_ending_notice(business_name: str, trial_end: datetime, dashboard_url: str) -> tuple[str, str]:
    """The owner's e-mail (subject, body) when the provider says a trial ends soon."""
    day = f"{trial_end:%A %d %B %Y} ({trial_end:%H:%M} UTC)"
    return (f"Your Switchboard trial for {business_name} ends on {trial_end:%d %B}",
            f"The free trial of {business_name} ends on {day}. The card you gave at the checkout is charged then and "
            f"the subscription goes on; nothing to do if that suits you. To change your plan or card, or to cancel "
            f"before the trial ends, open your dashboard: {dashboard_url}\n")


def x402_period_start(paid_through: datetime | None, trial_ends_at: datetime | None, now: datetime) -> datetime:
    """Where the period an x402 payment buys starts: the end of what is paid or of the trial (a signup pays its
    trial and the month after it), or now when that has passed."""
    return max(d for d in (paid_through, trial_ends_at, now) if d is not None)


def x402_grant(paid_through: datetime | None, trial_ends_at: datetime | None, now: datetime) -> dict[str, Any]:
    """The business columns a settled x402 payment sets: active and paid one period on from x402_period_start, paying
    for itself (a workspace once billed on its account's subscription no longer follows it)."""
    start = x402_period_start(paid_through, trial_ends_at, now)
    return {"subscription_status": ACTIVE, "subscription_event_at": now, "paid_through": start + X402_PERIOD,
            "past_due_since": None, "payment_capture": X402, "billed_on": None}


def x402_renewal_refusal(lifecycle_state: str, status: str, payment_capture: str | None,
                         paid_through: datetime | None, now: datetime, pending: bool) -> str | None:
    """Why a business may not pay its next period by x402 now (None: it may): a torn-down workspace, a card
    subscription in force (billed by the card provider), an earlier payment still being confirmed, or a period
    paid more than one period ahead."""
    if lifecycle_state == "inactive":
        return "the workspace was torn down and cannot be paid for again; create a new workspace"
    if payment_capture != X402 and status in (TRIALING, ACTIVE, PAST_DUE):
        return (f"the subscription is {status} and billed to the card on file: the card provider charges each "
                "period, there is nothing to pay by x402")
    if pending:
        return ("an earlier x402 payment of this workspace is still being confirmed with the facilitator; its "
                "outcome is e-mailed to the owner and shown by GET /api/v1/workspaces, pay again only if it fails")
    if paid_through is not None and paid_through - now > X402_PERIOD:
        return (f"the workspace is paid through {paid_through:%Y-%m-%d %H:%M} UTC; the next period can be paid "
                f"from {paid_through - X402_PERIOD:%Y-%m-%d %H:%M} UTC")
    return None


def x402_fate(reason: str) -> str:
    """What the facilitator's refusal to settle a pending payment again says about it (x402_billing)."""
    if reason == NONCE_USED:
        return X402_SETTLED
    if reason == AUTHORIZATION_EXPIRED:
        return X402_UNRESOLVED
    return X402_FAILED


def x402_notice(fate: str, business_name: str, amount_usdc: str, reason: str, until: datetime | None,
                dashboard_url: str) -> tuple[str, str]:
    """The owner's e-mail (subject, body) once a payment whose first answer was lost is known."""
    again = ("pay again with x402 (POST /api/v1/subscription/x402) or by card (POST /api/v1/subscription/checkout)")
    if fate == X402_SETTLED:
        return (f"Your Switchboard payment for {business_name} is confirmed",
                f"Your x402 payment of {amount_usdc} USDC for {business_name} went through; the workspace is paid "
                f"through {until:%d %B %Y} and anything waiting for it (the intake agent and phone number of a new "
                f"signup) is being set up now. Your dashboard: {dashboard_url}\n")
    if fate == X402_FAILED:
        return (f"Your Switchboard payment for {business_name} did not go through",
                f"The x402 payment of {amount_usdc} USDC for {business_name} was refused ({reason}); nothing was "
                f"taken and nothing new was started. To go on, {again}. Your dashboard: {dashboard_url}\n")
    return (f"We could not confirm your Switchboard payment for {business_name}",
            f"The payment facilitator did not tell us in time whether your x402 payment of {amount_usdc} USDC for "
            f"{business_name} went through, and its authorization has now expired. Nothing was started on it. We "
            f"are checking the payment network and will honour the payment if it was taken; please do not pay "
            f"twice until you hear from us. Your dashboard: {dashboard_url}\n")


def renewal_reminder(business_name: str, plan: str, paid_through: datetime, grace: timedelta,
                     base_url: str) -> tuple[str, str]:
    """The owner's e-mail (subject, body) before an x402 period ends (the protocol has no automatic renewal)."""
    amount = usdc(x402_amount(plan))
    return (f"Your Switchboard period for {business_name} ends on {paid_through:%d %B}",
            f"{business_name} is paid through {paid_through:%A %d %B %Y} ({paid_through:%H:%M} UTC). x402 payments "
            f"do not renew by themselves: pay the next {X402_PERIOD.days} days ({amount} USDC) with POST "
            f"{base_url}/api/v1/subscription/x402 (it answers 402 with the terms; send the signed payment in the "
            f"PAYMENT-SIGNATURE header), or switch to a card at POST {base_url}/api/v1/subscription/checkout. "
            f"Unpaid, the workspace is paused {grace.total_seconds() / 3600:g} hours after the period ends, and "
            f"resumes as soon as it is paid.\n")


def usdc(atomic_units: str) -> str:
    """An amount in USDC from atomic units (6 decimals)."""
    return f"{int(atomic_units) / 10**USDC_DECIMALS:.2f}"


def plan_of_subscription(subscription: dict[str, Any], prices: dict[str, str]) -> str | None:
    """The plan a subscription's first item's price stands for (CHECKOUT_PRICES), or None for a price we do not
    offer."""
    items = (subscription.get("items") or {}).get("data") or []
    price = ((items[0] if items else {}).get("price") or {}).get("id")
    return prices.get(price) if isinstance(price, str) else None


def checkout_refusal(lifecycle_state: str, status: str) -> str | None:
    """Why a business may not open a new checkout now (None: it may). A signup whose checkout never completed may
    reopen one (its link expires after 24 hours), a canceled subscription may be replaced (resubscribe), and a
    past-due one gets its open invoice's page (services.accounts.billing.checkouts); a subscription in force and paid has
    nothing to pay there."""
    if lifecycle_state == "inactive":
        return "the workspace was torn down and cannot subscribe again; create a new workspace"
    if status in (INCOMPLETE, CANCELED, PAST_DUE):
        return None
    return f"the subscription is already {status}: there is nothing to pay at a checkout"


def starts_a_subscription(checkout_status: str, its_subscription: str | None, current: str | None) -> bool:
    """Whether a business's earlier checkout was paid and started a subscription we do not know yet (its events are
    on their way), rather than the one already recorded (a canceled subscription's own signup checkout)."""
    return checkout_status == "complete" and its_subscription != current


def checkout_trial_days(status: str, trial_days: int) -> int:
    """A reopened signup checkout keeps the full trial (it starts once the card is on file); a resubscription has
    none."""
    return trial_days if status == INCOMPLETE else 0


def applies(event_at: datetime, stored_at: datetime | None, current: str) -> bool:
    """Whether a subscription event written at `event_at` may set the status: not when a newer event already
    did, and never after `canceled` (a canceled subscription stays canceled; a new one is a new signup)."""
    if current == CANCELED:
        return False
    return stored_at is None or event_at >= stored_at


@dataclass(frozen=True)
class Billing:
    """What billing knows of a workspace."""

    lifecycle_state: str
    subscription_status: str
    paused_by_billing: bool
    past_due_since: datetime | None
    trial_ends_at: datetime | None
    paid_through: datetime | None

    @classmethod
    def of(cls, business: Business) -> Billing:
        """The billing columns of a business row."""
        return cls(business.lifecycle_state, business.subscription_status, business.paused_by_billing,
                   business.past_due_since, business.trial_ends_at, business.paid_through)


def billing_move(b: Billing, now: datetime, grace: timedelta) -> tuple[str, str | None] | None:
    """The lifecycle action billing takes on a workspace now, with its reason, or None.

    - canceled subscription: the workspace is canceled (its data kept; a torn-down one stays so);
    - payment overdue past the grace period, or a trial ended without a completed checkout, or an x402 period
      that ran out: paused (and resumed once paid);
    - paid again (trialing or active, nothing overdue) after billing paused it: resumed.
    """
    state, status = b.lifecycle_state, b.subscription_status
    if status == CANCELED:
        return ("cancel", SUBSCRIPTION_CANCELED) if state in ("active", "paused") else None
    if state == "active":
        if status == PAST_DUE and b.past_due_since is not None and now >= b.past_due_since + grace:
            return "pause", PAYMENT_OVERDUE
        if status == INCOMPLETE and b.trial_ends_at is not None and now >= b.trial_ends_at:
            return "pause", TRIAL_ENDED_UNPAID
        if b.paid_through is not None and now >= b.paid_through + grace:
            return "pause", PAYMENT_OVERDUE
        return None
    if state == "paused" and b.paused_by_billing and status in (TRIALING, ACTIVE) and b.past_due_since is None \
            and (b.paid_through is None or now < b.paid_through):
        return "resume", None
    return None


def owner_resume_refusal(b: Billing, now: datetime, grace: timedelta) -> str | None:
    """Why the owner may not resume a workspace (None: they may): billing paused it and it is still unpaid. Only a
    pause the owner made is the owner's to undo; a billing hold clears through billing (paid, it resumes by
    itself), whatever the owner did since (pausing or canceling it again does not make the pause theirs)."""
    if not b.paused_by_billing:
        return None
    if billing_move(replace(b, lifecycle_state="paused"), now, grace) == ("resume", None):
        return None  # paid again: billing resumes it (or would, had the owner not canceled it since)
    return ("billing paused this workspace for an unpaid subscription: it resumes by itself once paid; pay the open "
            "invoice (POST /api/v1/subscription/checkout gives its page) or, paid by x402, the next period (POST "
            "/api/v1/subscription/x402)")


def business_of_event(event_object: dict[str, Any]) -> str | None:
    """The business an event's object is about, from what we put on the checkout session and subscription
    (metadata.business_id, client_reference_id), or an invoice's subscription details."""
    for meta in (event_object.get("metadata"),
                 (event_object.get("subscription_details") or {}).get("metadata"),
                 ((event_object.get("parent") or {}).get("subscription_details") or {}).get("metadata")):
        if isinstance(meta, dict) and meta.get("business_id"):
            return str(meta["business_id"])
    ref = event_object.get("client_reference_id")
    return str(ref) if ref else None
