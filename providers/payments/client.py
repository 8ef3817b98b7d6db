"""The real payments client: Stripe's v1 REST API through the official `stripe` package (`StripeClient` and its
`*_async` methods over its aiohttp transport, `stripe.AIOHTTPClient`), pointed at `base_url`: https://api.stripe.com
or the local simulator.

Retries are the package's own: with `max_network_retries` > 0 it repeats a request after a connection error,
a 409 (another request with the same idempotency key still running), a 5xx, or whenever Stripe answers
`Stripe-Should-Retry: true` (a 429 `lock_timeout`; a 429 `rate_limit` is not repeated), with exponential backoff
(0.5 s, then doubling, jittered, at most 5 s). That is safe for the POST too: the package sends one
`Idempotency-Key` for all attempts (ours, from `create_checkout`), and Stripe answers a repeat with the first
result (kept 24 hours, a 500 included) instead of acting twice. `timeout` bounds each attempt.

Every failure is a `PaymentsError` whose message is safe to show an API user: for a 4xx, Stripe's own
`message` (it explains the refusal: "No such price: 'price_123'") with anything shaped like a secret key
masked; for 401/403 "payments provider rejected our credentials"; otherwise the route (`GET
/v1/subscriptions/{id}`, not the id), the status and what happened. Never the secret key, never a 5xx body.
"""
from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

import aiohttp
import stripe

from core import metrics, telemetry
from core.uow import forbid_provider_call
from providers.payments.adapter import Checkout, PaymentsError, invoice_subscription_id

if TYPE_CHECKING:
    from stripe.params import SubscriptionUpdateParams
    from stripe.params.checkout import SessionCreateParams

log = logging.getLogger(__name__)

MESSAGE_MAX = 300
SECRET_SHAPE = re.compile(r"\b(sk|rk|whsec)_[A-Za-z0-9_]+")


def checkout_params(*, business_id: str, email: str, price_id: str, trial_days: int, success_url: str,
                    cancel_url: str, customer_id: str | None = None) -> dict[str, Any]:
    """`POST /v1/checkout/sessions`'s parameters for a business's subscription (providers/fidelity compares their
    names with Stripe's)."""
    subscription_data: dict[str, Any] = {"metadata": {"business_id": business_id}}
    if trial_days:
        subscription_data["trial_period_days"] = trial_days
    return {
        "mode": "subscription",
        "line_items": [{"price": price_id, "quantity": 1}],
        **({"customer": customer_id} if customer_id else {"customer_email": email}),
        "client_reference_id": business_id,
        "metadata": {"business_id": business_id},
        "subscription_data": subscription_data,
        "payment_method_collection": "always",  # the card is taken during the trial
        "success_url": success_url,
        "cancel_url": cancel_url,
    }


def quantity_params(item_id: str, quantity: int) -> dict[str, Any]:
    """`POST /v1/subscriptions/{id}`'s parameters that set one item's quantity, prorated: the change's share of the
    period is on the next invoice (Stripe's `create_prorations`; nothing during a trial)."""
    return {"items": [{"id": item_id, "quantity": quantity}], "proration_behavior": "create_prorations"}


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, asyncio.TimeoutError):
        return "timed out"
    if isinstance(cause, aiohttp.ClientConnectorError):
        return "could not connect"
    if isinstance(cause, aiohttp.ClientSSLError):
        return "TLS failure"
    return "connection lost"


