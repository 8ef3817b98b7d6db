"""Delivery use cases, shared by the dispatcher worker and the test event: fan an event out to the
subscriptions that want it, deliver a claimed batch, and record what each attempt did to its delivery and
its subscription (see domain for the retry schedule and the disabling window).

Every send happens between units of work, never inside one: a delivery is claimed (a lease, counted as its
attempt) in one transaction, sent, and its outcome written in another."""
from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core import metrics
from core.events import Envelope
from core.ids import utcnow
from core.sealing import SecretBox
from core.uow import UnitOfWork
from services.webhooks import domain
from services.webhooks.delivery import Outcome, Sender, post_signed, signing_secrets
from services.webhooks.records import CallSecret, Delivery, Subscription
from services.webhooks.repository import WebhooksUnit

CONSUMER = "webhooks-dispatcher"

@dataclass(frozen=True)
class Fanned:
    """What fan_out queued: how many deliveries in all, and those it claimed for its caller, with the events and
    subscriptions they need (so `deliver` reads nothing more)."""
    queued: int
    claimed: list[Delivery]
    events: dict[str, Envelope]
    subscriptions: dict[str, Subscription]


async def fan_out(uow: UnitOfWork[WebhooksUnit], batch: list[Envelope], *,
                  lease: timedelta | None = None) -> Fanned:
    """Store a batch of events and queue each once for every active subscription of its business that wants it
    (and for a call's own webhook_url), in one transaction. The consumer inbox and the deliveries' unique index
    make a redelivered event change nothing.

    With a `lease`, the subscriptions' deliveries are queued already claimed by the caller for that long (their
    first attempt counted), as a claim of due deliveries would: the caller delivers them at once, and if it dies
    they come due when the lease runs out, like any claim. Without one they wait to be claimed."""
    async with uow.transaction() as work:
        seen = await work.events.first_seen(CONSUMER, [e.event_id for e in batch])
        fresh = {e.event_id: e for e in batch if e.event_id in seen}
        if not fresh:
            return Fanned(0, [], {}, {})
        await work.events.keep(list(fresh.values()))
        wanting = await work.subscriptions.active_of({e.business_id for e in fresh.values() if e.business_id})
        now = utcnow()
        claim = domain.claimed_by_creator(now, lease) if lease else {}
        rows = []
        for event in fresh.values():
            if not event.business_id:
                continue
            rows += [domain.delivery_values(s.id, event.business_id, event.event_id, event.type, now, **claim)
                     for s in wanting.get(event.business_id, ()) if event.type in s.events]
            call_url = event.data.get("webhook_url") if event.type in domain.PER_CALL_EVENTS else None
            if isinstance(call_url, str) and call_url:
                rows.append(domain.delivery_values(None, event.business_id, event.event_id, event.type, now,
                                                   target_url=call_url))
        queued = await work.deliveries.queue_once(rows)
    claimed = [d for d in queued if d.subscription_id] if lease else []
    return Fanned(len(queued), claimed, fresh, {s.id: s for subs in wanting.values() for s in subs})


async def deliver(uow: UnitOfWork[WebhooksUnit], box: SecretBox, sender: Sender,
                  claimed: list[Delivery], *, scale: float = 1.0, known: Fanned | None = None) -> None:
    """Send a claimed batch and record the outcomes. A subscription's delivery is signed with its secrets (and
    canceled once it is deleted or disabled); a per-call delivery (a target_url, no subscription) with its
    business's call secret, made on first need. `known`: the fan-out that claimed them, whose events and
    subscriptions are used instead of reading them again."""
    if known is not None:
        subs, stored = known.subscriptions, known.events
    else:
        async with uow.read() as work:
            subs = await work.subscriptions.by_ids({c.subscription_id for c in claimed if c.subscription_id})
            stored = await work.events.by_ids({c.event_id for c in claimed})
    signers = await call_signers(uow, box, {c.business_id for c in claimed if not c.subscription_id and c.target_url})
    now = utcnow()
    secrets: dict[str, list[str]] = {}
    canceled: list[str] = []
    sending: list[tuple[Delivery, Coroutine[Any, Any, Outcome]]] = []
    for item in claimed:
        signer: Subscription | CallSecret | None
        if item.subscription_id:
            sub = subs.get(item.subscription_id)
            signer = sub if sub is not None and sub.is_active else None  # deleted or disabled: nothing more to send
            url = item.target_url or (sub.url if sub is not None else None)
        else:
            signer = signers.get(item.business_id) if item.target_url else None
            url = item.target_url
        if signer is None or url is None:
            canceled.append(item.id)
            continue
        key = item.subscription_id or item.business_id
        if key not in secrets:  # opened once per signer and batch
            secrets[key] = signing_secrets(box, signer, now)
        sending.append((item, post_signed(sender, secrets[key], url, item.id, stored[item.event_id])))
    outcomes = await asyncio.gather(*(attempt for _, attempt in sending))
    if canceled:
        async with uow.transaction() as work:
            await work.deliveries.cancel(canceled)
    await record_outcomes(uow, [(item, o) for (item, _), o in zip(sending, outcomes, strict=True)], scale=scale)


async def call_signers(uow: UnitOfWork[WebhooksUnit], box: SecretBox,
                       business_ids: set[str]) -> dict[str, CallSecret]:
    """The per-call webhook secret of each business, made for those that have none yet."""
    if not business_ids:
        return {}
    async with uow.transaction() as work:
        found = await work.subscriptions.call_secrets(business_ids)
        for business_id in business_ids - set(found):
            secret = domain.new_secret()
            found[business_id] = await work.subscriptions.ensure_call_secret(business_id, box.seal(secret),
                                                                             secret[-4:], utcnow())
    return found


async def record_outcomes(uow: UnitOfWork[WebhooksUnit], results: list[tuple[Delivery, Outcome]], *,
                          retry: bool = True, scale: float = 1.0) -> None:
    """Write a batch of attempts and move each delivery and its subscription on, in one transaction."""
    if not results:
        return
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for item, outcome in results:
        status, delay = domain.after_attempt(outcome.ok, item.attempts, retry, scale)
        rows.append({"delivery": item.id, "attempt": item.attempts, "status": status,
                     "status_code": outcome.status_code, "error": outcome.error, "latency_ms": outcome.latency_ms,
                     "next_attempt_at": now + delay})
    by_subscription: dict[str, list[bool]] = {}
    for item, outcome in results:
        if item.subscription_id:
            by_subscription.setdefault(item.subscription_id, []).append(outcome.ok)
    async with uow.transaction() as work:
        await work.deliveries.record_attempts(rows, now)
        for subscription_id, oks in by_subscription.items():
            if oks[-1]:
                await work.subscriptions.succeeded(subscription_id, now)
                continue
            failing = await work.subscriptions.failed(subscription_id, sum(not ok for ok in oks), now)
            if failing and failing.is_active and domain.should_disable(failing.failing_since, now, scale):
                await work.subscriptions.disable(subscription_id, domain.disabled_reason(now, scale))
    if (instruments := metrics.current()) is not None:
        for (item, _), row in zip(results, rows, strict=True):
            instruments.webhook_attempt(row["status"], (now - item.created_at).total_seconds())
