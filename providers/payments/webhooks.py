"""Stripe's webhook signature, checked through the `stripe` package rather than our own copy.

Stripe POSTs each Event as a JSON body with `Stripe-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256, keyed
with the endpoint's signing secret (`whsec_...`, the whole string), over `f"{t}.{body}"` on the exact bytes sent.
A receiver must check it over the raw body (not re-serialised JSON) and refuse a timestamp older than its
tolerance (replays). Several `v1=` values may appear while a secret is being rolled; any may match.

The simulator signs with `sign_payload`; receivers (the gateway) check with `parse_event`, and tests forge and
replay with both. The gateway stores each verified event under EVENTS_SUBJECT on the PROVIDER stream (core.bus),
where the accounts service applies it.
"""
from __future__ import annotations

import hashlib
import hmac

import stripe

SIGNATURE_HEADER = "Stripe-Signature"
EVENTS_PATH = "/api/v1/providers/payments/events"  # our webhook endpoint, under the public base URL
EVENTS_SUBJECT = "provider.payments.events"
DEFAULT_TOLERANCE = 300  # seconds, as Stripe's libraries


class InvalidWebhook(Exception):
    """The request is not a genuine, fresh Stripe event: bad or missing signature, stale timestamp, or a body
    that is not a JSON Event. The message says which, and never carries the secret."""


def sign_payload(payload: bytes, secret: str, timestamp: int) -> str:
    """The `Stripe-Signature` value for `payload` signed with `secret` at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{int(timestamp)}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={int(timestamp)},v1={mac}"


def parse_event(payload: bytes, signature_header: str, secret: str,
                tolerance: int = DEFAULT_TOLERANCE) -> stripe.Event:
    """The Event in a webhook request, once its signature and timestamp are checked (`stripe.Webhook.
    construct_event`); `InvalidWebhook` otherwise."""
    if not secret:
        raise InvalidWebhook("no webhook signing secret is configured")
    try:
        event = stripe.Webhook.construct_event(payload, signature_header, secret, tolerance)
    except stripe.SignatureVerificationError as exc:
        text = str(exc.user_message or "")
        if "tolerance" in text:
            raise InvalidWebhook("the signature's timestamp is outside the tolerance (a replay?)") from None
        if "No Stripe-Signature" in text:
            raise InvalidWebhook("no Stripe-Signature header") from None
        if "extract" in text or "expected scheme" in text:
            raise InvalidWebhook("the Stripe-Signature header is malformed") from None
        raise InvalidWebhook("the signature does not match the payload") from None
    except ValueError:  # JSON, or UTF-8 (UnicodeDecodeError is a ValueError)
        raise InvalidWebhook("the payload is not JSON") from None
    except (AttributeError, TypeError):  # JSON, but not an object
        raise InvalidWebhook("the payload is not a Stripe event") from None
    fields = event.to_dict(recursive=False)
    if fields.get("object") != "event" or not isinstance(fields.get("id"), str) \
            or not isinstance(fields.get("type"), str) or not isinstance(fields.get("data"), stripe.StripeObject):
        raise InvalidWebhook("the payload is not a Stripe event")
    return event
