"""Where the webhook use cases (service.py, delivery_service.py and the dispatcher) keep their data: repositories bound
to one unit of work's handle, reached through `WebhooksUnit`. They only store and find, returning records
(records.py, core.events.Envelope); the rules stay in domain.py and the use cases.

- `subscriptions`: subscriptions, their failure streaks, and the per-call webhook secrets;
- `events`: the event history and the dispatcher's inbox (each bus event fanned out once), and the events naming
  a person, for their erasure (services.webhooks.erasure);
- `deliveries`: deliveries, their claims (leases) and attempts, and their texts naming a person.

The Sql ones are production's, over store.py; the fast test tier has in-memory twins (tests/memory/webhooks.py),
held to the same behaviour tests (tests/storage_contracts.py). Each method is the statement store.py runs, so a
delivery costs what it did (the cost budgets in tests/guard count them)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.events import Envelope
from core.inbox import first_deliveries
from core.pagination import Page, Paged, fetch_page
from core.records import record
from core.retention import Rule
from core.uow import Unit
from services.webhooks import store
from services.webhooks.records import CallSecret, Delivery, Failing, Subscription
from services.webhooks.schema import deliveries, events, inbox, subscriptions
from services.webhooks.teardown_store import SqlBusinessData


class SubscriptionsRepository(Protocol):
    async def subscription(self, business_id: str, subscription_id: str, *, lock: bool = False) -> Subscription | None:
        """The business's subscription with this id (held for update with `lock`), or None."""

    async def subscription_by_url(self, business_id: str, url: str) -> Subscription | None:
        """The business's subscription to this URL, held for update, or None."""

    async def subscriptions(self, business_id: str, *, active_only: bool = False) -> list[Subscription]:
        """The business's subscriptions (the active ones only, when asked), oldest first."""

    async def page(self, business_id: str, page: Page) -> Paged:
        """A page of the business's subscriptions (`Subscription`s), newest first (a business's export)."""

    async def by_ids(self, subscription_ids: Iterable[str]) -> dict[str, Subscription]:
        """These subscriptions (of any business) by id; the gone ones are missing."""

    async def active_of(self, business_ids: Iterable[str]) -> dict[str, list[Subscription]]:
        """The active subscriptions of each of these businesses (those with none are missing)."""

    async def add_subscription(self, **values: Any) -> Subscription:
        """Record a subscription (schema.subscriptions' columns). One per business and URL."""

    async def change_subscription(self, subscription_id: str, values: dict[str, Any]) -> Subscription | None:
        """The subscription after `values`, or None when there is none."""

    async def remove_subscription(self, subscription_id: str) -> None:
        """Delete it and cancel its pending deliveries."""

    async def succeeded(self, subscription_id: str, now: datetime) -> None:
        """A success ends its failure streak (and sets last_triggered_at; skipped while that changes nothing but a
        last_triggered_at under a second old)."""

    async def failed(self, subscription_id: str, failures: int, now: datetime) -> Failing | None:
        """Count `failures` more (its streak starts now unless it had one); None when it is gone."""

    async def disable(self, subscription_id: str, reason: str) -> None:
        """Turn it off, saying why."""

    async def call_secret(self, business_id: str, *, lock: bool = False) -> CallSecret | None:
        """The business's per-call webhook secret (held for update with `lock`), or None."""

    async def call_secrets(self, business_ids: Iterable[str]) -> dict[str, CallSecret]:
        """The per-call webhook secrets of these businesses (those without one are missing)."""

    async def put_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime,
                              previous_sealed: str | None = None,
                              previous_expires_at: datetime | None = None) -> CallSecret:
        """Make the business's secret, or replace it keeping the previous one until `previous_expires_at`."""

    async def ensure_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime) -> CallSecret:
        """The business's secret, made with `sealed` when it has none."""


