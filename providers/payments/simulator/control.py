"""The test control plane under `/_simulator` (the package docstring documents it): injected faults, a log of
recent requests, the events and their delivery attempts, moving a subscription's clock, switching its card,
and a reset. Not part of Stripe's API and not authenticated; errors in Stripe's shape."""
from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import asdict, dataclass, fields

from aiohttp import web

from providers.payments.simulator.billing import Billing, NothingToAdvance
from providers.payments.simulator.errors import INVALID_REQUEST, error_response, fault_response
from providers.payments.simulator.events import Events
from providers.payments.simulator.objects import State, public

PREFIX = "/_simulator"
LOG_SIZE = 500
METHODS = ("*", "GET", "POST", "PUT", "DELETE")


@dataclass
class Fault:
    method: str = "*"
    path: str = "/"
    status: int = 500  # 0: the request is served and its answer held back `delay_seconds`
    times: int | None = 1  # None: until cleared
    delay_seconds: float = 0.0

    def matches(self, request: web.Request) -> bool:
        return (self.times is None or self.times > 0) and self.method in ("*", request.method) \
            and request.path.startswith(self.path)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_fault(body: dict) -> tuple[Fault, list[str]]:
    errors = [f"property {k} should not exist" for k in sorted(set(body) - {f.name for f in fields(Fault)})]
    fault = Fault(**{f.name: body[f.name] for f in fields(Fault) if f.name in body})
    if not isinstance(fault.method, str) or fault.method.upper() not in METHODS:
        errors.append(f"method must be one of {', '.join(METHODS)}")
    else:
        fault.method = fault.method.upper()
    if not isinstance(fault.path, str) or not fault.path.startswith("/"):
        errors.append("path must start with /")
    if not _is_int(fault.status) or not (fault.status == 0 or 400 <= fault.status <= 599):
        errors.append("status must be 0 or 400-599")
    if fault.times is not None and not (_is_int(fault.times) and fault.times >= 1):
        errors.append("times must be a positive integer, or null (until cleared)")
    if not isinstance(fault.delay_seconds, (int, float)) or isinstance(fault.delay_seconds, bool) or \
            not 0 <= fault.delay_seconds <= 300:
        errors.append("delay_seconds must be a number from 0 to 300")
    return fault, errors


async def json_object(request: web.Request) -> dict:
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(text="request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="request body must be a JSON object")
    return body


def refused(errors: list[str] | str, status: int = 400) -> web.Response:
    return error_response(status, INVALID_REQUEST, "; ".join(errors) if isinstance(errors, list) else errors)


def delivery_view(record: dict) -> dict:
    event = record["event"]
    return {"id": event["id"], "type": event["type"], "created": event["created"],
            "object_id": event["data"]["object"].get("id"), "status": record["status"],
            "attempts": [dict(a) for a in record["attempts"]], "next_attempt_in": record["next_attempt_in"],
            "event": event}


class Control:
    def __init__(self, state: State, events: Events, billing: Billing):
        self.state, self.events, self.billing = state, events, billing
        self.faults: list[Fault] = []
        self.log: deque[dict] = deque(maxlen=LOG_SIZE)

    def take_fault(self, request: web.Request) -> Fault | None:
        for fault in self.faults:
            if fault.matches(request):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times == 0:
                        self.faults.remove(fault)
                return fault
        return None

    # -- faults and the request log --------------------------------------------------------------------------

    async def add_fault(self, request: web.Request) -> web.Response:
        fault, errors = parse_fault(await json_object(request))
        if errors:
            return refused(errors)
        self.faults.append(fault)
        return web.json_response({"fault": asdict(fault)}, status=201)

    async def list_faults(self, request: web.Request) -> web.Response:
        return web.json_response([asdict(f) for f in self.faults])

    async def clear_faults(self, request: web.Request) -> web.Response:
        cleared = len(self.faults)
        self.faults.clear()
        return web.json_response({"cleared": cleared})

    async def requests(self, request: web.Request) -> web.Response:
        prefix, method = request.query.get("path", ""), request.query.get("method", "").upper()
        return web.json_response([dict(e) for e in self.log
                                  if e["path"].startswith(prefix) and (not method or e["method"] == method)])

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

    # -- subscriptions ---------------------------------------------------------------------------------------

    def _subscription(self, request: web.Request) -> dict | web.Response:
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
        return web.json_response({"id": sub["id"], "fail": sub["_fails"], "status": sub["status"]})

    async def reset(self, request: web.Request) -> web.Response:
        self.billing.stop()
        self.events.reset()
        self.state.reset()
        self.faults.clear()
        self.log.clear()
        return web.json_response({"reset": True})

    @staticmethod
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post(f"{PREFIX}/faults", self.add_fault)
        router.add_get(f"{PREFIX}/faults", self.list_faults)
        router.add_delete(f"{PREFIX}/faults", self.clear_faults)
        router.add_get(f"{PREFIX}/log", self.requests)
        router.add_get(f"{PREFIX}/events", self.list_events)
        router.add_post(f"{PREFIX}/events/{{id}}/resend", self.resend)
        router.add_post(f"{PREFIX}/subscriptions/{{id}}/advance", self.advance)
        router.add_post(f"{PREFIX}/subscriptions/{{id}}/fail_payments", self.fail_payments)
        router.add_post(f"{PREFIX}/reset", self.reset)
        router.add_get(f"{PREFIX}/health", self.health)

    # -- every other request passes here --------------------------------------------------------------------

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        if request.path == PREFIX or request.path.startswith(PREFIX + "/"):
            try:
                return await handler(request)
            except web.HTTPException as exc:  # the control plane's own refusals, in the same shape
                return refused(exc.text or exc.reason, exc.status)
        entry = {"method": request.method, "path": request.path, "status": None}
        self.log.append(entry)  # at arrival, so attempts that time out at the client are counted at once
        fault = self.take_fault(request)
        if fault is None:
            response = await handler(request)
        elif fault.status:
            await asyncio.sleep(fault.delay_seconds)
            response = fault_response(fault.status)
        else:  # served, then answered late: the work is done even if the client gave up waiting
            response = await handler(request)
            entry["status"] = response.status  # logged now: the server may drop the request once the client leaves
            await asyncio.sleep(fault.delay_seconds)
        entry["status"] = response.status
        return response
