"""The webhooks page of one business: its subscriptions (create one, its secret shown once; send the test event; rotate
the secret, the new one shown once) and the latest deliveries with their outcome. Every action is the RPC the
`/api/v1/webhooks` routes make, as the signed-in owner."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from typing import Any

from aiohttp import web
from google.protobuf.message import Message

from core.events import PARTNER_EVENT_TYPES
from core.rpc import AsCaller
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import WEBHOOKS_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import common_pb2, webhooks_pb2

DELIVERIES_SHOWN = 20


def _when(message: Message, field: str) -> str | None:
    return f"{getattr(message, field).ToDatetime(tzinfo=UTC):%Y-%m-%d %H:%M:%S} UTC" if message.HasField(field) else None


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, secret: dict[str, Any] | None = None, error: str | None = None) -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    hooks = deps(request).clients["webhooks"].as_caller(principal.tenant)
    subscriptions = await hooks.ListSubscriptions(webhooks_pb2.ListSubscriptionsRequest(business_id=business_id))
    deliveries = await hooks.ListDeliveries(webhooks_pb2.ListDeliveriesRequest(
        business_id=business_id, page=common_pb2.PageRequest(limit=DELIVERIES_SHOWN)))
    return page("webhooks.html", status, title="Webhooks", active="webhooks", form_token=form_token(session),
                businesses=businesses, business_id=business_id, events=PARTNER_EVENT_TYPES, notice=notice,
                secret=secret, error=error,
                webhooks=[{"id": w.id, "url": w.url, "events": list(w.events), "active": w.is_active,
                           "description": w.description if w.HasField("description") else "",
                           "secret_masked": w.webhook_secret_masked, "failures": w.failure_count,
                           "disabled_reason": w.disabled_reason if w.HasField("disabled_reason") else None}
                          for w in subscriptions.webhooks],
                deliveries=[{"event_type": d.event_type, "status": d.status, "attempts": d.attempts,
                             "code": d.last_status_code if d.HasField("last_status_code") else None,
                             "error": d.last_error if d.HasField("last_error") else None,
                             "created": _when(d, "created_at"), "delivered": _when(d, "delivered_at")}
                            for d in deliveries.deliveries])


async def webhooks(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""))


async def _act(request: web.Request, undone: str,
               act: Callable[[AsCaller, Form], Awaitable[dict[str, Any]]]) -> web.StreamResponse:
    """A form's action: `act(client, form)` gives what the page says after it (keywords of `_render`)."""
    async def acting(principal: Principal, form: Form) -> dict[str, Any]:
        return await act(deps(request).clients["webhooks"].as_caller(principal.tenant), form)
    return await pages.business_form(request, _render, undone, acting)


async def create(request: web.Request) -> web.StreamResponse:
    async def act(hooks: AsCaller, form: Form) -> dict[str, Any]:
        description = str(form.get("description", "")).strip()
        reply = await hooks.SaveSubscription(webhooks_pb2.SaveSubscriptionRequest(
            business_id=str(form.get("business_id", "")), url=str(form.get("url", "")),
            events=[str(e) for e in form.getall("events", [])], **({"description": description} if description else {})))
        return {"secret": {"url": reply.webhook.url, "value": reply.webhook_secret}} if reply.created else \
            {"notice": f"Updated the subscription of {reply.webhook.url}."}
    return await _act(request, "saved", act)


async def send_test(request: web.Request) -> web.StreamResponse:
    async def act(hooks: AsCaller, form: Form) -> dict[str, Any]:
        reply = await hooks.SendTest(webhooks_pb2.SendTestRequest(business_id=str(form.get("business_id", "")),
                                                                  id=str(form.get("id", ""))))
        said = [f"delivered (HTTP {r.status_code}, {r.latency_ms} ms)" if r.delivered else
                f"not delivered: {r.error or f'HTTP {r.status_code}'}" for r in reply.results]
        return {"notice": f"Test event {reply.event_id}: " + "; ".join(said or ["no active subscription"]) + "."}
    return await _act(request, "sent", act)


async def rotate(request: web.Request) -> web.StreamResponse:
    async def act(hooks: AsCaller, form: Form) -> dict[str, Any]:
        reply = await hooks.RotateSecret(webhooks_pb2.RotateSecretRequest(business_id=str(form.get("business_id", "")),
                                                                          id=str(form.get("id", ""))))
        return {"secret": {"value": reply.webhook_secret, "url": "",
                           "until": _when(reply, "previous_secret_expires_at")}}
    return await _act(request, "rotated", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(WEBHOOKS_PATH, webhooks)
    app.router.add_post(WEBHOOKS_PATH, same_site_form(create))
    app.router.add_post(f"{WEBHOOKS_PATH}/test", same_site_form(send_test))
    app.router.add_post(f"{WEBHOOKS_PATH}/rotate", same_site_form(rotate))
