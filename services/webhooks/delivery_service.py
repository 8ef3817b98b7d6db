"""Delivery use cases, shared by the dispatcher worker and the test event: fan an event out to the
subscriptions that want it, deliver a claimed batch, and record what each attempt did to its delivery and
its subscription (see domain for the retry schedule and the disabling window)."""
from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from core.events import Envelope
from core.ids import utcnow
from core.inbox import first_delivery
from services.webhooks import domain, store
from services.webhooks.delivery import Outcome, Sender, post_signed
from services.webhooks.store import inbox

CONSUMER = "webhooks-dispatcher"


async def fan_out(engine: AsyncEngine, event: Envelope) -> int:
    """Store one event and queue it for every active subscription of its business that wants it, once
    (the consumer inbox and the deliveries' unique index make a redelivered event change nothing)."""
    async with engine.begin() as conn:
        if not await first_delivery(conn, inbox, CONSUMER, event.event_id):
            return 0
        await store.store_event(conn, event)
        if not event.business_id:
            return 0
        targets = await store.subscribed_to(conn, event.business_id, event.type)
        now = utcnow()
        for subscription_id in targets:
            await store.queue_once(conn, store.delivery_values(subscription_id, event.business_id, event.event_id,
                                                               event.type, now))
        return len(targets)


async def deliver(engine: AsyncEngine, box: domain.SecretBox, sender: Sender, claimed: list, *,
                  scale: float = 1.0) -> None:
    """Send a claimed batch and record the outcomes; deliveries of deleted or disabled subscriptions are
    canceled. Per-call deliveries (target_url, no subscription) arrive with the calls issue and its signing key."""
    async with engine.connect() as conn:
        subs = await store.subscriptions_by_id(conn, {c.subscription_id for c in claimed if c.subscription_id})
        stored = await store.events_by_id(conn, {c.event_id for c in claimed})
    canceled, sending = [], []
    for item in claimed:
        sub = subs.get(item.subscription_id)
        if sub is None or not sub.is_active:
            canceled.append(item.id)
        else:
            sending.append((item, sub))
    outcomes = await asyncio.gather(*(post_signed(sender, box, sub, str(item.id), stored[str(item.event_id)],
                                                  url=item.target_url) for item, sub in sending))
    if canceled:
        async with engine.begin() as conn:
            await store.cancel_deliveries(conn, canceled)
    await record_outcomes(engine, [(item, o) for (item, _), o in zip(sending, outcomes)], scale=scale)


async def record_outcomes(engine: AsyncEngine, results: list[tuple[object, Outcome]], *, retry: bool = True,
                          scale: float = 1.0) -> None:
    """Write a batch of attempts and move each delivery and its subscription on, in one transaction."""
    if not results:
        return
    now = utcnow()
    rows = []
    for item, outcome in results:
        status, delay = domain.after_attempt(outcome.ok, item.attempts, retry, scale)
        rows.append({"delivery": item.id, "attempt": item.attempts, "status": status,
                     "status_code": outcome.status_code, "error": outcome.error, "latency_ms": outcome.latency_ms,
                     "next_attempt_at": now + delay})
    by_subscription: dict[str, list[bool]] = {}
    for item, outcome in results:
        if item.subscription_id:
            by_subscription.setdefault(item.subscription_id, []).append(outcome.ok)
    async with engine.begin() as conn:
        await store.record_attempts(conn, rows, now)
        for subscription_id, oks in by_subscription.items():
            if oks[-1]:
                await store.subscription_succeeded(conn, subscription_id, now)
                continue
            row = await store.subscription_failed(conn, subscription_id, sum(not ok for ok in oks), now)
            if row and row.is_active and domain.should_disable(row.failing_since, now, scale):
                await store.disable_subscription(conn, subscription_id, domain.disabled_reason(now, scale))
