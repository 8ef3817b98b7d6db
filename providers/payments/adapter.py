"""What the platform needs from a payments provider, independent of the client behind it.

Payloads are Stripe's own objects as plain dicts (Checkout Session, Subscription, Invoice, Balance), in the shape
of the API version the `stripe` package pins: since 2025-03-31.basil a Subscription's billing period lives on its
items (`items.data[].current_period_start/end`) and an Invoice names its subscription under
`parent.subscription_details.subscription`; `subscription_period` and `invoice_subscription_id` read them (and the
older top-level fields, should an account still send those). The adapter is a transport: the accounts service
decides what a subscription's status means for a business.

Every failure is a `PaymentsError` whose message is safe to show an API user (never the secret key, never a 5xx
body), with Stripe's HTTP status and its error `code`, so a caller can tell a refused request (400,
`resource_missing`) from bad credentials (401) from an outage (None, 429 or 5xx): see `providers.status`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class PaymentsError(Exception):
    """The payments provider failed or refused a request.

    `status`: Stripe's HTTP status (None when it could not be reached or timed out);
    `code`: Stripe's error code (e.g. `resource_missing`, `parameter_missing`) when it gave one.
    """

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    def __repr__(self) -> str:
        return f"PaymentsError({self.message!r}, status={self.status!r}, code={self.code!r})"


@dataclass(frozen=True)
class Checkout:
    """A hosted checkout page to send the customer to: the Checkout Session's id, its `url` and when it
    expires (`expires_at`, Unix seconds)."""

    id: str
    url: str
    expires_at: int


class PaymentsProvider(Protocol):
    async def create_checkout(self, *, business_id: str, email: str, price_id: str, trial_days: int,
                              success_url: str, cancel_url: str, idempotency_key: str,
                              customer_id: str | None = None) -> Checkout:
        """A Checkout Session in subscription mode for one unit of `price_id`, with a `trial_days` free trial
        (0: none) and the card captured up front; `business_id` travels as `client_reference_id` and in the
        session's and the subscription's metadata; `customer_id`: the customer it is for (else a new one with
        `email`). The same `idempotency_key` gives the same session back."""

    async def expire_checkout(self, session_id: str) -> tuple[str, str | None]:
        """Expire a Checkout Session if it is open, so it can no longer be paid; its status after (expired, or
        complete when it had been paid) and the subscription it started, if any."""

    async def get_subscription(self, subscription_id: str) -> dict[str, Any]:
        """The Subscription object as it is now."""

    async def set_quantity(self, subscription_id: str, quantity: int, idempotency_key: str) -> dict[str, Any]:
        """Set the quantity of the subscription's item (one unit per workspace it pays for), prorated onto the next
        invoice; the Subscription object after. The same `idempotency_key` gives the same answer; a quantity it has
        already is left as it is."""

    async def cancel_subscription(self, subscription_id: str) -> dict[str, Any]:
        """Cancel at once (no further charge); the Subscription object, status `canceled`."""

    async def open_invoice(self, subscription_id: str) -> dict[str, Any] | None:
        """The subscription's latest Invoice while it is open (a payment that failed and is being retried: its
        `hosted_invoice_url` lets the customer pay it with another card), else None."""

    async def check(self) -> dict[str, Any]:
        """The account's Balance object; raises `PaymentsError` when the provider is unreachable or refuses us
        (health checks)."""

    async def close(self) -> None: ...


def invoice_subscription_id(invoice: Mapping[str, Any]) -> str | None:
    """The id of the subscription that generated an Invoice (`parent.subscription_details.subscription`; the
    top-level `subscription` of API versions before 2025-03-31), None for an invoice of no subscription."""
    parent = invoice.get("parent") or {}
    details = parent.get("subscription_details") or {}
    found = details.get("subscription") or invoice.get("subscription")
    if isinstance(found, Mapping):  # expanded
        found = found.get("id")
    return found if isinstance(found, str) else None


def subscription_period(subscription: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The current billing period of a Subscription, `(start, end)` in Unix seconds: the span of its items'
    periods (`items.data[].current_period_*`), or the top-level fields of older API versions."""
    items = ((subscription.get("items") or {}).get("data")) or []
    starts = [i["current_period_start"] for i in items if isinstance(i.get("current_period_start"), int)]
    ends = [i["current_period_end"] for i in items if isinstance(i.get("current_period_end"), int)]
    if starts and ends:
        return min(starts), max(ends)
    return subscription.get("current_period_start"), subscription.get("current_period_end")
