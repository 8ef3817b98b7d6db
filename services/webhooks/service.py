"""Webhook use cases: subscriptions and their secrets, the test event, event history, deliveries and replay.
Callers are the servicer and the service-layer tests; the caller's tenant comes from core.tenant."""
from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from contracts import webhooks
from core import tenant
from core.errors import invalid, not_found
from core.events import Envelope, to_data
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.sealing import SecretBox
from core.tenant import pick_business
from core.uow import UnitOfWork
from services.webhooks import delivery, delivery_service, domain
from services.webhooks.delivery import Outcome
from services.webhooks.records import CallSecret, Subscription
from services.webhooks.repository import SubscriptionsRepository, WebhooksUnit
from switchboard.v1 import events_pb2


@dataclass(frozen=True)
class Saved:
    business_id: str
    row: Subscription
    secret: str | None  # only for a new subscription: shown once

    @property
    def created(self) -> bool:
        return self.secret is not None


@dataclass(frozen=True)
class Rotated:
    row: Subscription
    secret: str
    previous_expires_at: datetime


@dataclass(frozen=True)
class CallSecretView:
    business_id: str
    row: CallSecret | None  # None until the business has one
    secret: str | None = None  # only right after it was made or replaced


@dataclass(frozen=True)
class TestSent:
    business_id: str
    event_id: str
    results: list[tuple[Subscription, Outcome]]


