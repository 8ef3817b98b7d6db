"""Billing: how a subscription is paid and where it stands."""
from __future__ import annotations

from datetime import timedelta

# payment_capture values: the hosted card checkout (SPEC: "<checkout_provider>_checkout") and x402.
HOSTED_CHECKOUT = "stripe_checkout"
X402 = "x402"

INCOMPLETE, TRIALING, ACTIVE, PAST_DUE, CANCELED = "incomplete", "trialing", "active", "past_due", "canceled"
SUBSCRIPTION_STATUSES = (INCOMPLETE, TRIALING, ACTIVE, PAST_DUE, CANCELED)

# A period paid by x402: a signup pays its trial and the month after it; a renewal pays the next month
# (POST /api/v1/subscription/x402), at most one period ahead.
X402_PERIOD = timedelta(days=30)
# The owner is e-mailed this long before a paid period ends.
X402_REMIND_BEFORE = timedelta(days=3)
# Where an x402 payment stands: recorded pending before it is settled; settled or failed once the facilitator
# answers; unresolved when its authorization expired before the facilitator could say whether it was taken.
X402_PENDING, X402_SETTLED, X402_FAILED, X402_UNRESOLVED = "pending", "settled", "failed", "unresolved"
