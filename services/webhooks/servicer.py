"""Webhooks gRPC servicer: subscriptions, secrets, the test event, event history, deliveries, replay."""
from __future__ import annotations

import asyncio
import secrets

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core import tenant
from core.errors import invalid, not_found
from core.events import PARTNER_EVENT_TYPES, to_data
from core.grpc_server import Runtime
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.messages import optional, set_timestamp, struct
from core.pagination import clamp_limit, opt_datetime, page_query, split_page
from core.tenant import pick_business
from services.webhooks import delivery as send
from services.webhooks import rules
from services.webhooks.dispatcher import allow_loopback
from services.webhooks.store import deliveries, events, subscriptions
from switchboard.v1 import events_pb2, webhooks_pb2, webhooks_pb2_grpc

EVENTS_PAGE = (50, 100)
DELIVERY_STATUSES = ("pending", "delivered", "failed", "canceled")
REPLAY_MAX = 1000


def subscription_message(row) -> webhooks_pb2.Subscription:
    msg = webhooks_pb2.Subscription(id=row.id, url=row.url, events=list(row.events), is_active=row.is_active,
                                    webhook_secret_masked=f"{rules.SECRET_PREFIX}...{row.secret_tail}",
                                    failure_count=row.failure_count, description=row.description,
                                    disabled_reason=row.disabled_reason)
    set_timestamp(msg, "last_triggered_at", row.last_triggered_at)
    set_timestamp(msg, "created_at", row.created_at)
    return msg


def delivery_message(row) -> webhooks_pb2.Delivery:
    msg = webhooks_pb2.Delivery(id=str(row.id), webhook_id=row.subscription_id or "", event_id=str(row.event_id),
                                event_type=row.event_type, status=row.status, attempts=row.attempts,
                                last_status_code=row.last_status_code, last_error=row.last_error,
                                last_latency_ms=row.last_latency_ms)
    for field in ("next_attempt_at", "delivered_at", "created_at"):
        set_timestamp(msg, field, getattr(row, field))
    return msg