class StripePayments:
    """`PaymentsProvider` over Stripe. One `aiohttp.ClientSession`, opened on first use and closed by `close()`
    (a later call opens a new one)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0, max_network_retries: int = 2):
        # An unset key is not refused here (the service still starts and reports the provider as refusing
        # us): Stripe answers it with 401 like any wrong one.
        if max_network_retries < 0:
            raise ValueError("max_network_retries must not be negative")
        self._api_key = api_key or "sk_unset"
        self.base_url = (base_url or stripe.DEFAULT_API_BASE).rstrip("/")
        self.timeout = timeout
        self.max_network_retries = max_network_retries
        self._session: aiohttp.ClientSession | None = None
        self._client: stripe.StripeClient | None = None

    def __repr__(self) -> str:  # never the key
        return f"StripePayments({self.base_url!r})"

    def _stripe(self) -> stripe.StripeClient:
        """The package's client over our session, made on first use (inside the event loop); called for each
        request, none of which may be sent while a unit of work is open (core.uow)."""
        forbid_provider_call("the payments provider")
        if self._client is None or self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(trace_configs=[*metrics.provider_traces("payments"),
                                                                 *telemetry.http_client_traces()])
            http = stripe.AIOHTTPClient(session=self._session, timeout=aiohttp.ClientTimeout(total=self.timeout))
            self._client = stripe.StripeClient(
                self._api_key, base_addresses={"api": self.base_url},
                max_network_retries=self.max_network_retries, http_client=http)
        return self._client

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = self._client = None

    # -- the API -------------------------------------------------------------------------------------------

    async def create_checkout(self, *, business_id: str, email: str, price_id: str, trial_days: int,
                              success_url: str, cancel_url: str, idempotency_key: str,
                              customer_id: str | None = None) -> Checkout:
        if not idempotency_key:
            raise ValueError("a checkout needs an idempotency key")
        if trial_days < 0:
            raise ValueError("trial_days must not be negative")
        params = checkout_params(business_id=business_id, email=email, price_id=price_id, trial_days=trial_days,
                                 success_url=success_url, cancel_url=cancel_url, customer_id=customer_id)
        session = await self._call("POST /v1/checkout/sessions", self._stripe().v1.checkout.sessions.create_async(
            params=cast("SessionCreateParams", params), options={"idempotency_key": idempotency_key}))
        if not (isinstance(session.get("id"), str) and isinstance(session.get("url"), str)
                and isinstance(session.get("expires_at"), int)):
            raise PaymentsError("payments provider sent an unreadable response (POST /v1/checkout/sessions)", 200)
        return Checkout(id=session["id"], url=session["url"], expires_at=session["expires_at"])

    async def expire_checkout(self, session_id: str) -> tuple[str, str | None]:
        _check_id(session_id)
        session = await self._call("GET /v1/checkout/sessions/{id}",
                                   self._stripe().v1.checkout.sessions.retrieve_async(session_id))
        if session.get("status") == "open":
            session = await self._call("POST /v1/checkout/sessions/{id}/expire",
                                       self._stripe().v1.checkout.sessions.expire_async(session_id))
        return str(session.get("status")), invoice_subscription_id(session)

    async def get_subscription(self, subscription_id: str) -> dict[str, Any]:
        _check_id(subscription_id)
        return await self._call("GET /v1/subscriptions/{id}",
                                self._stripe().v1.subscriptions.retrieve_async(subscription_id))

    async def set_quantity(self, subscription_id: str, quantity: int, idempotency_key: str) -> dict[str, Any]:
        _check_id(subscription_id)
        if quantity < 1 or not idempotency_key:
            raise ValueError("a quantity of at least 1 and an idempotency key are needed")
        items = ((await self.get_subscription(subscription_id)).get("items") or {}).get("data") or []
        if not items:
            raise PaymentsError("the subscription has no item to set the quantity of", 400, "resource_missing")
        if items[0].get("quantity") == quantity:  # already so (an earlier attempt's answer was lost)
            return await self.get_subscription(subscription_id)
        return await self._call("POST /v1/subscriptions/{id}", self._stripe().v1.subscriptions.update_async(
            subscription_id, params=cast("SubscriptionUpdateParams", quantity_params(items[0]["id"], quantity)),
            options={"idempotency_key": idempotency_key}))

    async def cancel_subscription(self, subscription_id: str) -> dict[str, Any]:
        _check_id(subscription_id)
        return await self._call("DELETE /v1/subscriptions/{id}",
                                self._stripe().v1.subscriptions.cancel_async(subscription_id))

    async def open_invoice(self, subscription_id: str) -> dict[str, Any] | None:
        latest = (await self.get_subscription(subscription_id)).get("latest_invoice")
        invoice_id = latest.get("id") if isinstance(latest, dict) else latest
        if not invoice_id:
            return None
        _check_id(invoice_id)
        invoice = await self._call("GET /v1/invoices/{id}", self._stripe().v1.invoices.retrieve_async(invoice_id))
        return invoice if invoice.get("status") == "open" else None

    async def check(self) -> dict[str, Any]:
        return await self._call("GET /v1/balance", self._stripe().v1.balance.retrieve_async())

    # -- errors --------------------------------------------------------------------------------------------

    async def _call(self, where: str, call: Awaitable[Any]) -> dict[str, Any]:
        try:
            result = await call
        except stripe.StripeError as exc:
            raise self._error(where, exc) from None
        return result.to_dict() if isinstance(result, stripe.StripeObject) else dict(result)

    def _error(self, where: str, exc: stripe.StripeError) -> PaymentsError:
        status, code = exc.http_status, _code_of(exc)
        if isinstance(exc, stripe.APIConnectionError) or status is None:
            reason = _reason(exc)
            log.warning("payments provider %s failed: %s", where, reason)
            return PaymentsError(f"payments provider unreachable ({where}): {reason}")
        if status in (401, 403):
            log.error("payments provider rejected our credentials on %s (%d)", where, status)
            return PaymentsError("payments provider rejected our credentials", status, code)
        if status >= 500 or status == 429:  # no body: it may carry anything
            log.warning("payments provider %s failed (%d)", where, status)
            return PaymentsError(f"payments provider failed ({where}: {status})", status, code)
        if status < 300:  # a 2xx whose body was not a Stripe object
            return PaymentsError(f"payments provider sent an unreadable response ({where})", status)
        message = exc.user_message
        if not isinstance(message, str) or not message.strip():
            return PaymentsError(f"payments provider refused {where} ({status})", status, code)
        return PaymentsError(self._safe(message)[:MESSAGE_MAX], status, code)

    def _safe(self, text: str) -> str:
        return SECRET_SHAPE.sub(lambda m: f"{m.group(1)}_[redacted]", text.replace(self._api_key, "[redacted]"))


def _code_of(exc: stripe.StripeError) -> str | None:
    """Stripe's error code; the package drops it from some errors (429, 401), so it is read from the body too."""
    if isinstance(exc.code, str):
        return exc.code
    body = exc.json_body if isinstance(exc.json_body, dict) else {}
    code = body.get("error", {}).get("code") if isinstance(body.get("error"), dict) else None
    return code if isinstance(code, str) else None


def _check_id(value: str) -> None:
    # An empty id would name the list route (/v1/subscriptions/), not a subscription.
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a Stripe id must be a non-empty string")