class Webhooks:
    def __init__(self, uow: UnitOfWork[WebhooksUnit], box: SecretBox, sender: delivery.Sender,
                 allow_loopback: bool, lease: timedelta):
        self.uow = uow
        self.box = box
        self.sender = sender
        self.allow_loopback = allow_loopback
        self.lease = lease  # a test delivery is claimed like the dispatcher's (Settings.webhook_lease)

    # -- subscriptions ----------------------------------------------------------------------

    async def save(self, business_id: str | None, url: str, event_types: list[str], description: str | None) -> Saved:
        """Subscribe a URL of the business (a new secret), or update the subscription it has (re-enabling it)."""
        business_id = pick_business(tenant.require_account(), business_id)
        url = url.strip()
        await delivery.check_destination(url, self.allow_loopback)
        wanted = domain.check_events(event_types)
        domain.check_description(description)
        now, secret = utcnow(), None
        async with self.uow.transaction() as work:
            found = await work.subscriptions.subscription_by_url(business_id, url)
            if found is None:
                secret = domain.new_secret()
                row = await work.subscriptions.add_subscription(
                    id=f"wh_{secrets.token_hex(12)}", business_id=business_id, url=url, events=wanted,
                    description=description, is_active=True, secret_sealed=self.box.seal(secret),
                    secret_tail=secret[-4:], failure_count=0, created_at=now, updated_at=now)
            else:
                changed = await work.subscriptions.change_subscription(found.id, dict(
                    events=wanted, description=description if description is not None else found.description,
                    is_active=True, disabled_reason=None, failure_count=0, failing_since=None, updated_at=now))
                row = changed or found  # held for update above: it is there
        return Saved(business_id, row, secret)

    async def list_subscriptions(self, business_id: str | None) -> tuple[str, list[Subscription]]:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            return business_id, await work.subscriptions.subscriptions(business_id)

    async def delete(self, business_id: str | None, subscription_id: str) -> str:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.uow.transaction() as work:
            row = await self._subscription(work.subscriptions, business_id, subscription_id, lock=True)
            await work.subscriptions.remove_subscription(row.id)
        return row.id

    async def rotate_secret(self, business_id: str | None, subscription_id: str) -> Rotated:
        """A new signing secret; the previous one keeps signing for domain.ROTATION_OVERLAP."""
        business_id = pick_business(tenant.require_account(), business_id)
        secret, now = domain.new_secret(), utcnow()
        async with self.uow.transaction() as work:
            row = await self._subscription(work.subscriptions, business_id, subscription_id, lock=True)
            await work.subscriptions.change_subscription(row.id, dict(
                secret_sealed=self.box.seal(secret), secret_tail=secret[-4:], previous_secret_sealed=row.secret_sealed,
                previous_secret_expires_at=now + domain.ROTATION_OVERLAP, updated_at=now))
        return Rotated(row, secret, now + domain.ROTATION_OVERLAP)

    @staticmethod
    async def _subscription(subscriptions: SubscriptionsRepository, business_id: str, subscription_id: str, *,
                            lock: bool = False) -> Subscription:
        row = await subscriptions.subscription(business_id, subscription_id, lock=lock)
        if row is None:
            raise not_found("webhook")
        return row

    # -- the per-call webhook secret -----------------------------------------------------------------

    async def call_secret(self, business_id: str | None) -> CallSecretView:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            return CallSecretView(business_id, await work.subscriptions.call_secret(business_id))

    async def rotate_call_secret(self, business_id: str | None) -> CallSecretView:
        """A new secret for the business's per-call webhooks; the previous one keeps signing for
        domain.ROTATION_OVERLAP."""
        business_id = pick_business(tenant.require_account(), business_id)
        secret, now = domain.new_secret(), utcnow()
        async with self.uow.transaction() as work:
            current = await work.subscriptions.call_secret(business_id, lock=True)
            row = await work.subscriptions.put_call_secret(
                business_id, self.box.seal(secret), secret[-4:], now,
                previous_sealed=current.secret_sealed if current else None,
                previous_expires_at=now + domain.ROTATION_OVERLAP if current else None)
        return CallSecretView(business_id, row, secret)

    # -- the test event -------------------------------------------------------------------------

    async def send_test(self, business_id: str | None, subscription_id: str | None) -> TestSent:
        """A webhook.test event sent now to one subscription, or to every active one, and recorded like any
        delivery (without retries)."""
        business_id = pick_business(tenant.require_account(), business_id)
        now = utcnow()
        event = Envelope(new_id(), "webhook.test", now, business_id, to_data(events_pb2.WebhookTest(
            message="This is a test event from Switchboard.", sent_at=now.isoformat())))
        async with self.uow.transaction() as work:
            if subscription_id:
                targets = [await self._subscription(work.subscriptions, business_id, subscription_id)]
            else:
                targets = await work.subscriptions.subscriptions(business_id, active_only=True)
            if not targets:
                raise not_found("active webhook of this business")
            await work.events.keep([event])
            claimed = await work.deliveries.add([
                domain.delivery_values(t.id, business_id, event.event_id, event.type, now,
                                       **domain.claimed_by_creator(now, self.lease)) for t in targets])
        outcomes = await asyncio.gather(*(
            delivery.post_signed(self.sender, delivery.signing_secrets(self.box, target, now), target.url,
                                 item.id, event)
            for target, item in zip(targets, claimed, strict=True)))
        await delivery_service.record_outcomes(self.uow, list(zip(claimed, outcomes, strict=True)), retry=False)
        return TestSent(business_id, event.event_id, list(zip(targets, outcomes, strict=True)))

    # -- history, deliveries, replay ------------------------------------------------------------

    @staticmethod
    def _businesses(business_id: str | None) -> list[str]:
        who = tenant.require_account()
        return [pick_business(who, business_id)] if business_id else list(who.business_ids)

    async def list_events(self, business_id: str | None, event_type: str | None, since: datetime | None,
                          page: Page) -> Paged:
        async with self.uow.read() as work:
            return await work.events.page(self._businesses(business_id), event_type, since, page)

    async def list_deliveries(self, business_id: str | None, webhook_id: str | None, event_id: str | None,
                              status: str | None, page: Page) -> Paged:
        businesses = self._businesses(business_id)
        event_id = require_uuid(event_id, "event_id") if event_id else None
        status = domain.check_delivery_status(status) if status else None
        async with self.uow.read() as work:
            return await work.deliveries.page(businesses, webhook_id, event_id, status, page)

    async def replay(self, business_id: str | None, webhook_id: str, event_ids: list[str], since: datetime | None,
                     until: datetime | None) -> list[str]:
        """Queue the named events again (replay), or every wanted event since/until (backfill), to one
        subscription; returns the new delivery ids."""
        business_id = pick_business(tenant.require_account(), business_id)
        if bool(event_ids) == bool(since):
            raise invalid("send event_ids (replay) or since (backfill), not both")
        if any(not is_uuid(i) for i in event_ids):
            raise invalid("event_ids must be UUIDs")
        now = utcnow()
        async with self.uow.transaction() as work:
            sub = await self._subscription(work.subscriptions, business_id, webhook_id)
            if not sub.is_active:
                raise invalid("this webhook is disabled; save its url again to re-enable it first")
            found = await work.events.to_replay(business_id, event_ids, since, until, list(sub.events),
                                                webhooks.REPLAY_MAX + 1)
            if event_ids and len(found) < len(set(event_ids)):
                raise not_found("one or more of these events for this business")
            if len(found) > webhooks.REPLAY_MAX:
                raise invalid(f"at most {webhooks.REPLAY_MAX} events per replay; narrow since/until")
            queued = await work.deliveries.add([
                domain.delivery_values(sub.id, business_id, event_id, event_type, now, replay=True)
                for event_id, event_type in found])
        return [d.id for d in queued]
