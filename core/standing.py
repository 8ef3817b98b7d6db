"""A business's standing: whether it may spend (place calls, send texts and email, take pool numbers, run
outreach), from its workspace's lifecycle state and its subscription.

Reads and configuration are always allowed, so an owner can see their data and fix their setup in any state.
What costs the platform money needs an active workspace whose subscription is in its trial or paid (a payment
that failed keeps it in good standing while the provider retries; billing pauses the workspace once the grace
period has passed). The accounts service computes the standing and the caller's principal carries it
(core.tenant); the services that spend refuse with `forbidden` and say what to do.
"""
from __future__ import annotations

from core.errors import ServiceError

# Good standing: the subscription's status, for an active workspace.
TRIALING, ACTIVE, PAST_DUE = "trialing", "active", "past_due"
GOOD = (TRIALING, ACTIVE, PAST_DUE)
# Held: the workspace is paused, canceled or torn down (inactive), or its signup was never paid for.
PAUSED, CANCELED, INACTIVE, UNPAID = "paused", "canceled", "inactive", "unpaid"
HELD = (PAUSED, CANCELED, INACTIVE, UNPAID)
# Nobody could tell (the accounts service unreachable, or no such workspace: core.standings): held, not good.
UNKNOWN = "unknown"

WHAT_TO_DO = {
    PAUSED: "the workspace is paused: resume it (PATCH /api/v1/workspaces with action resume), or, when billing "
            "paused it, pay the overdue invoice and it resumes by itself",
    CANCELED: "the workspace is canceled: resume it (PATCH /api/v1/workspaces with action resume), or when its "
              "subscription was canceled, subscribe again at a new checkout (POST /api/v1/subscription/checkout)",
    INACTIVE: "the workspace was torn down and cannot be used again; create a new workspace",
    UNPAID: "the signup's payment is not complete: finish the card checkout (the checkout_url of the signup, or "
            "a new one from POST /api/v1/subscription/checkout) to start the trial, or, paid by x402, wait for the "
            "payment to be confirmed (the owner is e-mailed) or pay with POST /api/v1/subscription/x402",
    UNKNOWN: "the workspace's standing could not be confirmed (the accounts service did not answer, or there is no "
             "such workspace); try again in a moment",
}


def standing(lifecycle_state: str, subscription_status: str) -> str:
    """The standing of a business: its subscription status when in good standing, else why it is held."""
    if lifecycle_state in (PAUSED, CANCELED, INACTIVE):
        return lifecycle_state
    if subscription_status in GOOD:
        return subscription_status
    return CANCELED if subscription_status == CANCELED else UNPAID


def is_good(value: str) -> bool:
    """Whether a standing allows spending: only good standing does; an unknown one ("" or UNKNOWN) is held."""
    return value in GOOD


def refusal(value: str, action: str) -> ServiceError:
    """The 403 for `action` (e.g. "placing calls") by a business held in `value` (or whose standing is unknown)."""
    return ServiceError("forbidden", f"{action} is not allowed while {WHAT_TO_DO.get(value, WHAT_TO_DO[UNKNOWN])}")
