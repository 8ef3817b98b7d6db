"""Subscription and payment rules as plain functions: how the payment provider's statuses read as ours, which
of two events is newer, and what billing does to a workspace's lifecycle.

A subscription is `incomplete` from signup until its card checkout completes, then follows the provider:
`trialing` (the 7-day trial, card on file), `active`, `past_due` (a payment failed; the provider retries) and
`canceled` (final). One paid by x402 is `active` at once and paid through the end of its trial plus one month.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from core import plans
from providers.x402 import (  # noqa: F401 - the x402 v2 transport headers, for the service and the gateway
    PAYMENT_REQUIRED_HEADER,
    PAYMENT_RESPONSE_HEADER,
    PAYMENT_SIGNATURE_HEADER,
)

# payment_capture values: the hosted card checkout (SPEC: "<checkout_provider>_checkout") and x402.
HOSTED_CHECKOUT = "stripe_checkout"
X402 = "x402"

INCOMPLETE, TRIALING, ACTIVE, PAST_DUE, CANCELED = "incomplete", "trialing", "active", "past_due", "canceled"
SUBSCRIPTION_STATUSES = (INCOMPLETE, TRIALING, ACTIVE, PAST_DUE, CANCELED)
# The provider's subscription statuses as ours (Stripe: unpaid is past due with retries exhausted, paused is a
# trial that ended without a payment method, incomplete_expired a first payment never made).
PROVIDER_STATUSES = {"incomplete": INCOMPLETE, "trialing": TRIALING, "active": ACTIVE, "past_due": PAST_DUE,
                     "unpaid": PAST_DUE, "paused": PAST_DUE, "canceled": CANCELED,
                     "incomplete_expired": CANCELED}

# A month paid by x402 (the protocol pays once; there is no renewal to follow).
X402_PERIOD = timedelta(days=30)
# USDC has 6 decimals: one cent is 10**4 atomic units.
ATOMIC_UNITS_PER_CENT = 10**4

# Why billing moved a workspace (the reason of workspace.paused and workspace.canceled).
PAYMENT_OVERDUE = "payment_overdue"
TRIAL_ENDED_UNPAID = "trial_ended_unpaid"
SUBSCRIPTION_CANCELED = "subscription_canceled"


def our_status(provider_status: str) -> str | None:
    """Our subscription status for the provider's, or None for one we do not know (left as it is)."""
    return PROVIDER_STATUSES.get(provider_status)


def x402_amount(plan: str) -> str:
    """What an x402 signup pays for a plan: its monthly price, in atomic units of USDC."""
    return str(plans.MONTHLY_PRICE_CENTS[plan] * ATOMIC_UNITS_PER_CENT)


def price_of(plan: str, prices: dict[str, str]) -> str | None:
    """The checkout price id offered for a plan (`prices` maps price id to plan), or None."""
    return next((price for price, offered in prices.items() if offered == plan), None)


def owner_notice(kind: str, obj: dict, business_name: str, dashboard_url: str) -> tuple[str, str] | None:
    """The owner's e-mail (subject, body) a provider event calls for, or None: a trial ending soon, or a payment
    waiting for the customer to authenticate it (at the invoice's hosted page)."""
    if kind == "customer.subscription.trial_will_end" and isinstance(obj.get("trial_end"), int):
        return trial_ending_notice(business_name, datetime.fromtimestamp(obj["trial_end"], timezone.utc),
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


def plan_of_subscription(subscription: dict, prices: dict[str, str]) -> str | None:
    """The plan a subscription's first item's price stands for (CHECKOUT_PRICES), or None for a price we do not
    offer."""
    items = (subscription.get("items") or {}).get("data") or []
    price = ((items[0] if items else {}).get("price") or {}).get("id")
    return prices.get(price) if isinstance(price, str) else None


def checkout_refusal(lifecycle_state: str, status: str) -> str | None:
    """Why a business may not open a new checkout now (None: it may). A signup whose checkout never completed may
    reopen one (its link expires after 24 hours), and a canceled subscription may be replaced (resubscribe); a
    subscription in force has nothing to pay there."""
    if lifecycle_state == "inactive":
        return "the workspace was torn down and cannot subscribe again; create a new workspace"
    if status in (INCOMPLETE, CANCELED):
        return None
    if status == PAST_DUE:
        return ("the subscription is past_due: the payment provider retries the card on file; pay the open invoice "
                "(its link was e-mailed) or update the card, rather than starting another subscription")
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


def business_of_event(event_object: dict) -> str | None:
    """The business an event's object is about, from what we put on the checkout session and subscription
    (metadata.business_id, client_reference_id), or an invoice's subscription details."""
    for meta in (event_object.get("metadata"),
                 (event_object.get("subscription_details") or {}).get("metadata"),
                 ((event_object.get("parent") or {}).get("subscription_details") or {}).get("metadata")):
        if isinstance(meta, dict) and meta.get("business_id"):
            return str(meta["business_id"])
    ref = event_object.get("client_reference_id")
    return str(ref) if ref else None
