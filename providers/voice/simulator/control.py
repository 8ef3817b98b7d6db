"""The test control plane: injected faults and a log of recent requests (see the package docstring)."""
from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from aiohttp import web

PREFIX = "/_simulator"


@dataclass
class Fault:
    method: str
    path: str
    status: int
    times: int
    delay_seconds: float = 0.0

    def matches(self, request: web.Request) -> bool:
        return self.times > 0 and self.method in ("*", request.method) and request.path.startswith(self.path)


class Control:
    def __init__(self):
        self.faults: list[Fault] = []
        self.log: deque[dict] = deque(maxlen=500)

    def take_fault(self, request: web.Request) -> Fault | None:
        for fault in self.faults:
            if fault.matches(request):
                fault.times -= 1
                return fault
        return None

    async def add_fault(self, request: web.Request) -> web.Response:
        body = await request.json()
        fault = Fault(method=str(body.get("method", "*")).upper(), path=str(body.get("path", "/")),
                      status=int(body.get("status", 500)), times=int(body.get("times", 1)),
                      delay_seconds=float(body.get("delay_seconds", 0)))
        self.faults.append(fault)
        return web.json_response({"queued": True}, status=201)

    async def clear_faults(self, request: web.Request) -> web.Response:
        self.faults.clear()
        return web.json_response({"cleared": True})

    async def requests(self, request: web.Request) -> web.Response:
        prefix = request.query.get("path", "")
        return web.json_response([e for e in self.log if e["path"].startswith(prefix)])

    @staticmethod
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(f"{PREFIX}/faults", self.add_fault)
        app.router.add_delete(f"{PREFIX}/faults", self.clear_faults)
        app.router.add_get(f"{PREFIX}/requests", self.requests)
        app.router.add_get(f"{PREFIX}/health", self.health)

    def middleware(self):
        @web.middleware
        async def record_and_inject(request: web.Request, handler):
            if request.path.startswith(PREFIX):
                return await handler(request)
            fault = self.take_fault(request)
            if fault is not None and fault.delay_seconds:
                await asyncio.sleep(fault.delay_seconds)
            if fault is not None and fault.status:
                response = error(fault.status, "Injected fault")
            else:
                response = await handler(request)
            self.log.append({"method": request.method, "path": request.path, "status": response.status})
            return response

        return record_and_inject


REASONS = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def error(status: int, message) -> web.Response:
    """The provider's error shape: {message, error, statusCode}; message may be a list."""
    return web.json_response({"message": message, "error": REASONS.get(status, "Error"), "statusCode": status},
                             status=status)
