"""Stripe's webhook signature, checked through the `stripe` package rather than our own copy.

Stripe POSTs each Event as a JSON body with `Stripe-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256, keyed
with the endpoint's signing secret (`whsec_...`, the whole string), over `f"{t}.{body}"` on the exact bytes sent.
A receiver must check it over the raw body (not re-serialised JSON) and refuse a timestamp older than its
tolerance (replays). Several `v1=` values may appear while a secret is being rolled; any may match.

The simulator signs with `sign_payload`; receivers check with `parse_event` (the gateway: `signature_refusal` over
the raw body before it reads any of it as JSON, then `event_of`), and tests forge and replay with both. The gateway stores each verified event under EVENTS_SUBJECT on the PROVIDER stream (core.bus),
where the accounts service applies it.
"""
from __future__ import annotations

import hashlib
import hmac
import json

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


def signature_refusal(payload: bytes, signature_header: str, secret: str,
                      tolerance: int = DEFAULT_TOLERANCE) -> str | None:
    """Why the raw request is not signed with `secret` within `tolerance` (`stripe.WebhookSignature.verify_header`),
    or None when it is. Nothing of the payload is parsed: a receiver checks this before reading it as JSON."""
    if not secret:
        return "no webhook signing secret is configured"
    try:
        stripe.WebhookSignature.verify_header(payload, signature_header, secret, tolerance)
    except stripe.SignatureVerificationError as exc:
        text = str(exc.user_message or "")
        if "tolerance" in text:
            return "the signature's timestamp is outside the tolerance (a replay?)"
        if "No Stripe-Signature" in text:
            return "no Stripe-Signature header"
        if "extract" in text or "expected scheme" in text:
            return "the Stripe-Signature header is malformed"
        return "the signature does not match the payload"
    except UnicodeDecodeError:  # the signed bytes are not text: not a body Stripe sent
        return "the signature does not match the payload"
    return None


def parse_event(payload: bytes, signature_header: str, secret: str,
                tolerance: int = DEFAULT_TOLERANCE) -> stripe.Event:
    """The Event in a webhook request, once its signature and timestamp are checked (signature_refusal);
    `InvalidWebhook` otherwise."""
    if why := signature_refusal(payload, signature_header, secret, tolerance):
        raise InvalidWebhook(why)
    return event_of(payload)


def event_of(payload: bytes) -> stripe.Event:
    """The Event in a payload whose signature was checked (signature_refusal); `InvalidWebhook` when it is not one."""
    try:
        event = stripe.Event.construct_from(json.loads(payload), stripe.api_key)
    except ValueError:  # JSON, or UTF-8 (UnicodeDecodeError is a ValueError)
        raise InvalidWebhook("the payload is not JSON") from None
    except (AttributeError, TypeError):  # JSON, but not an object
        raise InvalidWebhook("the payload is not a Stripe event") from None
    fields = event.to_dict(recursive=False)
    if fields.get("object") != "event" or not isinstance(fields.get("id"), str) \
            or not isinstance(fields.get("type"), str) or not isinstance(fields.get("data"), stripe.StripeObject):
        raise InvalidWebhook("the payload is not a Stripe event")
    return event
