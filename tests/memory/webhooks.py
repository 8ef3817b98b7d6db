"""services.webhooks.repository's repositories in memory, on a MemoryDatabase's handle: subscriptions and call
secrets, the event history with the dispatcher's inbox, and deliveries with their attempts. `MemoryWebhooksUnit`
is the service's unit on them. A claim's time is the process's clock (the database's, in SQL)."""
from __future__ import annotations

import json
from datetime import timedelta

from core.events import Envelope
from core.ids import utcnow
from core.pagination import Paged
from core.records import record
from services.webhooks.records import CallSecret, Delivery, Failing, Subscription
from services.webhooks.repository import WebhooksUnit
from services.webhooks.schema import attempts, call_secrets, deliveries, events, inbox, subscriptions
from tests.memory import MemoryConnection, insert, page_of, update


class MemorySubscriptions:
    def __init__(self, conn: MemoryConnection):
        self.subscription_rows = conn.rows(subscriptions)
        self.secret_rows = conn.rows(call_secrets)
        self.delivery_rows = conn.rows(deliveries)

    async def subscription(self, business_id, subscription_id, *, lock=False):
        row = self.subscription_rows.get((subscription_id,))
        return record(Subscription, row) if row is not None and row["business_id"] == business_id else None

    async def subscription_by_url(self, business_id, url):
        return next((record(Subscription, row) for row in self.subscription_rows.values()
                     if (row["business_id"], row["url"]) == (business_id, url)), None)

    async def subscriptions(self, business_id, *, active_only=False):
        return [record(Subscription, row)
                for row in sorted(self.subscription_rows.values(), key=lambda row: row["created_at"])
                if row["business_id"] == business_id and (row["is_active"] or not active_only)]

    async def by_ids(self, subscription_ids):
        return {key: record(Subscription, self.subscription_rows[(key,)]) for key in subscription_ids
                if (key,) in self.subscription_rows}

    async def active_of(self, business_ids):
        found: dict[str, list[Subscription]] = {}
        for row in self.subscription_rows.values():
            if row["business_id"] in business_ids and row["is_active"]:
                found.setdefault(row["business_id"], []).append(record(Subscription, row))
        return found

    async def add_subscription(self, **values):
        return record(Subscription, insert(self.subscription_rows, subscriptions, values))

    async def change_subscription(self, subscription_id, values):
        row = self.subscription_rows.get((subscription_id,))
        return record(Subscription, update(subscriptions, row, values)._mapping) if row is not None else None

    async def remove_subscription(self, subscription_id) -> None:
        self.subscription_rows.pop((subscription_id,), None)
        for row in self.delivery_rows.values():
            if row["subscription_id"] == subscription_id and row["status"] == "pending":
                row["status"] = "canceled"

    async def succeeded(self, subscription_id, now) -> None:
        row = self.subscription_rows.get((subscription_id,))
        if row is not None and (row["failure_count"] or row["failing_since"] or row["last_triggered_at"] is None
                                or row["last_triggered_at"] < now - timedelta(seconds=1)):
            update(subscriptions, row, {"last_triggered_at": now, "failure_count": 0, "failing_since": None})

    async def failed(self, subscription_id, failures, now):
        row = self.subscription_rows.get((subscription_id,))
        if row is None:
            return None
        update(subscriptions, row, {"failure_count": row["failure_count"] + failures, "last_triggered_at": now,
                                    "failing_since": row["failing_since"] or now})
        return Failing(row["failing_since"], row["is_active"])

    async def disable(self, subscription_id, reason) -> None:
        row = self.subscription_rows.get((subscription_id,))
        if row is not None:
            update(subscriptions, row, {"is_active": False, "disabled_reason": reason})

    async def call_secret(self, business_id, *, lock=False):
        row = self.secret_rows.get((business_id,))
        return record(CallSecret, row) if row is not None else None

    async def call_secrets(self, business_ids):
        return {key: record(CallSecret, self.secret_rows[(key,)]) for key in business_ids
                if (key,) in self.secret_rows}

    async def put_call_secret(self, business_id, sealed, tail, now, previous_sealed=None, previous_expires_at=None):
        values = {"secret_sealed": sealed, "secret_tail": tail, "previous_secret_sealed": previous_sealed,
                  "previous_secret_expires_at": previous_expires_at, "updated_at": now}
        row = self.secret_rows.get((business_id,))
        if row is not None:
            return record(CallSecret, update(call_secrets, row, values)._mapping)
        return record(CallSecret, insert(self.secret_rows, call_secrets,
                                         {"business_id": business_id, "created_at": now, **values}))

    async def ensure_call_secret(self, business_id, sealed, tail, now):
        if (business_id,) not in self.secret_rows:
            insert(self.secret_rows, call_secrets, {"business_id": business_id, "secret_sealed": sealed,
                                                    "secret_tail": tail, "created_at": now, "updated_at": now})
        return record(CallSecret, self.secret_rows[(business_id,)])


def _envelope(row) -> Envelope:
    return Envelope(row["event_id"], row["type"], row["occurred_at"], row["business_id"], row["data"])


