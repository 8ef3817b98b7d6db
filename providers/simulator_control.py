"""The test control plane the local provider simulators share (voice, messaging, payments and the x402
facilitator): faults injected into the next matching requests, a bounded log of the requests that came in, and
the routes that manage them under one prefix. A test uses it to make the provider fail, stall or answer late on
cue, and to count the attempts our clients made. None of it is a provider's API and none is authenticated.

One copy, so that every simulator injects faults with the same rules and a test reads them the same way. What
stays each simulator's own is passed in: the prefix (`/_simulator`, the facilitator's `/_facilitator`), the
error shape of its refusals and of the injected faults (each answers as its provider would), what its faults
may say (`FaultRules`), whether a delay-only fault holds back the answer or the request by default (`hold_back`) and where
its request log is read, if it keeps one.

- `POST {prefix}/faults` `{"method", "path", "status", "times", "delay_seconds", "hold"}` → 201 `{"fault": {...}}`:
  the next `times` requests whose method matches and whose path starts with `path` wait `delay_seconds`, then fail
  with `status` (400-599); status 0 only delays them, holding back the request (`hold` "request": a slow
  provider) or serving it at once and holding back its answer (`hold` "answer": the work is done though the client
  may give up waiting); without `hold`, the simulator's default. Where a simulator's `FaultRules` list "code", a
  fault may name the provider's error `code` to fail with (the simulator's `failure` answers it). Faults are
  matched in the order they were added. `GET {prefix}/faults` lists the pending ones; `DELETE {prefix}/faults` → `{"cleared": n}`.
- `GET {prefix}{log}?path=/...&method=GET` → the last `LOG_SIZE` requests outside the control plane whose path
  starts with `path`, oldest first: `[{"method", "path", "status"}]` (status null until the request is served).
- `GET {prefix}/health` → `{"status": "ok"}`.
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, TypeVar

from aiohttp import web
from aiohttp.typedefs import Handler

log = logging.getLogger(__name__)

PREFIX = "/_simulator"
LOG_SIZE = 500

# The simulator's error response for refused control-plane requests: (messages, HTTP status).
Refuse = Callable[[list[str], int], web.Response]
# The simulator's error response for an injected fault of this HTTP status.
Fail = Callable[[int], web.Response]
# A control-plane request's JSON object; anything else raised as an aiohttp HTTP error.
Read = Callable[[web.Request], Awaitable[dict[str, Any]]]


async def json_object(request: web.Request) -> dict[str, Any]:
    """A control-plane request's JSON body (none: `{}`); anything else is refused with 400, which the control
    plane's middleware answers in the simulator's shape."""
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(text="request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="request body must be a JSON object")
    return body


class Script(Protocol):
    times: int  # plays left


S = TypeVar("S", bound=Script)


def next_script(scripts: list[S], default: Callable[[], S]) -> S:
    """The script the next simulated call or message plays: the first queued one (used up after its `times`
    plays), else `default()` (the simulator's own behaviour)."""
    if not scripts:
        return default()
    script = scripts[0]
    script.times -= 1
    if script.times <= 0:
        scripts.pop(0)
    return script


def joined(messages: list[str] | str) -> str:
    """Refusals as one message, for the error shapes that carry a single string."""
    return "; ".join(messages) if isinstance(messages, list) else messages


@dataclass
class Fault:
    """What the next `times` matching requests meet (the module docstring has the rules)."""

    method: str = "*"
    path: str = "/"  # a prefix of the paths it hits
    status: int = 500  # 0: no error, only the delay
    times: int | None = 1  # None: until cleared (where `FaultRules.until_cleared` allows it)
    delay_seconds: float = 0.0
    hold: str | None = None  # a delay-only fault: HOLDS; None: the simulator's default
    code: str | None = None  # the provider's error code to answer with, where the simulator's rules list "code"


HOLDS = ("request", "answer")


@dataclass(frozen=True)
class FaultRules:
    """What a simulator's faults may say, where the simulators differ."""

    # The properties a fault has, listed and checked in this order; without "method" it hits every method.
    fields: tuple[str, ...] = ("method", "path", "status", "times", "delay_seconds", "hold")
    methods: tuple[str, ...] = ("*", "GET", "POST", "PUT", "DELETE")
    until_cleared: bool = False  # times may be null: the fault stays until it is cleared
    reserved: str | None = None  # a path prefix a fault may not name


def is_int(value: object) -> TypeGuard[int]:
    """An integer, and not a bool (which JSON keeps apart and Python does not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def parse_fault(body: dict[str, Any], rules: FaultRules) -> tuple[Fault, list[str]]:
    """The fault a request body describes, and what is wrong with it (nothing: it may be added)."""
    errors = [f"property {k} should not exist" for k in sorted(set(body) - set(rules.fields))]
    fault = Fault(**{k: body[k] for k in rules.fields if k in body})
    problems = {}
    if not isinstance(fault.method, str) or fault.method.upper() not in rules.methods:
        problems["method"] = f"method must be one of {', '.join(rules.methods)}"
    else:
        fault.method = fault.method.upper()
    if not isinstance(fault.path, str) or not fault.path.startswith("/") or \
            (rules.reserved and fault.path.startswith(rules.reserved)):
        problems["path"] = "path must start with /" + (f" and not with {rules.reserved}" if rules.reserved else "")
    if not is_int(fault.status) or not (fault.status == 0 or 400 <= fault.status <= 599):
        problems["status"] = "status must be 0 or 400-599"
    if not (rules.until_cleared and fault.times is None) and not (is_int(fault.times) and fault.times >= 1):
        problems["times"] = "times must be a positive integer" + (", or null (until cleared)"
                                                                  if rules.until_cleared else "")
    if not isinstance(fault.delay_seconds, (int, float)) or isinstance(fault.delay_seconds, bool) or \
            not 0 <= fault.delay_seconds <= 300:
        problems["delay_seconds"] = "delay_seconds must be a number from 0 to 300"
    if fault.hold is not None and fault.hold not in HOLDS:
        problems["hold"] = f"hold must be one of {', '.join(HOLDS)}"
    if fault.code is not None and (not isinstance(fault.code, str) or not fault.code):
        problems["code"] = "code must be a non-empty string"
    return fault, errors + [problems[k] for k in rules.fields if k in problems]


class FaultBook:
    """The pending faults, in the order they were added."""

    def __init__(self, rules: FaultRules):
        self.rules = rules
        self.pending: list[Fault] = []

    def view(self, fault: Fault) -> dict[str, Any]:
        return {k: getattr(fault, k) for k in self.rules.fields}

    def take(self, request: web.Request) -> Fault | None:
        """The first fault that hits this request, counted as used (and forgotten once used up)."""
        for fault in self.pending:
            if fault.method in ("*", request.method) and request.path.startswith(fault.path):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times == 0:
                        self.pending.remove(fault)
                return fault
        return None

    def clear(self) -> int:
        cleared = len(self.pending)
        self.pending.clear()
        return cleared


class RequestLog:
    """The last `LOG_SIZE` requests outside the control plane, logged as they arrive (so an attempt the client
    gave up on counts at once) and given their status once answered."""

    def __init__(self) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=LOG_SIZE)

    def arrived(self, request: web.Request) -> dict[str, Any]:
        entry = {"method": request.method, "path": request.path, "status": None}
        self.entries.append(entry)
        return entry

    def matching(self, prefix: str, method: str) -> list[dict[str, Any]]:
        """Copies of the entries whose path starts with `prefix`, of `method` if one is given."""
        return [dict(e) for e in self.entries
                if e["path"].startswith(prefix) and (not method or e["method"] == method)]


class ControlPlane:
    """Faults, the request log and their routes under `prefix`; its `middleware` goes first in the application.

    `refuse` and `fail` answer in the simulator's error shape; `read` reads a fault's body (the simulator's own
    reader where it words its refusals otherwise). `hold_back`: a delay-only fault (status 0) without a `hold` of
    its own serves the request at once and holds its answer back, so the work is done though the client gave up
    waiting (a send that timed out but went out); otherwise the request waits, then is served (a slow provider).
    `log_route`: where the request log is read under the prefix (None: no log is kept)."""

    def __init__(self, refuse: Refuse, fail: Fail, *, prefix: str = PREFIX, rules: FaultRules = FaultRules(),
                 read: Read = json_object, hold_back: bool = False, log_route: str | None = "/log"):
        self.refuse, self.fail, self.read, self.prefix = refuse, fail, read, prefix
        self.hold_back, self.log_route = hold_back, log_route
        self.faults = FaultBook(rules)
        self.log = RequestLog() if log_route else None

    async def add_fault(self, request: web.Request) -> web.Response:
        fault, errors = parse_fault(await self.read(request), self.faults.rules)
        if errors:
            return self.refuse(errors, 400)
        self.faults.pending.append(fault)
        return web.json_response({"fault": self.faults.view(fault)}, status=201)

    async def list_faults(self, request: web.Request) -> web.Response:
        return web.json_response([self.faults.view(f) for f in self.faults.pending])

    async def clear_faults(self, request: web.Request) -> web.Response:
        return web.json_response({"cleared": self.faults.clear()})

    async def requests(self, request: web.Request) -> web.Response:
        assert self.log is not None  # the route is added only with a log
        return web.json_response(self.log.matching(request.query.get("path", ""),
                                                   request.query.get("method", "").upper()))

    def failure(self, fault: Fault) -> web.Response:
        """The answer to a request an injected fault fails (a simulator whose faults carry more than a status
        answers them here)."""
        return self.fail(fault.status)

    @staticmethod
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post(f"{self.prefix}/faults", self.add_fault)
        router.add_get(f"{self.prefix}/faults", self.list_faults)
        router.add_delete(f"{self.prefix}/faults", self.clear_faults)
        if self.log_route:
            router.add_get(f"{self.prefix}{self.log_route}", self.requests)
        router.add_get(f"{self.prefix}/health", self.health)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == self.prefix or request.path.startswith(self.prefix + "/"):
            try:
                return await handler(request)
            except web.HTTPException as exc:  # the control plane's own refusals, in the simulator's shape
                return self.refuse([exc.text or exc.reason], exc.status)
        entry = self.log.arrived(request) if self.log is not None else {}  # no log: the status goes nowhere
        fault = self.faults.take(request)
        hold_back = fault is not None and not fault.status and (
            fault.hold == "answer" if fault.hold else self.hold_back)
        if fault is not None and not hold_back:
            await asyncio.sleep(fault.delay_seconds)
        response: web.StreamResponse
        if fault is not None and fault.status:
            log.info("%s %s: injected %d", request.method, request.path, fault.status)
            response = self.failure(fault)
        else:
            response = await handler(request)
        entry["status"] = response.status  # before a hold: the work is done, whether or not the client waits
        if fault is not None and hold_back:
            await asyncio.sleep(fault.delay_seconds)
        return response
