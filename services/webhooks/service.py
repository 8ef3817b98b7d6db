"""Webhook use cases: subscriptions and their secrets, the test event, event history, deliveries and replay.
Callers are the servicer and the service-layer tests; the caller's tenant comes from core.tenant."""
from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from contracts import webhooks
from core import tenant
from core.errors import invalid, not_found
from core.events import Envelope, to_data
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.pagination import Page, Paged, fetch_page
from core.tenant import pick_business
from core.uow import Connections
from services.webhooks import delivery, delivery_service, domain, store
from services.webhooks.delivery import Outcome
from services.webhooks.repository import SqlSubscriptions, SubscriptionsRepository
from services.webhooks.schema import deliveries, events
from switchboard.v1 import events_pb2


@dataclass(frozen=True)
class Saved:
    business_id: str
    row: object
    secret: str | None  # only for a new subscription: shown once

    @property
    def created(self) -> bool:
        return self.secret is not None


@dataclass(frozen=True)
class Rotated:
    row: object
    secret: str
    previous_expires_at: datetime


@dataclass(frozen=True)
class CallSecretView:
    business_id: str
    row: object | None  # None until the business has one
    secret: str | None = None  # only right after it was made or replaced


@dataclass(frozen=True)
class TestSent:
    business_id: str
    event_id: str
    results: list[tuple[object, Outcome]]  # (subscription, outcome)