class MemoryEvents:
    def __init__(self, conn: MemoryConnection):
        self.event_rows = conn.rows(events)
        self.inbox_rows = conn.rows(inbox)

    async def first_seen(self, consumer, event_ids):
        fresh = {event_id for event_id in event_ids if (consumer, event_id) not in self.inbox_rows}
        for event_id in fresh:
            insert(self.inbox_rows, inbox, {"consumer": consumer, "event_id": event_id, "processed_at": utcnow()})
        return fresh

    async def keep(self, batch) -> None:
        for event in batch:
            if (event.event_id,) not in self.event_rows:
                insert(self.event_rows, events, {"event_id": event.event_id, "type": event.type,
                                                 "business_id": event.business_id,
                                                 "occurred_at": event.occurred_at, "data": event.data})

    async def by_ids(self, event_ids):
        return {key: _envelope(self.event_rows[(key,)]) for key in event_ids if (key,) in self.event_rows}

    async def page(self, business_ids, event_type, since, page) -> Paged:
        paged = page_of([row for row in self.event_rows.values() if row["business_id"] in business_ids
                         and event_type in (None, row["type"]) and (since is None or row["occurred_at"] >= since)],
                        events.c.occurred_at, events.c.event_id, page)
        return paged.map(lambda r: _envelope(r._mapping))

    async def to_replay(self, business_id, event_ids, since, until, types, limit):
        chosen = [row for row in self.event_rows.values() if row["business_id"] == business_id and (
            row["event_id"] in event_ids if event_ids else
            row["occurred_at"] >= since and row["type"] in types and (until is None or row["occurred_at"] < until))]
        return [(row["event_id"], row["type"]) for row in sorted(chosen, key=lambda r: r["occurred_at"])][:limit]

    async def naming(self, business_id, needles, skip_types, after, limit):
        chosen = [row for row in self.event_rows.values() if row["business_id"] == business_id
                  and row["type"] not in skip_types and (after is None or row["event_id"] > after)
                  and _names(json.dumps(row["data"], ensure_ascii=False), needles)]
        return [_envelope(row) for row in sorted(chosen, key=lambda r: r["event_id"])[:limit]]

    async def rewrite(self, data) -> None:
        for event_id, value in data.items():
            update(events, self.event_rows[(event_id,)], {"data": value})


class MemoryDeliveries:
    def __init__(self, conn: MemoryConnection):
        self.delivery_rows = conn.rows(deliveries)
        self.attempt_rows = conn.rows(attempts)

    async def add(self, rows):
        return [record(Delivery, insert(self.delivery_rows, deliveries, values)) for values in rows]

    async def queue_once(self, rows):
        queued = []
        for values in rows:
            if values["subscription_id"] is not None and any(
                    not row["replay"] and (row["event_id"], row["subscription_id"]) == (
                        values["event_id"], values["subscription_id"]) for row in self.delivery_rows.values()):
                continue  # deliveries_once: one first delivery of an event to a subscription
            queued.append(record(Delivery, insert(self.delivery_rows, deliveries, values)))
        return queued

    async def page(self, business_ids, webhook_id, event_id, status, page) -> Paged:
        paged = page_of([row for row in self.delivery_rows.values() if row["business_id"] in business_ids
                         and webhook_id in (None, row["subscription_id"]) and event_id in (None, row["event_id"])
                         and status in (None, row["status"])], deliveries.c.created_at, deliveries.c.id, page)
        return paged.map(lambda r: record(Delivery, r._mapping))

    async def claim_due(self, batch, lease):
        now = utcnow()
        due = sorted((row for row in self.delivery_rows.values()
                      if row["status"] == "pending" and row["next_attempt_at"] <= now),
                     key=lambda row: row["next_attempt_at"])[:batch]
        return [record(Delivery, update(deliveries, row, {"attempts": row["attempts"] + 1,
                                                          "next_attempt_at": now + lease})._mapping)
                for row in due]

    async def cancel(self, delivery_ids) -> None:
        for delivery_id in delivery_ids:
            update(deliveries, self.delivery_rows[(delivery_id,)], {"status": "canceled"})

    async def record_attempts(self, rows, now) -> None:
        for r in rows:
            insert(self.attempt_rows, attempts, {
                "id": len(self.attempt_rows) + 1, "delivery_id": r["delivery"], "attempt": r["attempt"],
                "status_code": r["status_code"], "latency_ms": r["latency_ms"], "error": r["error"], "at": now})
            moved = {"status": r["status"], "last_status_code": r["status_code"], "last_error": r["error"],
                     "last_latency_ms": r["latency_ms"]}
            moved.update({"delivered_at": now} if r["status"] == "delivered" else
                         {"next_attempt_at": r["next_attempt_at"]})
            row = self.delivery_rows.get((r["delivery"],))
            if row is not None:
                update(deliveries, row, moved)


    async def naming(self, business_id, needles):
        return [record(Delivery, row) for row in self.delivery_rows.values() if row["business_id"] == business_id
                and _names(" ".join(t for t in (row["target_url"], row["last_error"]) if t), needles)]

    async def attempts_naming(self, business_id, needles):
        return [(row["id"], row["delivery_id"], row["error"]) for row in self.attempt_rows.values()
                if row["error"] and _names(row["error"], needles)
                and self.delivery_rows[(row["delivery_id"],)]["business_id"] == business_id]

    async def rewrite_texts(self, deliveries_texts, attempt_errors) -> None:
        for delivery_id, texts in deliveries_texts.items():
            update(deliveries, self.delivery_rows[(delivery_id,)], texts)
        for row in self.attempt_rows.values():
            if row["id"] in attempt_errors:
                update(attempts, row, {"error": attempt_errors[row["id"]]})


def _names(text: str, needles) -> bool:
    """The SQL's search: the text, in lower case, contains one of the needles."""
    return any(n in text.lower() for n in needles)


class MemoryWebhooksUnit(WebhooksUnit):
    """The webhooks unit of work on the in-memory repositories."""

    def __init__(self, handle: MemoryConnection):
        super().__init__(handle, MemorySubscriptions, MemoryEvents, MemoryDeliveries)
