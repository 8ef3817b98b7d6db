"""Webhooks: subscriptions, the test event, secret rotation; durable events, deliveries and replay."""
from __future__ import annotations

from aiohttp import web

from contracts import webhooks
from gateway.convert import to_json
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import (
    BUSINESS,
    CALL_SECRET,
    REPLAY,
    UUID,
    WEBHOOK_ID,
    WEBHOOK_SAVE,
    WEBHOOK_TARGET,
    WEBHOOK_TEST,
)
from gateway.timeparse import set_time
from switchboard.v1 import webhooks_pb2

WEBHOOKS = "switchboard.v1.Webhooks"
V1 = "/api/v1"
ERRORS = ("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found")
SIGNING = ("Deliveries are POSTs of {event_id, event, timestamp, occurred_at, business_id, data} with headers "
           "X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of '<t>.<raw body>' under the webhook secret> "
           "(a second v1 during a rotation overlap), X-Service-Event, X-Service-Event-Id and X-Service-Delivery. "
           "Delivery is at-least-once: dedupe on event_id, order by occurred_at. ")


async def save(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = set_fields(webhooks_pb2.SaveSubscriptionRequest(url=b["webhook_url"], events=b["events"]), b,
                     "business_id", "description")
    reply = await ctx.rpc("webhooks").SaveSubscription(req)
    return web.json_response(to_json(reply, omit=("created",)), status=201 if reply.created else 200)


async def list_webhooks(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.ListSubscriptionsRequest(), ctx.query, "business_id")
    return to_json(await ctx.rpc("webhooks").ListSubscriptions(req))


async def delete(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.DeleteSubscriptionRequest(), ctx.query, "business_id", "id")
    return to_json(await ctx.rpc("webhooks").DeleteSubscription(req))


async def test(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.SendTestRequest(), ctx.body, "business_id", "id")
    return to_json(await ctx.rpc("webhooks").SendTest(req))


async def rotate(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.RotateSecretRequest(), ctx.body, "business_id", "id")
    return to_json(await ctx.rpc("webhooks").RotateSecret(req))


async def get_call_secret(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.CallSecretRequest(), ctx.query, "business_id")
    return to_json(await ctx.rpc("webhooks").GetCallSecret(req), omit=("webhook_secret",))


async def rotate_call_secret(ctx: RequestContext) -> Reply:
    req = set_fields(webhooks_pb2.CallSecretRequest(), ctx.body, "business_id")
    return to_json(await ctx.rpc("webhooks").RotateCallSecret(req))


async def list_events(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(webhooks_pb2.ListEventsRequest(page=ctx.page_request()), q, "business_id", "type")
    if "since" in q:
        set_time(req.since, q["since"], "since")
    reply = await ctx.rpc("webhooks").ListEvents(req)
    return ctx.listing("events", [to_json(e) for e in reply.events], reply.page)


async def list_deliveries(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = set_fields(webhooks_pb2.ListDeliveriesRequest(page=ctx.page_request()), q, "business_id", "webhook_id",
                     "event_id", "status")
    reply = await ctx.rpc("webhooks").ListDeliveries(req)
    return ctx.listing("deliveries", [to_json(d) for d in reply.deliveries], reply.page)


async def replay(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = set_fields(webhooks_pb2.ReplayRequest(webhook_id=b["webhook_id"], event_ids=b.get("event_ids", [])), b,
                     "business_id")
    for field in ("since", "until"):
        if field in b:
            set_time(getattr(req, field), b[field], field)
    return to_json(await ctx.rpc("webhooks").Replay(req))




def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size:g} {unit}"
    return f"{seconds:g} s"


_DELAYS = [_duration(d) for d in webhooks.RETRY_DELAYS]
RETRIES = (f"Retries: a time-out ({_duration(webhooks.DELIVERY_TIMEOUT_SECONDS)}), a refused connection, a redirect or "
           f"a non-2xx answer is retried after {', '.join(_DELAYS[:-1])} and {_DELAYS[-1]} (each +-20%), about a day "
           "in all; then the delivery is failed (replay it with POST /api/v1/events/replay). A subscription failing "
           f"for {_duration(webhooks.DISABLE_AFTER.total_seconds())} without a single success is disabled (is_active "
           "false, disabled_reason says why) and gets no deliveries until it is saved again.")
ROUTES = [
    Route("POST", f"{V1}/webhooks", save, "Create or update a webhook subscription", "webhooks",
          scope="webhooks:write", body=WEBHOOK_SAVE, response="WebhookSaved", status=201,
          creates=Creates("webhook_id", "/webhook/id", carries=("business_id",)), errors=ERRORS,
          rpcs=(f"{WEBHOOKS}/SaveSubscription",),
          description="201 with the signing secret (shown once) for a new URL; posting a URL the business already "
          "has updates that subscription (events, description), re-enables it if it was disabled, and answers 200 "
          "with webhook_secret null. webhook_url must resolve to public addresses only: loopback, private, "
          "link-local and cloud-metadata addresses are refused (the local stack of `make run` accepts loopback "
          "URLs so you can test against your own machine; elsewhere WEBHOOKS_ALLOW_LOOPBACK=true does). " + SIGNING
          + RETRIES),
    Route("GET", f"{V1}/webhooks", list_webhooks, "A business's webhook subscriptions", "webhooks",
          scope="webhooks:read", query={"type": "object", "properties": {"business_id": BUSINESS}},
          response="WebhookList", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{WEBHOOKS}/ListSubscriptions",),
          description="failure_count counts failed attempts since the last success."),
    Route("DELETE", f"{V1}/webhooks", delete, "Remove a webhook subscription", "webhooks", scope="webhooks:write",
          query={"type": "object", "properties": {"business_id": BUSINESS, "id": WEBHOOK_ID}, "required": ["id"]},
          response="WebhookDeleted", errors=ERRORS, rpcs=(f"{WEBHOOKS}/DeleteSubscription",),
          description="Its pending deliveries are canceled."),
    Route("POST", f"{V1}/webhooks/test", test, "Send a signed webhook.test now", "webhooks",
          scope="webhooks:write", body=WEBHOOK_TEST, response="WebhookTestSent", errors=ERRORS,
          rpcs=(f"{WEBHOOKS}/SendTest",),
          description="Signs and sends a synthetic webhook.test to one webhook (id) or every active one of the "
          "business, waits for each receiver and reports {delivered, status_code, latency_ms, error}. Test "
          "deliveries are recorded but not retried."),
    Route("POST", f"{V1}/webhooks/rotate-secret", rotate, "Rotate a webhook's signing secret", "webhooks",
          scope="webhooks:write", body=WEBHOOK_TARGET, response="WebhookSecretRotated", errors=ERRORS,
          rpcs=(f"{WEBHOOKS}/RotateSecret",),
          description="Returns the new secret once. For 24 hours (previous_secret_expires_at) every delivery "
          "carries two v1 signatures, one per secret, so a receiver can switch at any moment in that window "
          "without rejecting an event."),
    Route("GET", f"{V1}/webhooks/call-secret", get_call_secret, "The business's per-call webhook secret (masked)",
          "webhooks", scope="webhooks:read", query={"type": "object", "properties": {"business_id": BUSINESS}},
          response="CallSecretMasked", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{WEBHOOKS}/GetCallSecret",),
          description="A call's own webhook_url (POST /api/v1/calls) receives call.completed or call.failed for "
          "that call, delivered like subscription webhooks (same body, headers, retries) and signed with this "
          "business-wide secret. webhook_secret_masked and created_at are null until the secret exists: make it "
          "with POST, before the first call that has a webhook_url (a delivery made earlier creates one you "
          "can only replace)."),
    Route("POST", f"{V1}/webhooks/call-secret", rotate_call_secret, "Make or replace the per-call webhook secret",
          "webhooks", scope="webhooks:write", body=CALL_SECRET, response="CallSecretShown",
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{WEBHOOKS}/RotateCallSecret",),
          description="Returns the secret once. Replacing it keeps the previous secret signing too for 24 hours "
          "(previous_secret_expires_at): every per-call delivery then carries two v1 signatures."),
    Route("GET", f"{V1}/events", list_events, "The durable event history", "events", scope="events:read",
          query=page_query(50, 100, business_id=UUID, type={"type": "string"},
                           since={"type": "string", "format": "date-time"}),
          response="EventList", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{WEBHOOKS}/ListEvents",),
          description="Every event of the key's businesses, newest first (cursor: after = occurred_at of the "
          "last event), whether or not a webhook wanted it, so a partner that was down can catch up. An event naming a "
          "person the business erased keeps only its ids in data, with \"redacted\": true; a replay sends it so."),
    Route("GET", f"{V1}/webhooks/deliveries", list_deliveries, "Webhook deliveries and their outcome", "events",
          scope="events:read",
          query=page_query(50, 100, business_id=UUID, webhook_id=WEBHOOK_ID, event_id=UUID,
                           status={"type": "string", "enum": ["pending", "delivered", "failed", "canceled"]}),
          response="DeliveryList", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{WEBHOOKS}/ListDeliveries",),
          description="Newest first, with attempts and the last attempt's status code, error and latency."),
    Route("POST", f"{V1}/events/replay", replay, "Replay or backfill stored events to a webhook", "events",
          scope="events:replay", body=REPLAY, response="Replayed", errors=ERRORS,
          rpcs=(f"{WEBHOOKS}/Replay",),
          description="event_ids: send these stored events again (even if delivered before); since/until: "
          "backfill every stored event of the webhook's types in that window (at most 1000 per call). Each "
          "becomes a new delivery with the usual signing and retries."),
]
