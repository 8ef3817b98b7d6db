"""The queries on the webhooks schema's tables (schema.py), each taking a connection; the repositories alone
call them."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import retention
from core.columns import Uuid
from core.events import Envelope
from services.webhooks.schema import (
    attempts,
    call_secrets,
    deliveries,
    events,
    subscriptions,
)

# -- subscriptions --------------------------------------------------------------------------

async def subscription_of(conn: AsyncConnection, business_id: str, subscription_id: str, *, lock: bool = False) -> sa.Row[Any] | None:
    query = sa.select(subscriptions).where(subscriptions.c.id == subscription_id,
                                           subscriptions.c.business_id == business_id)
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def subscription_by_url(conn: AsyncConnection, business_id: str, url: str) -> sa.Row[Any] | None:
    """The business's subscription to this URL, locked, or None."""
    return (await conn.execute(sa.select(subscriptions).where(subscriptions.c.business_id == business_id,
                                                              subscriptions.c.url == url).with_for_update())).first()


def subscriptions_query(business_id: str) -> sa.Select[Any]:
    return sa.select(subscriptions).where(subscriptions.c.business_id == business_id)


async def subscriptions_of(conn: AsyncConnection, business_id: str, *, active_only: bool = False) -> list[sa.Row[Any]]:
    query = subscriptions_query(business_id)
    if active_only:
        query = query.where(subscriptions.c.is_active)
    return list((await conn.execute(query.order_by(subscriptions.c.created_at))).all())


async def subscriptions_by_id(conn: AsyncConnection, ids: Iterable[str]) -> dict[str, sa.Row[Any]]:
    return {r.id: r for r in await conn.execute(sa.select(subscriptions).where(subscriptions.c.id.in_(ids)))}


async def insert_subscription(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(subscriptions.insert().values(**values).returning(subscriptions))).one()
    return row


async def update_subscription(conn: AsyncConnection, subscription_id: str,
                              values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(subscriptions.update().where(subscriptions.c.id == subscription_id)
                                                  .values(**values).returning(subscriptions))).first()
    return row


async def delete_subscription(conn: AsyncConnection, subscription_id: str) -> None:
    """Delete it and cancel its pending deliveries."""
    await conn.execute(subscriptions.delete().where(subscriptions.c.id == subscription_id))
    await conn.execute(deliveries.update().where(deliveries.c.subscription_id == subscription_id,
                                                 deliveries.c.status == "pending").values(status="canceled"))


async def active_subscriptions(conn: AsyncConnection, business_ids: Iterable[str]) -> dict[str, list[sa.Row[Any]]]:
    """The active subscriptions of each of these businesses."""
    found: dict[str, list[sa.Row[Any]]] = {}
    for row in await conn.execute(sa.select(subscriptions).where(subscriptions.c.business_id.in_(business_ids),
                                                                 subscriptions.c.is_active)):
        found.setdefault(str(row.business_id), []).append(row)
    return found


async def subscription_succeeded(conn: AsyncConnection, subscription_id: str, now: datetime) -> None:
    """A success ends the failure streak. Skipped while nothing would change but a last_triggered_at under a
    second old: concurrent batches to one subscription would otherwise all queue on its row."""
    s = subscriptions.c
    await conn.execute(subscriptions.update().where(
        s.id == subscription_id,
        sa.or_(s.failure_count != 0, s.failing_since.is_not(None), s.last_triggered_at.is_(None),
               s.last_triggered_at < now - timedelta(seconds=1)))
        .values(last_triggered_at=now, failure_count=0, failing_since=None))


async def subscription_failed(conn: AsyncConnection, subscription_id: str, failures: int,
                              now: datetime) -> sa.Row[Any] | None:
    """Count failures; returns (failing_since, is_active) of the subscription, or None when it is gone."""
    s = subscriptions.c
    return (await conn.execute(subscriptions.update().where(s.id == subscription_id).values(
        failure_count=s.failure_count + failures, last_triggered_at=now,
        failing_since=sa.func.coalesce(s.failing_since, now)).returning(s.failing_since, s.is_active))).first()


async def disable_subscription(conn: AsyncConnection, subscription_id: str, reason: str) -> None:
    await conn.execute(subscriptions.update().where(subscriptions.c.id == subscription_id)
                       .values(is_active=False, disabled_reason=reason))


