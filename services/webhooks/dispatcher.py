"""The webhook dispatcher: `python -m services.webhooks.dispatcher`.

Two parts in one process, both safe to run in several replicas:
- a durable JetStream consumer on every event (shared durable name: replicas split the stream)
  that stores the event in the history and creates one delivery per matching active subscription,
  in one transaction with its inbox entry, so a redelivered event changes nothing;
- a worker that claims due deliveries (`FOR UPDATE SKIP LOCKED`, each claim is a lease: a
  dispatcher that dies mid-delivery leaves it due again once the lease runs out), POSTs them signed,
  and records every attempt. Delivery is at-least-once; receivers dedupe on event_id.

Per-call webhooks (a call's own webhook_url receiving that call's call.completed or call.failed) are
deliveries with `target_url` and no subscription, so they share the claims, leases, retries, attempts
and replay of subscription deliveries. The calls issue adds their fan-out (an event whose data
carries webhook_url) and the business-level secret that signs them; until then such a delivery
would be canceled, as one to a deleted subscription is.

It is the worker `webhooks-dispatcher` of core.registry: core.grpc_server runs it (settings, health on its
gRPC port, graceful stop) and calls `build`. Settings webhook_retry_scale multiplies the retry schedule and
the disabling window, and webhook_lease_seconds sets the claim lease (tests shorten both).
"""
from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from core import settings
from core.background import Background
from core.bus import DurableConsumer
from core.grpc_server import Runtime, main
from core.ids import new_id, utcnow
from core.inbox import first_delivery
from services.webhooks import delivery as send
from services.webhooks import rules
from services.webhooks.store import deliveries, events, inbox, subscriptions

log = logging.getLogger(__name__)
CONSUMER = "webhooks-dispatcher"


def allow_loopback(cfg: settings.Settings) -> bool:
    """Loopback receivers are for a developer's own machine: the local stack, or an explicit setting."""
    return cfg.environment == "local" or cfg.webhooks_allow_loopback


async def fan_out(engine: AsyncEngine, event: dict) -> int:
    """Store one event and queue it for every active subscription of its business that wants it."""
    occurred = datetime.fromisoformat(event["occurred_at"].replace("Z", "+00:00"))
    async with engine.begin() as conn:
        if not await first_delivery(conn, inbox, CONSUMER, event["event_id"]):
            return 0
        await conn.execute(insert(events).values(
            event_id=event["event_id"], type=event["type"], business_id=event.get("business_id"),
            occurred_at=occurred, data=event.get("data") or {}).on_conflict_do_nothing())
        if not event.get("business_id"):
            return 0
        s = subscriptions.c
        targets = (await conn.scalars(sa.select(s.id).where(
            s.business_id == event["business_id"], s.is_active, s.events.any(event["type"])))).all()
        now = utcnow()
        for subscription_id in targets:
            await conn.execute(insert(deliveries).values(
                id=new_id(), subscription_id=subscription_id, business_id=event["business_id"],
                event_id=event["event_id"], event_type=event["type"], status="pending", attempts=0,
                next_attempt_at=now, replay=False, created_at=now)
                .on_conflict_do_nothing(index_elements=["event_id", "subscription_id"], index_where=sa.text("NOT replay")))
        return len(targets)


