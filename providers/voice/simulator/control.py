"""The test control plane under `/_simulator`: injected faults and a log of recent requests (the package
docstring documents the API). Not part of the provider's API and not authenticated."""
from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import asdict, dataclass

from aiohttp import web

from providers.voice.simulator.errors import error_response

PREFIX = "/_simulator"
LOG_SIZE = 500
METHODS = ("*", "GET", "POST", "PATCH", "PUT", "DELETE")


@dataclass
class Fault:
    method: str = "*"
    path: str = "/"
    status: int = 500  # 0: only the delay, then the request is served
    times: int = 1
    delay_seconds: float = 0.0

    def matches(self, request: web.Request) -> bool:
        return self.times > 0 and self.method in ("*", request.method) and request.path.startswith(self.path)


def parse_fault(body) -> tuple[Fault | None, list[str]]:
    if not isinstance(body, dict):
        return None, ["body must be an object"]
    fault = Fault(**{k: body[k] for k in ("method", "path", "status", "times", "delay_seconds") if k in body})
    errors = sorted(f"property {k} should not exist" for k in set(body) - set(asdict(fault)))
    if not isinstance(fault.method, str) or fault.method.upper() not in METHODS:
        errors.append(f"method must be one of {', '.join(METHODS)}")
    else:
        fault.method = fault.method.upper()
    if not isinstance(fault.path, str) or not fault.path.startswith("/"):
        errors.append("path must start with /")
    if not isinstance(fault.status, int) or isinstance(fault.status, bool) or \
            not (fault.status == 0 or 400 <= fault.status <= 599):
        errors.append("status must be 0 or 400-599")
    if not isinstance(fault.times, int) or isinstance(fault.times, bool) or fault.times < 1:
        errors.append("times must be a positive integer")
    if not isinstance(fault.delay_seconds, (int, float)) or isinstance(fault.delay_seconds, bool) or \
            not 0 <= fault.delay_seconds <= 300:
        errors.append("delay_seconds must be a number from 0 to 300")
    return fault, errors


class Control:
    def __init__(self):
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
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError:
            return error_response(400, ["request body is not valid JSON"])
        fault, errors = parse_fault(body)
        if errors:
            return error_response(400, errors)
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

    @staticmethod
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post(f"{PREFIX}/faults", self.add_fault)
        router.add_get(f"{PREFIX}/faults", self.list_faults)
        router.add_delete(f"{PREFIX}/faults", self.clear_faults)
        router.add_get(f"{PREFIX}/requests", self.requests)
        router.add_get(f"{PREFIX}/health", self.health)

    # -- every provider request passes here -------------------------------------------------------------

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        if request.path == PREFIX or request.path.startswith(PREFIX + "/"):
            return await handler(request)
        entry = {"method": request.method, "path": request.path, "status": None}
        self.log.append(entry)  # at arrival, so attempts that time out at the client are counted at once
        fault = self.take_fault(request)
        if fault is not None and fault.delay_seconds:
            await asyncio.sleep(fault.delay_seconds)
        if fault is not None and fault.status:
            response = error_response(fault.status, "Injected fault")
        else:
            response = await handler(request)
        entry["status"] = response.status
        return response