# -- events -------------------------------------------------------------------------------

async def store_events(conn: AsyncConnection, batch: list[Envelope]) -> None:
    """Keep events in the history (each once)."""
    await conn.execute(insert(events).on_conflict_do_nothing(), [
        dict(event_id=e.event_id, type=e.type, business_id=e.business_id, occurred_at=e.occurred_at, data=e.data)
        for e in batch])


async def events_by_id(conn: AsyncConnection, ids: Iterable[str]) -> dict[str, Envelope]:
    return {str(r.event_id): Envelope(str(r.event_id), r.type, r.occurred_at, r.business_id and str(r.business_id),
                                      r.data)
            for r in await conn.execute(sa.select(events).where(events.c.event_id.in_(ids)))}


def events_of(business_ids: Iterable[str], event_type: str | None, since: datetime | None) -> sa.Select[Any]:
    e = events.c
    query = sa.select(events).where(e.business_id.in_(business_ids))
    if event_type:
        query = query.where(e.type == event_type)
    if since is not None:
        query = query.where(e.occurred_at >= since)
    return query


async def events_to_replay(conn: AsyncConnection, business_id: str, event_ids: list[str], since: datetime | None,
                           until: datetime | None, types: list[str], limit: int) -> list[sa.Row[Any]]:
    """(event_id, type) of the named events, or of those of `types` since/until, oldest first."""
    e = events.c
    query: sa.Select[Any] = sa.select(e.event_id, e.type).where(e.business_id == business_id)
    if event_ids:
        query = query.where(e.event_id.in_(event_ids))
    else:
        query = query.where(e.occurred_at >= since, e.type.in_(types))
        if until is not None:
            query = query.where(e.occurred_at < until)
    return list((await conn.execute(query.order_by(e.occurred_at).limit(limit))).all())


# -- deliveries and attempts ------------------------------------------------------------------

async def insert_deliveries(conn: AsyncConnection, rows: list[dict[str, Any]]) -> list[sa.Row[Any]]:
    """Insert new deliveries and return them in the given order."""
    if not rows:
        return []
    return list((await conn.execute(deliveries.insert().returning(deliveries, sort_by_parameter_order=True),
                                    rows)).all())


async def queue_once(conn: AsyncConnection, rows: list[dict[str, Any]]) -> list[sa.Row[Any]]:
    """Queue first deliveries of events to subscriptions, skipping those that exist (replays aside); returns the
    new ones."""
    if not rows:
        return []
    return list((await conn.execute(insert(deliveries).on_conflict_do_nothing(
        index_elements=["event_id", "subscription_id"], index_where=sa.text("NOT replay")).returning(deliveries),
        rows)).all())


def deliveries_of(business_ids: Iterable[str], webhook_id: str | None, event_id: str | None,
                  status: str | None) -> sa.Select[Any]:
    d = deliveries.c
    query = sa.select(deliveries).where(d.business_id.in_(business_ids))
    if webhook_id:
        query = query.where(d.subscription_id == webhook_id)
    if event_id:
        query = query.where(d.event_id == event_id)
    if status:
        query = query.where(d.status == status)
    return query


async def claim_due(conn: AsyncConnection, batch: int, lease: timedelta) -> list[sa.Row[Any]]:
    """Take up to `batch` due deliveries for `lease` (FOR UPDATE SKIP LOCKED: each goes to one claimer),
    counting the attempt."""
    d = deliveries.c
    due = (sa.select(d.id).where(d.status == "pending", d.next_attempt_at <= sa.func.now())
           .order_by(d.next_attempt_at).limit(batch).with_for_update(skip_locked=True))
    return list((await conn.execute(deliveries.update().where(d.id.in_(due.scalar_subquery())).values(
        attempts=d.attempts + 1, next_attempt_at=sa.func.now() + lease).returning(deliveries))).all())


async def cancel_deliveries(conn: AsyncConnection, ids: list[str]) -> None:
    await conn.execute(deliveries.update().where(deliveries.c.id.in_(ids)).values(status="canceled"))