class Webhooks:
    def __init__(self, db: Connections, box: domain.SecretBox, sender: delivery.Sender, allow_loopback: bool,
                 lease: timedelta, *, subscriptions: Callable[..., SubscriptionsRepository] = SqlSubscriptions):
        self.db = db
        # The repository on a unit of work's handle (services.webhooks.repository); the test event, the history,
        # deliveries and replays run store.py's queries on the same handle.
        self.subscriptions_in = subscriptions
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
        async with self.db.transaction() as conn:
            subscriptions = self.subscriptions_in(conn)
            row = await subscriptions.subscription_by_url(business_id, url)
            if row is None:
                secret = domain.new_secret()
                row = await subscriptions.add_subscription(
                    id=f"wh_{secrets.token_hex(12)}", business_id=business_id, url=url, events=wanted,
                    description=description, is_active=True, secret_sealed=self.box.seal(secret),
                    secret_tail=secret[-4:], failure_count=0, created_at=now, updated_at=now)
            else:
                row = await subscriptions.change_subscription(row.id, dict(
                    events=wanted, description=description if description is not None else row.description,
                    is_active=True, disabled_reason=None, failure_count=0, failing_since=None, updated_at=now))
        return Saved(business_id, row, secret)

    async def list(self, business_id: str | None) -> tuple[str, list]:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.db.read() as conn:
            return business_id, await self.subscriptions_in(conn).subscriptions(business_id)

    async def delete(self, business_id: str | None, subscription_id: str) -> str:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.db.transaction() as conn:
            subscriptions = self.subscriptions_in(conn)
            row = await self._subscription(subscriptions, business_id, subscription_id, lock=True)
            await subscriptions.remove_subscription(row.id)
        return row.id

    async def rotate_secret(self, business_id: str | None, subscription_id: str) -> Rotated:
        """A new signing secret; the previous one keeps signing for domain.ROTATION_OVERLAP."""
        business_id = pick_business(tenant.require_account(), business_id)
        secret, now = domain.new_secret(), utcnow()
        async with self.db.transaction() as conn:
            subscriptions = self.subscriptions_in(conn)
            row = await self._subscription(subscriptions, business_id, subscription_id, lock=True)
            await subscriptions.change_subscription(row.id, dict(
                secret_sealed=self.box.seal(secret), secret_tail=secret[-4:], previous_secret_sealed=row.secret_sealed,
                previous_secret_expires_at=now + domain.ROTATION_OVERLAP, updated_at=now))
        return Rotated(row, secret, now + domain.ROTATION_OVERLAP)

    @staticmethod
    async def _subscription(subscriptions: SubscriptionsRepository, business_id: str, subscription_id: str, *,
                            lock: bool = False):
        row = await subscriptions.subscription(business_id, subscription_id, lock=lock)
        if row is None:
            raise not_found("webhook")
        return row

    # -- the per-call webhook secret -----------------------------------------------------------------

    async def call_secret(self, business_id: str | None) -> CallSecretView:
        business_id = pick_business(tenant.require_account(), business_id)
        async with self.db.read() as conn:
            return CallSecretView(business_id, await self.subscriptions_in(conn).call_secret(business_id))

    async def rotate_call_secret(self, business_id: str | None) -> CallSecretView:
        """A new secret for the business's per-call webhooks; the previous one keeps signing for
        domain.ROTATION_OVERLAP."""
        business_id = pick_business(tenant.require_account(), business_id)
        secret, now = domain.new_secret(), utcnow()
        async with self.db.transaction() as conn:
            repository = self.subscriptions_in(conn)
            current = await repository.call_secret(business_id, lock=True)
            row = await repository.put_call_secret(
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
        async with self.db.transaction() as conn:
            subscriptions = self.subscriptions_in(conn)
            if subscription_id:
                targets = [await self._subscription(subscriptions, business_id, subscription_id)]
            else:
                targets = await subscriptions.subscriptions(business_id, active_only=True)
            if not targets:
                raise not_found("active webhook of this business")
            await store.store_events(conn, [event])
            claimed = await store.insert_deliveries(conn, [
                store.delivery_values(t.id, business_id, event.event_id, event.type, now,
                                      **store.claimed_by_creator(now, self.lease)) for t in targets])
        outcomes = await asyncio.gather(*(
            delivery.post_signed(self.sender, delivery.signing_secrets(self.box, target, now), target.url,
                                 str(item.id), event)
            for target, item in zip(targets, claimed, strict=True)))
        await delivery_service.record_outcomes(self.db, list(zip(claimed, outcomes, strict=True)), retry=False)
        return TestSent(business_id, event.event_id, list(zip(targets, outcomes, strict=True)))

    # -- history, deliveries, replay ------------------------------------------------------------

    @staticmethod
    def _businesses(business_id: str | None) -> list[str]:
        who = tenant.require_account()
        return [pick_business(who, business_id)] if business_id else list(who.business_ids)

    async def list_events(self, business_id: str | None, event_type: str | None, since: datetime | None,
                          page: Page) -> Paged:
        query = store.events_of(self._businesses(business_id), event_type, since)
        async with self.db.read() as conn:
            return await fetch_page(conn, query, events.c.occurred_at, events.c.event_id, page)

    async def list_deliveries(self, business_id: str | None, webhook_id: str | None, event_id: str | None,
                              status: str | None, page: Page) -> Paged:
        query = store.deliveries_of(self._businesses(business_id), webhook_id,
                                    require_uuid(event_id, "event_id") if event_id else None,
                                    domain.check_delivery_status(status) if status else None)
        async with self.db.read() as conn:
            return await fetch_page(conn, query, deliveries.c.created_at, deliveries.c.id, page)

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
        async with self.db.transaction() as conn:
            sub = await self._subscription(self.subscriptions_in(conn), business_id, webhook_id)
            if not sub.is_active:
                raise invalid("this webhook is disabled; save its url again to re-enable it first")
            rows = await store.events_to_replay(conn, business_id, event_ids, since, until, list(sub.events),
                                                webhooks.REPLAY_MAX + 1)
            if event_ids and len(rows) < len(set(event_ids)):
                raise not_found("one or more of these events for this business")
            if len(rows) > webhooks.REPLAY_MAX:
                raise invalid(f"at most {webhooks.REPLAY_MAX} events per replay; narrow since/until")
            queued = await store.insert_deliveries(conn, [
                store.delivery_values(sub.id, business_id, r.event_id, r.type, now, replay=True) for r in rows])
        return [str(d.id) for d in queued]
