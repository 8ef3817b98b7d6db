"""Webhooks gRPC servicer: requests into the webhook use cases (services.webhooks.service), results into
replies."""
from __future__ import annotations

from datetime import timedelta

from core import data_retention, destinations
from core.events import PARTNER_EVENT_TYPES, Envelope
from core.grpc_server import Runtime
from core.ids import require_uuid
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page, opt_datetime
from core.sealing import SecretBox
from core.uow import UnitOfWork
from services.webhooks import domain
from services.webhooks.data_retention import DataRetention
from services.webhooks.delivery import Sender
from services.webhooks.erasure import Erasure, Person
from services.webhooks.export_pages import WebhooksExport
from services.webhooks.records import Delivery, Subscription
from services.webhooks.repository import WebhooksUnit, retention_rules
from services.webhooks.service import CallSecretView, Webhooks
from switchboard.v1 import common_pb2, webhooks_pb2, webhooks_pb2_grpc

EVENTS_PAGE = (50, 100)


def subscription_message(row: Subscription) -> webhooks_pb2.Subscription:
    msg = webhooks_pb2.Subscription(id=row.id, url=row.url, events=list(row.events), is_active=row.is_active,
                                    webhook_secret_masked=f"{domain.SECRET_PREFIX}...{row.secret_tail}",
                                    failure_count=row.failure_count, description=row.description,
                                    disabled_reason=row.disabled_reason)
    set_timestamp(msg, "last_triggered_at", row.last_triggered_at)
    set_timestamp(msg, "created_at", row.created_at)
    return msg


def delivery_message(row: Delivery) -> webhooks_pb2.Delivery:
    msg = webhooks_pb2.Delivery(id=row.id, webhook_id=row.subscription_id or "", event_id=row.event_id,
                                event_type=row.event_type, status=row.status, attempts=row.attempts,
                                last_status_code=row.last_status_code, last_error=row.last_error,
                                last_latency_ms=row.last_latency_ms)
    for field in ("next_attempt_at", "delivered_at", "created_at"):
        set_timestamp(msg, field, getattr(row, field))
    return msg


def event_message(row: Envelope) -> webhooks_pb2.StoredEvent:
    msg = webhooks_pb2.StoredEvent(event_id=row.event_id, type=row.type, business_id=str(row.business_id),
                                   data=struct(row.data))
    set_timestamp(msg, "occurred_at", row.occurred_at)
    return msg


def call_secret_message(view: CallSecretView) -> webhooks_pb2.CallSecret:
    msg = webhooks_pb2.CallSecret(business_id=view.business_id, webhook_secret=view.secret)
    if view.row is not None:
        msg.webhook_secret_masked = f"{domain.SECRET_PREFIX}...{view.row.secret_tail}"
        set_timestamp(msg, "created_at", view.row.created_at)
        set_timestamp(msg, "previous_secret_expires_at", view.row.previous_secret_expires_at)
    return msg