async def record_attempts(conn: AsyncConnection, rows: list[dict[str, Any]], now: datetime) -> None:
    """Write attempts and move their deliveries on. Each row: delivery, attempt, status (delivered, pending or
    failed), status_code, error, latency_ms and next_attempt_at (for pending)."""
    await conn.execute(attempts.insert(), [
        {"delivery_id": r["delivery"], "attempt": r["attempt"], "status_code": r["status_code"],
         "latency_ms": r["latency_ms"], "error": r["error"], "at": now} for r in rows])
    last: dict[str, Any] = {"last_status_code": sa.bindparam("b_code"), "last_error": sa.bindparam("b_error"),
            "last_latency_ms": sa.bindparam("b_latency")}
    for status in ("delivered", "pending", "failed"):
        batch = [{"b_id": r["delivery"], "b_code": r["status_code"], "b_error": r["error"],
                  "b_latency": r["latency_ms"], **({} if status == "delivered" else {"b_next": r["next_attempt_at"]})}
                 for r in rows if r["status"] == status]
        if not batch:
            continue
        values: dict[str, Any] = {**last, "status": status}
        if status == "delivered":
            values["delivered_at"] = now
        else:
            values["next_attempt_at"] = sa.bindparam("b_next")
        await conn.execute(deliveries.update().where(deliveries.c.id == sa.bindparam("b_id")).values(**values), batch)


# -- per-call webhook secrets -------------------------------------------------------------------

async def call_secret_of(conn: AsyncConnection, business_id: str, *, lock: bool = False) -> sa.Row[Any] | None:
    query = sa.select(call_secrets).where(call_secrets.c.business_id == business_id)
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def call_secrets_of(conn: AsyncConnection, business_ids: Iterable[str]) -> dict[str, sa.Row[Any]]:
    return {str(r.business_id): r for r in await conn.execute(
        sa.select(call_secrets).where(call_secrets.c.business_id.in_(business_ids)))}


async def put_call_secret(conn: AsyncConnection, business_id: str, sealed: str, tail: str, now: datetime,
                          previous_sealed: str | None = None,
                          previous_expires_at: datetime | None = None) -> sa.Row[Any]:
    """Make the business's secret, or replace it keeping the previous one until `previous_expires_at`."""
    values = dict(secret_sealed=sealed, secret_tail=tail, previous_secret_sealed=previous_sealed,
                  previous_secret_expires_at=previous_expires_at, updated_at=now)
    row: sa.Row[Any] = (await conn.execute(insert(call_secrets).values(business_id=business_id, created_at=now, **values)
                                           .on_conflict_do_update(index_elements=["business_id"], set_=values)
                                           .returning(call_secrets))).one()
    return row


async def ensure_call_secret(conn: AsyncConnection, business_id: str, sealed: str, tail: str,
                             now: datetime) -> sa.Row[Any]:
    """The business's secret, made with `sealed` when it has none."""
    await conn.execute(insert(call_secrets).values(business_id=business_id, secret_sealed=sealed, secret_tail=tail,
                                                   created_at=now, updated_at=now).on_conflict_do_nothing())
    row = await call_secret_of(conn, business_id)
    assert row is not None  # made above when it was missing
    return row


async def delete_finished_deliveries(conn: AsyncConnection, cutoff: datetime, limit: int) -> int:
    """Up to `limit` finished deliveries (not pending) created before `cutoff`, claimed with SKIP LOCKED, and their
    attempts; how many deliveries (core.retention: the deliveries_finished index)."""
    due = sa.and_(deliveries.c.status != "pending", deliveries.c.created_at < cutoff)
    gone = (await conn.execute(retention.claimed(deliveries, due, limit).returning(deliveries.c.id))).scalars().all()
    if gone:
        await conn.execute(attempts.delete().where(attempts.c.delivery_id.in_(gone)))
    return len(gone)


# -- a person's erasure (services.webhooks.erasure) ------------------------------------------------

def _naming(text: sa.ColumnElement[Any], needles: Iterable[str]) -> sa.ColumnElement[bool]:
    """Whether `text`, in lower case, contains one of `needles` (lower case): LIKE ANY, the needles escaped."""
    patterns = ["%" + n.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for n in needles]
    return sa.func.lower(text).like(sa.any_(sa.bindparam("needles", patterns, type_=ARRAY(sa.Text))))


