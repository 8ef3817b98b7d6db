"""The test control plane under `/_simulator` (the package docstring documents it): the shared faults and request
log (`providers.simulator_control`; a fault may name Stripe's error `code`), the events and their delivery
attempts (held back and released out of order), the account's settings (dunning, delivery), moving a
subscription's clock, switching its card, and a reset. Not part of Stripe's API and not authenticated; errors in
Stripe's shape."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from providers.payments.simulator.billing import Billing, NothingToAdvance
from providers.payments.simulator.errors import INVALID_REQUEST, error_response, fault_response
from providers.payments.simulator.events import DELIVERIES, RELEASE_ORDERS, Events
from providers.payments.simulator.objects import State, public
from providers.simulator_control import ControlPlane, Fault, FaultRules, joined, json_object

FAULT_FIELDS = ("method", "path", "status", "times", "delay_seconds", "hold", "code")


def refused(errors: list[str] | str, status: int = 400) -> web.Response:
    return error_response(status, INVALID_REQUEST, joined(errors))


def delivery_view(record: dict[str, Any]) -> dict[str, Any]:
    event = record["event"]
    return {"id": event["id"], "type": event["type"], "created": event["created"],
            "object_id": event["data"]["object"].get("id"), "status": record["status"],
            "attempts": [dict(a) for a in record["attempts"]], "next_attempt_in": record["next_attempt_in"],
            "event": event}


class Control(ControlPlane):
    """A fault may stay until cleared (`times` null: an outage); a delay-only fault serves the request and holds
    its answer back, so the package's retry of a POST that timed out finds the first one done."""

    def __init__(self, state: State, events: Events, billing: Billing):
        super().__init__(refused, fault_response, rules=FaultRules(fields=FAULT_FIELDS, until_cleared=True),
                         hold_back=True)
        self.state, self.events, self.billing = state, events, billing
        self.initial = (billing.dunning, events.delivery)

    def failure(self, fault: Fault) -> web.Response:
        return fault_response(fault.status, fault.code)

    # -- the account's settings ------------------------------------------------------------------------------

    def settings_view(self) -> dict[str, Any]:
        return {**self.billing.dunning.view(), "delivery": self.events.delivery}

    async def settings(self, request: web.Request) -> web.Response:
        return web.json_response(self.settings_view())

    async def change_settings(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - {"retries", "final_action",
                                                                               "delivery"})]
        dunning, problems = self.billing.dunning.updated(body)
        errors += problems
        if "delivery" in body and body["delivery"] not in DELIVERIES:
            errors.append(f"delivery must be one of {', '.join(DELIVERIES)}")
        if errors:
            return refused(errors)
        self.billing.dunning = dunning
        self.events.delivery = body.get("delivery", self.events.delivery)
        return web.json_response(self.settings_view())

    # -- events ----------------------------------------------------------------------------------------------

    async def list_events(self, request: web.Request) -> web.Response:
        return web.json_response([delivery_view(r) for r in self.events.list(request.query.get("type") or None)])

    async def resend(self, request: web.Request) -> web.Response:
        record = self.events.by_id.get(request.match_info["id"])
        if record is None:
            return refused(f"No such event: '{request.match_info['id']}'", 404)
        if not self.events.webhook_url:
            return refused("no webhook URL: start the simulator with --webhook-url (PAYMENTS_WEBHOOK_URL)")
        await self.events.attempt(record, manual=True)
        return web.json_response(delivery_view(record))

    async def hold(self, request: web.Request) -> web.Response:
        self.events.hold()
        return web.json_response({"holding": True, "held": len(self.events.held)})

    async def release(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        order = body.get("order", "created")
        if set(body) - {"order"} or order not in RELEASE_ORDERS:
            return refused(f"the body must be {{\"order\": {' | '.join(map(repr, RELEASE_ORDERS))}}}")
        return web.json_response({"released": self.events.release(order)})

    # -- subscriptions ---------------------------------------------------------------------------------------

    def _subscription(self, request: web.Request) -> dict[str, Any] | web.Response:
        sub = self.state.subscriptions.get(request.match_info["id"])
        return sub if sub is not None else refused(f"No such subscription: '{request.match_info['id']}'", 404)

    async def advance(self, request: web.Request) -> web.Response:
        sub = self._subscription(request)
        if isinstance(sub, web.Response):
            return sub
        try:
            moment, made = self.billing.advance(sub)
        except NothingToAdvance as exc:
            return refused(str(exc), 409)
        return web.json_response({"moment": moment, "events": made, "subscription": public(sub)})

    async def fail_payments(self, request: web.Request) -> web.Response:
        sub = self._subscription(request)
        if isinstance(sub, web.Response):
            return sub
        body = await json_object(request)
        if set(body) != {"fail"} or not isinstance(body["fail"], bool):
            return refused("the body must be {\"fail\": true|false}")
        self.billing.set_failing(sub, body["fail"])
        return web.json_response({"id": sub["id"], "fail": self.billing.charge(sub) is not None,
                                  "status": sub["status"]})

    async def trial_will_end(self, request: web.Request) -> web.Response:
        sub = self._subscription(request)
        if isinstance(sub, web.Response):
            return sub
        if sub["status"] != "trialing":
            return refused(f"subscription {sub['id']} is {sub['status']}, not in a trial", 409)
        return web.json_response(self.billing.trial_will_end(sub))

    async def reset(self, request: web.Request) -> web.Response:
        """Forgets every object, event, held delivery, fault, idempotency key and logged request; the prices
        made through the API (the configured ones stay) and the settings go back to the start's."""
        self.billing.stop()
        self.billing.dunning = self.initial[0]
        self.events.delivery = self.initial[1]
        self.events.reset()
        self.state.reset()
        self.faults.clear()
        if self.log is not None:
            self.log.entries.clear()
        return web.json_response({"reset": True})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        super().add_routes(router)
        router.add_get(f"{self.prefix}/events", self.list_events)
        router.add_post(f"{self.prefix}/events/hold", self.hold)
        router.add_post(f"{self.prefix}/events/release", self.release)
        router.add_post(f"{self.prefix}/events/{{id}}/resend", self.resend)
        router.add_get(f"{self.prefix}/settings", self.settings)
        router.add_post(f"{self.prefix}/settings", self.change_settings)
        router.add_post(f"{self.prefix}/subscriptions/{{id}}/advance", self.advance)
        router.add_post(f"{self.prefix}/subscriptions/{{id}}/fail_payments", self.fail_payments)
        router.add_post(f"{self.prefix}/subscriptions/{{id}}/trial_will_end", self.trial_will_end)
        router.add_post(f"{self.prefix}/reset", self.reset)