class WebhooksServicer(webhooks_pb2_grpc.WebhooksServicer):
    def __init__(self, runtime: Runtime, sender: send.Sender, allow_loopback_urls: bool):
        self.rt = runtime
        self.engine = runtime.engine
        self.box = rules.SecretBox(runtime.settings.secret_key.reveal())
        self.sender = sender
        self.allow_loopback = allow_loopback_urls

    async def _subscription(self, conn: AsyncConnection, business_id: str, subscription_id: str, *,
                            lock: bool = False):
        query = sa.select(subscriptions).where(subscriptions.c.id == subscription_id,
                                               subscriptions.c.business_id == business_id)
        row = (await conn.execute(query.with_for_update() if lock else query)).first()
        if row is None:
            raise not_found("webhook")
        return row

    # -- subscriptions ----------------------------------------------------------------------

    async def SaveSubscription(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        url = request.url.strip()
        await send.check_destination(url, self.allow_loopback)
        wanted = rules.check_events(list(request.events))
        description = optional(request, "description")
        if description is not None and len(description) > 500:
            raise invalid("description must be at most 500 characters")
        now, secret = utcnow(), None
        s = subscriptions.c
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(subscriptions).where(s.business_id == business_id, s.url == url)
                                      .with_for_update())).first()
            if row is None:
                secret = rules.new_secret()
                row = (await conn.execute(subscriptions.insert().values(
                    id=f"wh_{secrets.token_hex(12)}", business_id=business_id, url=url, events=wanted,
                    description=description, is_active=True, secret_sealed=self.box.seal(secret),
                    secret_tail=secret[-4:], failure_count=0, created_at=now, updated_at=now)
                    .returning(subscriptions))).first()
            else:  # the same URL again: update it, and re-enable it after sustained failure
                row = (await conn.execute(subscriptions.update().where(s.id == row.id).values(
                    events=wanted, description=description if description is not None else row.description,
                    is_active=True, disabled_reason=None, failure_count=0, failing_since=None, updated_at=now)
                    .returning(subscriptions))).first()
        message = ("Webhook created. Store webhook_secret now: it is not shown again." if secret else
                   "Webhook updated and active; its signing secret is unchanged.")
        return webhooks_pb2.SaveSubscriptionReply(business_id=business_id, webhook=subscription_message(row),
                                                  webhook_secret=secret, events=PARTNER_EVENT_TYPES, message=message,
                                                  created=secret is not None)

    async def ListSubscriptions(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(sa.select(subscriptions).where(subscriptions.c.business_id == business_id)
                                       .order_by(subscriptions.c.created_at))).all()
        return webhooks_pb2.ListSubscriptionsReply(business_id=business_id, events=PARTNER_EVENT_TYPES,
                                                   webhooks=[subscription_message(r) for r in rows])

    async def DeleteSubscription(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        async with self.engine.begin() as conn:
            row = await self._subscription(conn, business_id, request.id, lock=True)
            await conn.execute(subscriptions.delete().where(subscriptions.c.id == row.id))
            await conn.execute(deliveries.update().where(deliveries.c.subscription_id == row.id,
                                                         deliveries.c.status == "pending").values(status="canceled"))
        return webhooks_pb2.DeleteSubscriptionReply(success=True, id=row.id)

    async def RotateSecret(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        secret, now = rules.new_secret(), utcnow()
        async with self.engine.begin() as conn:
            row = await self._subscription(conn, business_id, request.id, lock=True)
            await conn.execute(subscriptions.update().where(subscriptions.c.id == row.id).values(
                secret_sealed=self.box.seal(secret), secret_tail=secret[-4:], previous_secret_sealed=row.secret_sealed,
                previous_secret_expires_at=now + rules.ROTATION_OVERLAP, updated_at=now))
        reply = webhooks_pb2.RotateSecretReply(id=row.id, webhook_secret=secret, webhook_secret_masked=rules.mask(secret))
        set_timestamp(reply, "previous_secret_expires_at", now + rules.ROTATION_OVERLAP)
        return reply

    # -- the test event -------------------------------------------------------------------------

    async def SendTest(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        now, event_id = utcnow(), new_id()
        data = to_data(events_pb2.WebhookTest(message="This is a test event from Switchboard.",
                                              sent_at=now.isoformat()))
        async with self.engine.begin() as conn:
            if optional(request, "id"):
                targets = [await self._subscription(conn, business_id, request.id)]
            else:
                targets = (await conn.execute(sa.select(subscriptions).where(
                    subscriptions.c.business_id == business_id, subscriptions.c.is_active))).all()
            if not targets:
                raise not_found("active webhook of this business")
            await conn.execute(events.insert().values(event_id=event_id, type="webhook.test", business_id=business_id,
                                                      occurred_at=now, data=data))
            claimed = (await conn.execute(deliveries.insert().returning(deliveries, sort_by_parameter_order=True), [dict(
                id=new_id(), subscription_id=t.id, business_id=business_id, event_id=event_id,
                event_type="webhook.test", status="pending", attempts=1, next_attempt_at=now + self.rt.settings.webhook_lease,
                replay=False, created_at=now) for t in targets])).all()
        outcomes = await asyncio.gather(*(
            send.post_signed(self.sender, self.box, target, str(item.id), event_id, "webhook.test", now, business_id,
                             data) for target, item in zip(targets, claimed)))
        await send.record(self.engine, list(zip(claimed, outcomes)), retry=False)
        results = [webhooks_pb2.TestResult(webhook_id=t.id, delivered=o.ok, status_code=o.status_code,
                                           latency_ms=o.latency_ms, error=o.error) for t, o in zip(targets, outcomes)]
        return webhooks_pb2.SendTestReply(business_id=business_id, event_id=event_id, results=results)

    # -- history, deliveries, replay ------------------------------------------------------------

    def _businesses(self, request) -> list[str]:
        who = tenant.require_account()
        if optional(request, "business_id"):
            return [pick_business(who, request.business_id)]
        return list(who.business_ids)

    async def ListEvents(self, request, context):
        limit = clamp_limit(request.page.limit, *EVENTS_PAGE)
        e = events.c
        query = sa.select(events).where(e.business_id.in_(self._businesses(request)))
        if optional(request, "type"):
            query = query.where(e.type == request.type)
        if (since := opt_datetime(request, "since")) is not None:
            query = query.where(e.occurred_at >= since)
        query = page_query(query, e.occurred_at, e.event_id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.occurred_at, r.event_id))
        out = []
        for r in rows:
            msg = webhooks_pb2.StoredEvent(event_id=str(r.event_id), type=r.type, business_id=str(r.business_id),
                                           data=struct(r.data))
            set_timestamp(msg, "occurred_at", r.occurred_at)
            out.append(msg)
        return webhooks_pb2.ListEventsReply(events=out, page=page)

    async def ListDeliveries(self, request, context):
        limit = clamp_limit(request.page.limit, *EVENTS_PAGE)
        d = deliveries.c
        query = sa.select(deliveries).where(d.business_id.in_(self._businesses(request)))
        if optional(request, "webhook_id"):
            query = query.where(d.subscription_id == request.webhook_id)
        if optional(request, "event_id"):
            query = query.where(d.event_id == require_uuid(request.event_id, "event_id"))
        if optional(request, "status"):
            if request.status not in DELIVERY_STATUSES:
                raise invalid(f"status must be one of {', '.join(DELIVERY_STATUSES)}")
            query = query.where(d.status == request.status)
        query = page_query(query, d.created_at, d.id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.created_at, r.id))
        return webhooks_pb2.ListDeliveriesReply(deliveries=[delivery_message(r) for r in rows],
                                                page=page)

    async def Replay(self, request, context):
        business_id = pick_business(tenant.require_account(), optional(request, "business_id"))
        since, until = opt_datetime(request, "since"), opt_datetime(request, "until")
        if bool(request.event_ids) == bool(since):
            raise invalid("send event_ids (replay) or since (backfill), not both")
        if any(not is_uuid(i) for i in request.event_ids):
            raise invalid("event_ids must be UUIDs")
        e, now = events.c, utcnow()
        async with self.engine.begin() as conn:
            sub = await self._subscription(conn, business_id, request.webhook_id)
            if not sub.is_active:
                raise invalid("this webhook is disabled; save its url again to re-enable it first")
            query = sa.select(e.event_id, e.type).where(e.business_id == business_id)
            if request.event_ids:
                query = query.where(e.event_id.in_(list(request.event_ids)))
            else:
                query = query.where(e.occurred_at >= since, e.type.in_(list(sub.events)))
                if until is not None:
                    query = query.where(e.occurred_at < until)
            rows = (await conn.execute(query.order_by(e.occurred_at).limit(REPLAY_MAX + 1))).all()
            if request.event_ids and len(rows) < len(set(request.event_ids)):
                raise not_found("one or more of these events for this business")
            if len(rows) > REPLAY_MAX:
                raise invalid(f"at most {REPLAY_MAX} events per replay; narrow since/until")
            ids = [new_id() for _ in rows]
            if rows:
                await conn.execute(deliveries.insert(), [dict(
                    id=i, subscription_id=sub.id, business_id=business_id, event_id=r.event_id, event_type=r.type,
                    status="pending", attempts=0, next_attempt_at=now, replay=True, created_at=now)
                    for i, r in zip(ids, rows)])
        return webhooks_pb2.ReplayReply(queued=len(rows), delivery_ids=ids)


def build(runtime: Runtime) -> WebhooksServicer:
    loopback = allow_loopback(runtime.settings)
    sender = send.Sender(loopback)
    runtime.on_stop.append(sender.close)
    return WebhooksServicer(runtime, sender, loopback)