async def events_naming(conn: AsyncConnection, business_id: str, needles: list[str], skip_types: Iterable[str],
                        after: str | None, limit: int) -> list[sa.Row[Any]]:
    """Up to `limit` of the business's events (not of `skip_types`) whose data, as JSON text in lower case, contains
    one of `needles`, by event_id after `after`, held for update (the events_business_occurred index finds the
    business's rows; their text is searched)."""
    e = events.c
    query = sa.select(events).where(e.business_id == business_id, e.type.not_in(list(skip_types)),
                                    _naming(sa.cast(e.data, sa.Text), needles))
    if after is not None:
        query = query.where(e.event_id > after)
    return list((await conn.execute(query.order_by(e.event_id).limit(limit).with_for_update())).all())


async def rewrite_events(conn: AsyncConnection, data: dict[str, dict[str, Any]]) -> None:
    """Replace the data of these events (by event_id)."""
    if data:
        await conn.execute(events.update().where(events.c.event_id == sa.bindparam("b_id"))
                           .values(data=sa.bindparam("b_data")),
                           [{"b_id": key, "b_data": value} for key, value in data.items()])


async def deliveries_naming(conn: AsyncConnection, business_id: str, needles: list[str]) -> list[sa.Row[Any]]:
    """The business's deliveries whose target URL or last error contains one of `needles` (lower case), held for
    update."""
    d = deliveries.c
    texts = sa.func.concat_ws(" ", d.target_url, d.last_error)
    return list((await conn.execute(sa.select(deliveries).where(d.business_id == business_id,
                                                                 _naming(texts, needles))
                                    .with_for_update())).all())


async def attempts_naming(conn: AsyncConnection, business_id: str, needles: list[str]) -> list[sa.Row[Any]]:
    """(id, delivery_id, error) of the attempts of the business's deliveries whose error contains one of
    `needles`."""
    a, d = attempts.c, deliveries.c
    query: sa.Select[Any] = sa.select(a.id, a.delivery_id, a.error).join_from(
        attempts, deliveries, d.id == a.delivery_id).where(d.business_id == business_id, a.error.is_not(None),
                                                          _naming(a.error, needles))
    return list((await conn.execute(query)).all())


async def rewrite_delivery_texts(conn: AsyncConnection, deliveries_texts: dict[str, dict[str, str | None]],
                                 attempt_errors: dict[int, str]) -> None:
    """Replace the target URL and last error of these deliveries, and the error of these attempts."""
    if deliveries_texts:
        await conn.execute(deliveries.update().where(deliveries.c.id == sa.bindparam("b_id")).values(
            target_url=sa.bindparam("b_url"), last_error=sa.bindparam("b_error")),
            [{"b_id": key, "b_url": t["target_url"], "b_error": t["last_error"]} for key, t in deliveries_texts.items()])
    if attempt_errors:
        await conn.execute(attempts.update().where(attempts.c.id == sa.bindparam("b_id")).values(
            error=sa.bindparam("b_error")), [{"b_id": key, "b_error": value} for key, value in attempt_errors.items()])


# -- the retention a business set (services.webhooks.data_retention) ---------------------------------------------

async def expired_events(conn: AsyncConnection, business_id: str, before: datetime, limit: int) -> list[str]:
    """Up to `limit` of the business's events that occurred before `before`, oldest first, none with a delivery
    still pending (being sent or waiting for a retry), held for update (SKIP LOCKED: another round's are left to
    it): their ids."""
    e, d = events.c, deliveries.c
    pending = sa.exists().where(d.event_id == e.event_id, d.status == "pending")
    return [str(i) for i in (await conn.execute(sa.select(e.event_id).where(
        e.business_id == business_id, e.occurred_at < before, ~pending).order_by(e.occurred_at, e.event_id)
        .limit(limit).with_for_update(skip_locked=True))).scalars()]


async def delete_events(conn: AsyncConnection, business_id: str, event_ids: list[str]) -> tuple[int, int]:
    """The events deleted with their deliveries and those deliveries' attempts: (events, deliveries) deleted."""
    ids = sa.bindparam("event_ids", event_ids, type_=ARRAY(Uuid))
    gone = (await conn.execute(deliveries.delete().where(
        deliveries.c.business_id == business_id, deliveries.c.event_id == sa.any_(ids))
        .returning(deliveries.c.id))).scalars().all()
    if gone:
        await conn.execute(attempts.delete().where(attempts.c.delivery_id.in_(gone)))
    deleted = await conn.execute(events.delete().where(events.c.business_id == business_id,
                                                       events.c.event_id == sa.any_(ids)))
    return int(deleted.rowcount), len(gone)
