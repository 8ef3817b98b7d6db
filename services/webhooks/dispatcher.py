"""The webhook dispatcher: `python -m services.webhooks.dispatcher`.

Two parts in one process, both safe to run in several replicas:
- a durable JetStream consumer on every event (shared durable name: replicas split the stream)
  that stores a fetched batch of events in the history and creates one delivery per matching active
  subscription, in one transaction with their inbox entries, so a redelivered event changes nothing;
- a worker that POSTs deliveries signed and records every attempt, a batch at a time. Every attempt
  runs under a claim, which is a lease: a dispatcher that dies mid-delivery leaves it due again once
  the lease runs out. The fan-out claims the deliveries it creates while the worker has room, so
  first attempts go out at once from the process that created them; the worker claims the rest
  (`FOR UPDATE SKIP LOCKED`): retries, and deliveries queued while it was busy, by any replica.
  Delivery is at-least-once; receivers dedupe on event_id.

Per-call webhooks (a call's own webhook_url receiving that call's call.completed or call.failed, from the
event's data) are deliveries with `target_url` and no subscription, so they share the claims, leases,
retries and attempts of subscription deliveries; they are signed with the business's call secret
(`POST /api/v1/webhooks/call-secret`), made on first need.

It is the worker `webhooks-dispatcher` of core.registry: core.grpc_server runs it (settings, health on its
gRPC port, graceful stop) and calls `build`. Settings webhook_retry_scale multiplies the retry schedule and
the disabling window, and webhook_lease_seconds sets the claim lease (tests shorten both).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

from core import destinations
from core.background import Background
from core.bus import PermanentError
from core.events import Envelope
from core.grpc_server import Runtime, main
from core.ids import is_uuid
from core.sealing import SecretBox
from core.uow import UnitOfWork
from services.webhooks import delivery_service
from services.webhooks.delivery import Sender
from services.webhooks.delivery_service import CONSUMER
from services.webhooks.records import Delivery
from services.webhooks.repository import WebhooksUnit

log = logging.getLogger(__name__)


class DeliveryWorker(Background):
    """Delivers, a batch per task and at most `max_batches` at once (so one slow receiver does not hold back the
    others): batches the fan-out claimed as it queued them, and due deliveries it claims (retries, and first
    attempts queued while it was busy)."""

    task_name = "webhook-deliveries"

    def __init__(self, uow: UnitOfWork[WebhooksUnit], box: SecretBox, sender: Sender, *, scale: float = 1.0,
                 lease: timedelta = timedelta(seconds=60), batch: int = 100, max_batches: int = 4,
                 idle_seconds: float = 0.2):
        self.uow, self.box, self.sender = uow, box, sender
        self.scale, self.batch, self.max_batches, self.idle_seconds = scale, batch, max_batches, idle_seconds
        self.lease = lease  # see Settings.webhook_lease
        self.wake = asyncio.Event()
        self.inflight: set[asyncio.Task[None]] = set()

    @property
    def has_room(self) -> bool:
        return len(self.inflight) < self.max_batches

    def start_delivery(self, claimed: list[Delivery], known: delivery_service.Fanned | None = None) -> None:
        task = asyncio.create_task(self._deliver_logged(claimed, known))
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)

    async def claim(self) -> list[Delivery]:
        async with self.uow.transaction() as work:
            return await work.deliveries.claim_due(self.batch, self.lease)

    async def run(self) -> None:
        try:
            while True:
                if not self.has_room:
                    await asyncio.wait(self.inflight, return_when=asyncio.FIRST_COMPLETED)
                self.wake.clear()  # before claiming: deliveries queued while the claim runs wake the next one
                try:
                    claimed = await self.claim()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the database may be away; claims are leases
                    log.warning("webhook deliveries: cannot claim: %s; retrying", exc)
                    await asyncio.sleep(1.0)
                    continue
                if claimed:
                    self.start_delivery(claimed)
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.idle_seconds)
        finally:
            for task in self.inflight:  # their claims run out and another dispatcher (or this one, restarted) retries
                task.cancel()

    async def _deliver_logged(self, claimed: list[Delivery], known: delivery_service.Fanned | None) -> None:
        try:
            await delivery_service.deliver(self.uow, self.box, self.sender, claimed, scale=self.scale, known=known)
        except Exception as exc:  # noqa: BLE001 - the claims are leases: these deliveries come due again
            log.warning("webhook deliveries: a batch failed (%s); it will be retried when its claims run out", exc)


def build(runtime: Runtime) -> None:
    cfg = runtime.settings
    loopback = destinations.allow_loopback(cfg)
    if loopback:
        log.warning("webhooks: loopback receivers are allowed (local stack or WEBHOOKS_ALLOW_LOOPBACK); "
                    "private and metadata addresses are always refused")
    sender = Sender(loopback)
    runtime.on_stop.append(sender.close)
    uow = UnitOfWork(runtime.db, WebhooksUnit)
    worker = DeliveryWorker(uow, SecretBox(cfg.webhook_secrets_key.reveal()), sender,
                            scale=cfg.webhook_retry_scale, lease=cfg.webhook_lease)

    async def on_events(messages: list[dict[str, Any]]) -> None:
        # Claimed as they are queued while this worker has room, so they go out without a claim; else left due
        # for whichever dispatcher has room first.
        fanned = await delivery_service.fan_out(uow, [envelope(m) for m in messages],
                                                lease=worker.lease if worker.has_room else None)
        if fanned.claimed:
            worker.start_delivery(fanned.claimed, fanned)
        if fanned.queued > len(fanned.claimed):
            worker.wake.set()

    runtime.run(worker)
    # Receivers order by occurred_at, so a fetched batch fans out together, in one transaction.
    runtime.consume(CONSUMER, on_events, ack_wait=30.0, batch=250, batched=True)


def envelope(message: dict[str, Any]) -> Envelope:
    """A bus message as the event to fan out; PermanentError when it can never be stored."""
    try:
        event = Envelope.from_json(message)
    except ValueError as exc:
        raise PermanentError(str(exc)) from None
    if event.business_id is not None and not is_uuid(event.business_id):
        raise PermanentError(f"{event.type} {event.event_id}: business_id is not a UUID")
    if not is_uuid(event.event_id):
        raise PermanentError(f"{event.type}: event_id is not a UUID")
    # Lower case, as PostgreSQL writes UUIDs back: fan_out matches business ids as text.
    return replace(event, event_id=event.event_id.lower(), business_id=event.business_id and event.business_id.lower())


if __name__ == "__main__":
    main("webhooks-dispatcher")
