"""What the webhooks repositories return (services.webhooks.repository, and its twins in tests/memory): frozen
records of the columns the use cases and the servicer read, never the database's rows. Events are
core.events.Envelope."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Subscription:
    """A business's subscription: where its events go and the sealed secrets that sign them (core.sealing.SecretBox)."""

    id: str
    business_id: str
    url: str
    events: list[str]
    description: str | None
    is_active: bool
    secret_sealed: str
    secret_tail: str
    previous_secret_sealed: str | None
    previous_secret_expires_at: datetime | None
    failure_count: int
    failing_since: datetime | None
    last_triggered_at: datetime | None
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class CallSecret:
    """The secret that signs a business's per-call webhooks; its sealed columns are a subscription's, so the same
    signing code reads either (delivery.signing_secrets)."""

    business_id: str
    secret_sealed: str
    secret_tail: str
    previous_secret_sealed: str | None
    previous_secret_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Delivery:
    """One event on its way to a subscription (or, without one, to a call's own `target_url`)."""

    id: str
    subscription_id: str | None
    business_id: str
    event_id: str
    event_type: str
    target_url: str | None
    status: str  # domain.DELIVERY_STATUSES
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str | None
    last_latency_ms: int | None
    delivered_at: datetime | None
    replay: bool
    created_at: datetime


@dataclass(frozen=True)
class Failing:
    """A subscription after a failed batch: since when it has failed without a success, and whether it is on."""

    failing_since: datetime
    is_active: bool
