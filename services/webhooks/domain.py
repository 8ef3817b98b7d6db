"""Webhook rules as plain functions: the offered events, which URLs may receive them, the retry
schedule, signatures, and how secrets are kept."""
from __future__ import annotations

import random
import secrets
from datetime import datetime, timedelta
from typing import Any

from contracts import webhooks
from contracts.webhooks import DESCRIPTION_MAX, DISABLE_AFTER, RETRY_DELAYS
from core import destinations
from core.catalogue import NotInCatalogue, subset
from core.errors import invalid
from core.events import PARTNER_EVENT_TYPES
from core.ids import new_id

SECRET_PREFIX = "whsec_"
ROTATION_OVERLAP = webhooks.ROTATION_OVERLAP
MAX_RESPONSE_BYTES = 64 * 1024
# Open connections a dispatcher keeps (alive, reused) to one receiver host, and in all: one busy or slow receiver
# cannot take every connection.
CONNECTIONS_PER_RECEIVER = 64
CONNECTIONS = 256
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1


def check_events(events: list[str]) -> list[str]:
    try:
        events = subset(events, PARTNER_EVENT_TYPES)
    except NotInCatalogue as exc:
        raise invalid(f"unknown event type {exc.unknown[0]!r}; offered: {', '.join(PARTNER_EVENT_TYPES)}") from None
    if not events:
        raise invalid("events must name at least one event type")
    return events


# -- where deliveries may go -------------------------------------------------------------


# Events a call's own webhook_url receives (SPEC: Events, per-call webhooks), from the event's data.
PER_CALL_EVENTS = ("call.completed", "call.failed")
DELIVERY_STATUSES = ("pending", "delivered", "failed", "canceled")


def check_description(description: str | None) -> None:
    if description is not None and len(description) > DESCRIPTION_MAX:
        raise invalid(f"description must be at most {DESCRIPTION_MAX} characters")


def check_delivery_status(status: str) -> str:
    if status not in DELIVERY_STATUSES:
        raise invalid(f"status must be one of {', '.join(DELIVERY_STATUSES)}")
    return status


def check_url(url: str) -> tuple[str, int]:
    """(host, port) of a well-formed http(s) URL without credentials, or 400."""
    return destinations.check_url(url, "webhook_url")


# -- deliveries --------------------------------------------------------------------------

def delivery_values(subscription_id: str | None, business_id: str, event_id: str, event_type: str, now: datetime, *,
                    attempts: int = 0, next_attempt_at: datetime | None = None, replay: bool = False,
                    target_url: str | None = None) -> dict[str, Any]:
    """A new pending delivery (schema.deliveries' columns): to a subscription, or (subscription None) to a per-call
    target_url."""
    return dict(id=new_id(), subscription_id=subscription_id, business_id=business_id, event_id=event_id,
                event_type=event_type, status="pending", attempts=attempts, next_attempt_at=next_attempt_at or now,
                replay=replay, created_at=now, target_url=target_url)


def claimed_by_creator(now: datetime, lease: timedelta) -> dict[str, Any]:
    """delivery_values for a delivery its creator sends at once: its first attempt counted and claimed for
    `lease`, as a claim of due deliveries leaves one it takes."""
    return {"attempts": 1, "next_attempt_at": now + lease}


# -- retries -------------------------------------------------------------------------------

def next_delay(attempts_made: int, scale: float = 1.0, rng: random.Random | None = None) -> timedelta | None:
    """How long until the next attempt after `attempts_made` failed ones; None when retries are exhausted."""
    if attempts_made >= MAX_ATTEMPTS:
        return None
    base = RETRY_DELAYS[attempts_made - 1] * scale
    return timedelta(seconds=base * (rng or random).uniform(0.8, 1.2))


def after_attempt(ok: bool, attempts_made: int, retry: bool, scale: float = 1.0) -> tuple[str, timedelta]:
    """A delivery's status after an attempt (delivered, pending for a retry, or failed) and the delay before
    its next attempt (zero when there is none)."""
    if ok:
        return "delivered", timedelta(0)
    delay = next_delay(attempts_made, scale) if retry else None
    return ("pending", delay) if delay else ("failed", timedelta(0))


def should_disable(failing_since: datetime, now: datetime, scale: float = 1.0) -> bool:
    return failing_since < now - DISABLE_AFTER * scale


def disabled_reason(now: datetime, scale: float = 1.0) -> str:
    return (f"disabled at {now.isoformat()} after failing for {DISABLE_AFTER * scale} without a success; "
            "save the subscription again to re-enable it")


def is_success(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


# -- signatures and secrets --------------------------------------------------------------------

def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def mask(secret: str) -> str:
    return f"{SECRET_PREFIX}...{secret[-4:]}"


