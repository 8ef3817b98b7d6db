"""The test control plane under `/_simulator`: injected faults, a log of recent API requests and scripts for the
next messages' status callbacks (the package docstring documents the API). Not part of Twilio's API and not
authenticated."""
from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import asdict, dataclass, fields

from aiohttp import web

from providers.messaging.simulator.delivery import CallbackScript, Delivery
from providers.messaging.simulator.errors import FAULT_CODES, error_response

PREFIX = "/_simulator"
LOG_SIZE = 500
METHODS = ("*", "GET", "POST", "PUT", "DELETE")


@dataclass
class Fault:
    method: str = "*"
    path: str = "/"
    status: int = 500  # 0: the request is served and its answer held back `delay_seconds`
    times: int = 1
    delay_seconds: float = 0.0

    def matches(self, request: web.Request) -> bool:
        return self.times > 0 and self.method in ("*", request.method) and request.path.startswith(self.path)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_fault(body: dict) -> tuple[Fault | None, list[str]]:
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
    if not _is_int(fault.times) or fault.times < 1:
        errors.append("times must be a positive integer")
    if not isinstance(fault.delay_seconds, (int, float)) or isinstance(fault.delay_seconds, bool) or \
            not 0 <= fault.delay_seconds <= 300:
        errors.append("delay_seconds must be a number from 0 to 300")
    return fault, errors


def parse_script(body: dict) -> tuple[CallbackScript, list[str]]:
    names = {f.name for f in fields(CallbackScript)}
    errors = [f"property {k} should not exist" for k in sorted(set(body) - names)]
    errors += [f"{k} must be a boolean" for k in ("reorder", "duplicate", "bad_signature")
               if k in body and not isinstance(body[k], bool)]
    if "times" in body and not (_is_int(body["times"]) and body["times"] >= 1):
        errors.append("times must be a positive integer")
    return CallbackScript(**{k: body[k] for k in names if k in body}), errors


async def json_object(request: web.Request) -> dict:
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(text="request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="request body must be a JSON object")
    return body


def refused(errors: list[str] | str) -> web.Response:
    return error_response(400, None, "; ".join(errors) if isinstance(errors, list) else errors)


class Control:
    def __init__(self, delivery: Delivery):
        self.delivery = delivery
        self.faults: list[Fault] = []
        self.log: deque[dict] = deque(maxlen=LOG_SIZE)

    def take_fault(self, request: web.Request) -> Fault | None:
        for fault in self.faults:
            if fault.matches(request):
                fault.times -= 1
                if fault.times == 0:
                    self.faults.remove(fault)
                return fault
        return None

    # -- routes ---------------------------------------------------------------------------------------------

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

    async def add_script(self, request: web.Request) -> web.Response:
        script, errors = parse_script(await json_object(request))
        if errors:
            return refused(errors)
        self.delivery.scripts.append(script)
        return web.json_response({"callbacks": asdict(script)}, status=201)

    async def clear_scripts(self, request: web.Request) -> web.Response:
        cleared = len(self.delivery.scripts)
        self.delivery.scripts.clear()
        return web.json_response({"cleared": cleared})

    @staticmethod
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post(f"{PREFIX}/faults", self.add_fault)
        router.add_get(f"{PREFIX}/faults", self.list_faults)
        router.add_delete(f"{PREFIX}/faults", self.clear_faults)
        router.add_get(f"{PREFIX}/log", self.requests)
        router.add_post(f"{PREFIX}/callbacks", self.add_script)
        router.add_delete(f"{PREFIX}/callbacks", self.clear_scripts)
        router.add_get(f"{PREFIX}/health", self.health)

    # -- every API request passes here ----------------------------------------------------------------------

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        if request.path == PREFIX or request.path.startswith(PREFIX + "/"):
            try:
                return await handler(request)
            except web.HTTPException as exc:  # the control plane's own refusals, in the same shape
                return error_response(exc.status, None, exc.text or exc.reason)
        entry = {"method": request.method, "path": request.path, "status": None}
        self.log.append(entry)  # at arrival, so attempts that time out at the client are counted at once
        fault = self.take_fault(request)
        if fault is None:
            response = await handler(request)
        elif fault.status:
            await asyncio.sleep(fault.delay_seconds)
            response = error_response(fault.status, FAULT_CODES.get(fault.status), "Injected fault")
        else:  # served, then answered late: the work is done even if the client gave up waiting
            response = await handler(request)
            await asyncio.sleep(fault.delay_seconds)
        entry["status"] = response.status
        return response