class EventsRepository(Protocol):
    async def first_seen(self, consumer: str, event_ids: list[str]) -> set[str]:
        """Of these events, those `consumer` sees for the first time (recorded in its inbox: never again)."""

    async def keep(self, batch: list[Envelope]) -> None:
        """Keep events in the history (each once)."""

    async def by_ids(self, event_ids: Iterable[str]) -> dict[str, Envelope]:
        """These events of the history by id."""

    async def page(self, business_ids: Iterable[str], event_type: str | None, since: datetime | None,
                   page: Page) -> Paged:
        """The businesses' events (of one type, since a time, when given), newest first (rows: Envelope)."""

    async def to_replay(self, business_id: str, event_ids: list[str], since: datetime | None, until: datetime | None,
                        types: list[str], limit: int) -> list[tuple[str, str]]:
        """(event_id, type) of the named events, or of those of `types` since/until, oldest first."""

    async def naming(self, business_id: str, needles: list[str], skip_types: Iterable[str], after: str | None,
                     limit: int) -> list[Envelope]:
        """Up to `limit` of the business's events, not of `skip_types`, whose data (as JSON text, in lower case)
        contains one of `needles` (lower case), by event_id after `after`, held for update (a person's erasure)."""

    async def rewrite(self, data: dict[str, dict[str, Any]]) -> None:
        """Replace the data of these events (by event_id)."""

    async def expired(self, business_id: str, before: datetime, limit: int) -> list[str]:
        """Up to `limit` of the business's events before `before` with no delivery pending, oldest first, held for
        update (the retention a business set): their ids."""

    async def delete(self, business_id: str, event_ids: list[str]) -> tuple[int, int]:
        """The events deleted with their deliveries and attempts: (events, deliveries)."""


class DeliveriesRepository(Protocol):
    async def add(self, rows: list[dict[str, Any]]) -> list[Delivery]:
        """Record deliveries (domain.delivery_values), in the given order."""

    async def queue_once(self, rows: list[dict[str, Any]]) -> list[Delivery]:
        """Record first deliveries of events to subscriptions, skipping those that exist (replays aside); the new
        ones."""

    async def page(self, business_ids: Iterable[str], webhook_id: str | None, event_id: str | None,
                   status: str | None, page: Page) -> Paged:
        """The businesses' deliveries (of one subscription, event or status when given), newest first (rows:
        Delivery)."""

    async def claim_due(self, batch: int, lease: timedelta) -> list[Delivery]:
        """Take up to `batch` due deliveries for `lease` (each goes to one claimer), counting their attempt."""

    async def cancel(self, delivery_ids: list[str]) -> None:
        """Nothing more is sent for these."""

    async def record_attempts(self, rows: list[dict[str, Any]], now: datetime) -> None:
        """Write attempts and move their deliveries on. Each row: delivery, attempt, status (delivered, pending or
        failed), status_code, error, latency_ms and next_attempt_at (for pending)."""

    async def naming(self, business_id: str, needles: list[str]) -> list[Delivery]:
        """The business's deliveries whose target_url or last_error contains one of `needles` (lower case,
        matched in any case), held for update (a person's erasure)."""

    async def attempts_naming(self, business_id: str, needles: list[str]) -> list[tuple[int, str, str]]:
        """(id, delivery id, error) of the attempts of the business's deliveries whose error contains one of
        `needles`."""

    async def rewrite_texts(self, deliveries: dict[str, dict[str, str | None]], attempt_errors: dict[int, str]) -> None:
        """Replace the target_url and last_error of these deliveries (by id), and the error of these attempts."""


def _subscription(row: Any) -> Subscription:
    return record(Subscription, row._mapping)


def _call_secret(row: Any) -> CallSecret:
    return record(CallSecret, row._mapping)


def _delivery(row: Any) -> Delivery:
    return record(Delivery, row._mapping)