class WebhooksServicer(webhooks_pb2_grpc.WebhooksServicer):
    def __init__(self, webhooks: Webhooks, erasure: Erasure, retention: DataRetention, export: WebhooksExport):
        self.webhooks = webhooks
        self.erasure = erasure
        self.retention = retention
        self.export = export

    async def GetCallSecret(self, request: webhooks_pb2.CallSecretRequest, context: Context) -> webhooks_pb2.CallSecret:
        return call_secret_message(await self.webhooks.call_secret(optional(request, "business_id")))

    async def RotateCallSecret(self, request: webhooks_pb2.CallSecretRequest,
                               context: Context) -> webhooks_pb2.CallSecret:
        return call_secret_message(await self.webhooks.rotate_call_secret(optional(request, "business_id")))

    async def SaveSubscription(self, request: webhooks_pb2.SaveSubscriptionRequest,
                               context: Context) -> webhooks_pb2.SaveSubscriptionReply:
        saved = await self.webhooks.save(optional(request, "business_id"), request.url, list(request.events),
                                         optional(request, "description"))
        message = ("Webhook created. Store webhook_secret now: it is not shown again." if saved.created else
                   "Webhook updated and active; its signing secret is unchanged.")
        return webhooks_pb2.SaveSubscriptionReply(business_id=saved.business_id, webhook=subscription_message(saved.row),
                                                  webhook_secret=saved.secret, events=PARTNER_EVENT_TYPES,
                                                  message=message, created=saved.created)

    async def ListSubscriptions(self, request: webhooks_pb2.ListSubscriptionsRequest,
                                context: Context) -> webhooks_pb2.ListSubscriptionsReply:
        business_id, rows = await self.webhooks.list_subscriptions(optional(request, "business_id"))
        return webhooks_pb2.ListSubscriptionsReply(business_id=business_id, events=PARTNER_EVENT_TYPES,
                                                   webhooks=[subscription_message(r) for r in rows])

    async def DeleteSubscription(self, request: webhooks_pb2.DeleteSubscriptionRequest,
                                 context: Context) -> webhooks_pb2.DeleteSubscriptionReply:
        deleted = await self.webhooks.delete(optional(request, "business_id"), request.id)
        return webhooks_pb2.DeleteSubscriptionReply(success=True, id=deleted)

    async def RotateSecret(self, request: webhooks_pb2.RotateSecretRequest,
                           context: Context) -> webhooks_pb2.RotateSecretReply:
        rotated = await self.webhooks.rotate_secret(optional(request, "business_id"), request.id)
        reply = webhooks_pb2.RotateSecretReply(id=rotated.row.id, webhook_secret=rotated.secret,
                                               webhook_secret_masked=domain.mask(rotated.secret))
        set_timestamp(reply, "previous_secret_expires_at", rotated.previous_expires_at)
        return reply

    async def SendTest(self, request: webhooks_pb2.SendTestRequest, context: Context) -> webhooks_pb2.SendTestReply:
        sent = await self.webhooks.send_test(optional(request, "business_id"), optional(request, "id"))
        return webhooks_pb2.SendTestReply(business_id=sent.business_id, event_id=sent.event_id, results=[
            webhooks_pb2.TestResult(webhook_id=t.id, delivered=o.ok, status_code=o.status_code,
                                    latency_ms=o.latency_ms, error=o.error) for t, o in sent.results])

    async def ListEvents(self, request: webhooks_pb2.ListEventsRequest,
                         context: Context) -> webhooks_pb2.ListEventsReply:
        paged = await self.webhooks.list_events(optional(request, "business_id"), optional(request, "type"),
                                                opt_datetime(request, "since"), Page.of(request.page, *EVENTS_PAGE))
        return webhooks_pb2.ListEventsReply(events=[event_message(r) for r in paged.rows], page=paged.info())

    async def ListDeliveries(self, request: webhooks_pb2.ListDeliveriesRequest,
                             context: Context) -> webhooks_pb2.ListDeliveriesReply:
        paged = await self.webhooks.list_deliveries(
            optional(request, "business_id"), optional(request, "webhook_id"), optional(request, "event_id"),
            optional(request, "status"), Page.of(request.page, *EVENTS_PAGE))
        return webhooks_pb2.ListDeliveriesReply(deliveries=[delivery_message(r) for r in paged.rows],
                                                page=paged.info())

    async def Replay(self, request: webhooks_pb2.ReplayRequest, context: Context) -> webhooks_pb2.ReplayReply:
        ids = await self.webhooks.replay(optional(request, "business_id"), request.webhook_id, list(request.event_ids),
                                         opt_datetime(request, "since"), opt_datetime(request, "until"))
        return webhooks_pb2.ReplayReply(queued=len(ids), delivery_ids=ids)

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        """The privacy job's step (the accounts service alone may ask: core.registry.RPC_CALLERS), for the business
        it names: the person's events redacted, and their deliveries' texts (services.webhooks.erasure); with
        whole_business (a torn-down business's deletion) its history, deliveries and subscriptions deleted."""
        if request.whole_business:
            counts, more = await self.erasure.erase_business(require_uuid(request.business_id, "business_id"))
            return common_pb2.ErasureReport(items=[
                common_pb2.ErasedItem(what=what, action="deleted", count=n) for what, n in counts.items()], more=more)
        person = Person.of(request.phones, request.emails,
                           [*request.lead_ids, *request.call_ids, *request.message_ids])
        erased = await self.erasure.erase(require_uuid(request.business_id, "business_id"), person,
                                          request.erasure_id)
        return common_pb2.ErasureReport(items=[
            common_pb2.ErasedItem(what="webhooks.event", action="redacted", count=erased.events),
            common_pb2.ErasedItem(what="webhooks.delivery", action="redacted", count=erased.deliveries)])

    async def ApplyRetention(self, request: common_pb2.RetentionRequest,
                             context: Context) -> common_pb2.RetentionReport:
        """The retention job's step, for the business it names: its old events deleted with their deliveries
        (services.webhooks.data_retention)."""
        applied = await self.retention.apply(data_retention.asked(request))
        return data_retention.report(applied.items(), applied.more)
    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)


def build(runtime: Runtime) -> WebhooksServicer:
    loopback = destinations.allow_loopback(runtime.settings)
    sender = Sender(loopback)
    runtime.on_stop.append(sender.close)
    box = SecretBox(runtime.settings.webhook_secrets_key.reveal())
    runtime.retain(*retention_rules(timedelta(days=runtime.settings.retention_webhook_deliveries_days)))
    uow = UnitOfWork(runtime.db, WebhooksUnit)
    return WebhooksServicer(Webhooks(uow, box, sender, loopback, runtime.settings.webhook_lease), Erasure(uow),
                            DataRetention(uow), WebhooksExport(uow, subscription_message))