class DeliveryWorker(Background):
    task_name = "webhook-deliveries"

    def __init__(self, engine: AsyncEngine, box: rules.SecretBox, sender: send.Sender, *, scale: float = 1.0,
                 lease: timedelta = timedelta(seconds=60), batch: int = 50, max_batches: int = 4,
                 idle_seconds: float = 0.2):
        self.engine, self.box, self.sender = engine, box, sender
        self.scale, self.batch, self.max_batches, self.idle_seconds = scale, batch, max_batches, idle_seconds
        self.lease = lease  # see Settings.webhook_lease
        self.wake = asyncio.Event()

    async def claim(self) -> list:
        d = deliveries.c
        due = (sa.select(d.id).where(d.status == "pending", d.next_attempt_at <= sa.func.now())
               .order_by(d.next_attempt_at).limit(self.batch).with_for_update(skip_locked=True))
        async with self.engine.begin() as conn:
            return (await conn.execute(deliveries.update().where(d.id.in_(due.scalar_subquery())).values(
                attempts=d.attempts + 1, next_attempt_at=sa.func.now() + self.lease).returning(deliveries))).all()

    async def deliver(self, claimed) -> None:
        async with self.engine.connect() as conn:
            subs = {r.id: r for r in await conn.execute(sa.select(subscriptions).where(
                subscriptions.c.id.in_({c.subscription_id for c in claimed if c.subscription_id})))}
            stored = {str(r.event_id): r for r in await conn.execute(sa.select(events).where(
                events.c.event_id.in_({c.event_id for c in claimed})))}

        canceled, sending = [], []
        for item in claimed:
            sub = subs.get(item.subscription_id)
            # Per-call deliveries (target_url, no subscription) arrive with the calls issue and its signing key.
            if sub is None or not sub.is_active:
                canceled.append(item.id)  # deleted or disabled: nothing more to send
            else:
                sending.append((item, sub))

        def one(item, sub):
            event = stored[str(item.event_id)]
            return send.post_signed(self.sender, self.box, sub, str(item.id), str(event.event_id), event.type,
                                    event.occurred_at, event.business_id and str(event.business_id), event.data,
                                    url=item.target_url)

        outcomes = await asyncio.gather(*(one(item, sub) for item, sub in sending))
        if canceled:
            async with self.engine.begin() as conn:
                await conn.execute(deliveries.update().where(deliveries.c.id.in_(canceled)).values(status="canceled"))
        await send.record(self.engine, [(item, o) for (item, _), o in zip(sending, outcomes)], scale=self.scale)

    async def run(self) -> None:
        """Claim and deliver batches, several at once, so one slow receiver does not hold the others back."""
        inflight: set[asyncio.Task] = set()
        try:
            while True:
                if len(inflight) >= self.max_batches:
                    await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                try:
                    claimed = await self.claim()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the database may be away; claims are leases
                    log.warning("webhook deliveries: cannot claim: %s; retrying", exc)
                    await asyncio.sleep(1.0)
                    continue
                if claimed:
                    task = asyncio.create_task(self._deliver_logged(claimed))
                    inflight.add(task)
                    task.add_done_callback(inflight.discard)
                    continue
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), self.idle_seconds)
                except TimeoutError:
                    pass
        finally:
            for task in inflight:  # their claims run out and another dispatcher (or this one, restarted) retries
                task.cancel()

    async def _deliver_logged(self, claimed) -> None:
        try:
            await self.deliver(claimed)
        except Exception as exc:  # noqa: BLE001 - the claims are leases: these deliveries come due again
            log.warning("webhook deliveries: a batch failed (%s); it will be retried when its claims run out", exc)


def build(runtime: Runtime) -> None:
    cfg = runtime.settings
    loopback = allow_loopback(cfg)
    if loopback:
        log.warning("webhooks: loopback receivers are allowed (local stack or WEBHOOKS_ALLOW_LOOPBACK); "
                    "private and metadata addresses are always refused")
    sender = send.Sender(loopback)
    runtime.on_stop.append(sender.close)
    worker = DeliveryWorker(runtime.engine, rules.SecretBox(cfg.secret_key.reveal()), sender,
                            scale=cfg.webhook_retry_scale, lease=cfg.webhook_lease)

    async def on_event(event: dict) -> None:
        if await fan_out(runtime.engine, event):
            worker.wake.set()

    runtime.run(worker)
    # Receivers order by occurred_at, so a fetched batch fans out concurrently.
    runtime.run(DurableConsumer(runtime.bus, CONSUMER, on_event, ack_wait=30.0, batch=100, in_order=False))


if __name__ == "__main__":
    main("webhooks-dispatcher")