class SqlSubscriptions:
    """`SubscriptionsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def subscription(self, business_id: str, subscription_id: str, *, lock: bool = False) -> Subscription | None:
        row = await store.subscription_of(self.conn, business_id, subscription_id, lock=lock)
        return _subscription(row) if row is not None else None

    async def subscription_by_url(self, business_id: str, url: str) -> Subscription | None:
        row = await store.subscription_by_url(self.conn, business_id, url)
        return _subscription(row) if row is not None else None

    async def subscriptions(self, business_id: str, *, active_only: bool = False) -> list[Subscription]:
        return [_subscription(r) for r in await store.subscriptions_of(self.conn, business_id,
                                                                       active_only=active_only)]

    async def page(self, business_id: str, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.subscriptions_query(business_id), subscriptions.c.created_at,
                                 subscriptions.c.id, page)).map(_subscription)

    async def by_ids(self, subscription_ids: Iterable[str]) -> dict[str, Subscription]:
        found = await store.subscriptions_by_id(self.conn, subscription_ids)
        return {key: _subscription(row) for key, row in found.items()}

    async def active_of(self, business_ids: Iterable[str]) -> dict[str, list[Subscription]]:
        found = await store.active_subscriptions(self.conn, business_ids)
        return {key: [_subscription(r) for r in rows] for key, rows in found.items()}

    async def add_subscription(self, **values: Any) -> Subscription:
        return _subscription(await store.insert_subscription(self.conn, **values))

    async def change_subscription(self, subscription_id: str, values: dict[str, Any]) -> Subscription | None:
        row = await store.update_subscription(self.conn, subscription_id, values)
        return _subscription(row) if row is not None else None

    async def remove_subscription(self, subscription_id: str) -> None:
        await store.delete_subscription(self.conn, subscription_id)

    async def succeeded(self, subscription_id: str, now: datetime) -> None:
        await store.subscription_succeeded(self.conn, subscription_id, now)

    async def failed(self, subscription_id: str, failures: int, now: datetime) -> Failing | None:
        row = await store.subscription_failed(self.conn, subscription_id, failures, now)
        return Failing(row.failing_since, row.is_active) if row is not None else None

    async def disable(self, subscription_id: str, reason: str) -> None:
        await store.disable_subscription(self.conn, subscription_id, reason)

    async def call_secret(self, business_id: str, *, lock: bool = False) -> CallSecret | None:
        row = await store.call_secret_of(self.conn, business_id, lock=lock)
        return _call_secret(row) if row is not None else None

    async def call_secrets(self, business_ids: Iterable[str]) -> dict[str, CallSecret]:
        found = await store.call_secrets_of(self.conn, business_ids)
        return {key: _call_secret(row) for key, row in found.items()}

    async def put_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime,
                              previous_sealed: str | None = None,
                              previous_expires_at: datetime | None = None) -> CallSecret:
        return _call_secret(await store.put_call_secret(self.conn, business_id, sealed, tail, now, previous_sealed,
                                                        previous_expires_at))

    async def ensure_call_secret(self, business_id: str, sealed: str, tail: str, now: datetime) -> CallSecret:
        return _call_secret(await store.ensure_call_secret(self.conn, business_id, sealed, tail, now))


class SqlEvents:
    """`EventsRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def first_seen(self, consumer: str, event_ids: list[str]) -> set[str]:
        return await first_deliveries(self.conn, inbox, consumer, event_ids)

    async def keep(self, batch: list[Envelope]) -> None:
        await store.store_events(self.conn, batch)

    async def by_ids(self, event_ids: Iterable[str]) -> dict[str, Envelope]:
        return await store.events_by_id(self.conn, event_ids)

    async def page(self, business_ids: Iterable[str], event_type: str | None, since: datetime | None,
                   page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.events_of(business_ids, event_type, since), events.c.occurred_at,
                                 events.c.event_id, page)
        return paged.map(lambda r: Envelope(str(r.event_id), r.type, r.occurred_at,
                                            r.business_id and str(r.business_id), r.data))

    async def to_replay(self, business_id: str, event_ids: list[str], since: datetime | None, until: datetime | None,
                        types: list[str], limit: int) -> list[tuple[str, str]]:
        rows = await store.events_to_replay(self.conn, business_id, event_ids, since, until, types, limit)
        return [(str(r.event_id), r.type) for r in rows]

    async def naming(self, business_id: str, needles: list[str], skip_types: Iterable[str], after: str | None,
                     limit: int) -> list[Envelope]:
        rows = await store.events_naming(self.conn, business_id, needles, skip_types, after, limit)
        return [Envelope(str(r.event_id), r.type, r.occurred_at, r.business_id and str(r.business_id), r.data)
                for r in rows]

    async def rewrite(self, data: dict[str, dict[str, Any]]) -> None:
        await store.rewrite_events(self.conn, data)

    async def expired(self, business_id: str, before: datetime, limit: int) -> list[str]:
        return await store.expired_events(self.conn, business_id, before, limit)

    async def delete(self, business_id: str, event_ids: list[str]) -> tuple[int, int]:
        return await store.delete_events(self.conn, business_id, event_ids)


class SqlDeliveries:
    """`DeliveriesRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, rows: list[dict[str, Any]]) -> list[Delivery]:
        return [_delivery(r) for r in await store.insert_deliveries(self.conn, rows)]

    async def queue_once(self, rows: list[dict[str, Any]]) -> list[Delivery]:
        return [_delivery(r) for r in await store.queue_once(self.conn, rows)]

    async def page(self, business_ids: Iterable[str], webhook_id: str | None, event_id: str | None,
                   status: str | None, page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.deliveries_of(business_ids, webhook_id, event_id, status),
                                 deliveries.c.created_at, deliveries.c.id, page)
        return paged.map(_delivery)

    async def claim_due(self, batch: int, lease: timedelta) -> list[Delivery]:
        return [_delivery(r) for r in await store.claim_due(self.conn, batch, lease)]

    async def cancel(self, delivery_ids: list[str]) -> None:
        await store.cancel_deliveries(self.conn, delivery_ids)

    async def record_attempts(self, rows: list[dict[str, Any]], now: datetime) -> None:
        await store.record_attempts(self.conn, rows, now)

    async def naming(self, business_id: str, needles: list[str]) -> list[Delivery]:
        return [_delivery(r) for r in await store.deliveries_naming(self.conn, business_id, needles)]

    async def attempts_naming(self, business_id: str, needles: list[str]) -> list[tuple[int, str, str]]:
        return [(r.id, str(r.delivery_id), r.error)
                for r in await store.attempts_naming(self.conn, business_id, needles)]

    async def rewrite_texts(self, deliveries: dict[str, dict[str, str | None]], attempt_errors: dict[int, str]) -> None:
        await store.rewrite_delivery_texts(self.conn, deliveries, attempt_errors)


class WebhooksUnit(Unit):
    """The webhook use cases' unit of work (core.uow.UnitOfWork) on one transaction's or read's handle: their
    subscriptions, events and deliveries (the `*_on` builders make the repositories: the SQL ones, or the fast
    tier's in-memory twins). The service has no outbox: its units raise no events."""

    def __init__(self, handle: Any, subscriptions_on: Callable[[Any], SubscriptionsRepository] = SqlSubscriptions,
                 events_on: Callable[[Any], EventsRepository] = SqlEvents,
                 deliveries_on: Callable[[Any], DeliveriesRepository] = SqlDeliveries):
        super().__init__()
        self.subscriptions = subscriptions_on(handle)
        self.events = events_on(handle)
        self.deliveries = deliveries_on(handle)
        self.business_data = SqlBusinessData(handle)  # a torn-down business's deletion: SQL only


def retention_rules(keep: timedelta) -> list[Rule]:
    """The webhooks' own records past `keep` (core.retention): finished deliveries with their attempts; a pending
    delivery stays whatever its age. The event history (`events`) is the businesses' data, not bounded here."""
    return [Rule("webhooks.deliveries", keep, store.delete_finished_deliveries)]
