"""The partner's webhook receiver: an aiohttp server on this machine that the soak's subscriptions deliver to, as a
careful partner runs one. A delivery names its event and its delivery (X-Service-Event-Id, X-Service-Delivery) but
not its subscription, so each subscription gets a path of its own (`url_for(name)`, the name chosen by the actor
that creates it, e.g. its business id), and the secret POST /api/v1/webhooks returns once is registered for that
path (`secret(name, secret)`; several per path are each tried, as during a rotation).

Each delivery's signature is checked (core.signing.verify: SPEC, Events); then a seeded random.Random answers 500
to a fraction of them and answers another fraction slowly (below the dispatcher's time-out), so a run replays. It
dedups on the body's event_id, and counts for the ledger: accepted deliveries per (path, event_id), refused ones
(its 500s), bad signatures, and the first accepted body of each event.

Down (`down(True)`), the port refuses connections: the site stops listening and the dispatcher's open keep-alive
connections are closed, as when the partner's server is gone. A 503 would be a load balancer answering for a
backend that is gone: an answer, which the random 500s already stand for; no answer at all is the dispatcher's
other failure path, and the one a whole outage brings."""
from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, defaultdict
from typing import Any

from aiohttp import web

from contracts.webhooks import DELIVERY_TIMEOUT_SECONDS
from core.signing import SIGNATURE_HEADER, verify
from deploy.local.servers import free_port

FAIL_RATE = 0.05  # answered 500
SLOW_RATE = 0.05  # answered after SLOW_SECONDS
SLOW_SECONDS = (2.0, DELIVERY_TIMEOUT_SECONDS / 2)  # a few seconds, well below the dispatcher's time-out
HOOKS = "/hooks/"


class Partner:
    def __init__(self, seed: int = 0, fail_rate: float = FAIL_RATE, slow_rate: float = SLOW_RATE,
                 slow_seconds: tuple[float, float] = SLOW_SECONDS):
        self.rng = random.Random(seed)
        self.fail_rate, self.slow_rate, self.slow_seconds = fail_rate, slow_rate, slow_seconds
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.secrets: defaultdict[str, list[str]] = defaultdict(list)  # by path name
        self.accepted: Counter[tuple[str, str]] = Counter()  # (name, event_id): deliveries answered 2xx
        self.refused: Counter[tuple[str, str]] = Counter()  # (name, event_id): deliveries answered 500 on purpose
        self.bad_signatures: Counter[str] = Counter()  # by name: refused 401 (no secret of the path signed it)
        self.malformed: Counter[str] = Counter()  # by name: signed, but no JSON object with an event_id (400)
        self.first: dict[tuple[str, str], dict[str, Any]] = {}  # (name, event_id): the first accepted body
        self.is_down = False
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    def url_for(self, name: str) -> str:
        """Where the subscription `name` delivers (a name of letters, digits, - and _, e.g. a business id)."""
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"a partner path name is letters, digits, - and _: {name!r}")
        return f"{self.url}{HOOKS}{name}"

    def secret(self, name: str, secret: str) -> None:
        """A secret that signs deliveries to `url_for(name)` (the one POST /api/v1/webhooks returned, or a rotated
        one)."""
        self.secrets[name].append(secret)

    async def start(self) -> Partner:
        app = web.Application()
        app.router.add_post(HOOKS + "{name}", self.deliver)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        await self._listen()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        self._runner = self._site = None

    async def down(self, down: bool = True) -> None:
        """Down: no new connection is accepted and every open one is closed, once its request in progress (a slow
        one) has been answered: returns then. Up again: listening on the same port."""
        assert self._runner is not None and self._runner.server is not None, "start the partner first"
        if down and self._site is not None:
            self.is_down = True
            await self._site.stop()
            self._site = None
            connections = self._runner.server.connections
            for connection in connections:  # as the runner's own cleanup: idle ones stop waiting for a request
                connection.close()
            await asyncio.gather(*(connection.shutdown(DELIVERY_TIMEOUT_SECONDS) for connection in connections))
        elif not down and self._site is None:
            await self._listen()
            self.is_down = False

    async def _listen(self) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await self._site.start()

    async def deliver(self, request: web.Request) -> web.Response:
        name, body = request.match_info["name"], await request.read()
        header = request.headers.get(SIGNATURE_HEADER, "")
        if not any(verify(header, body, secret) for secret in self.secrets.get(name, ())):
            self.bad_signatures[name] += 1
            return web.Response(status=401, text="bad signature")
        try:
            event = json.loads(body)
            event_id = event["event_id"]
        except (ValueError, TypeError, KeyError):
            self.malformed[name] += 1
            return web.Response(status=400, text="not an event")
        draw = self.rng.random()
        if draw < self.fail_rate:
            self.refused[name, event_id] += 1
            return web.Response(status=500, text="not now")
        if draw < self.fail_rate + self.slow_rate:
            await asyncio.sleep(self.rng.uniform(*self.slow_seconds))
        self.accepted[name, event_id] += 1
        self.first.setdefault((name, event_id), event)
        return web.Response(text="ok")

    def events(self, name: str | None = None) -> dict[str, dict[str, Any]]:
        """The first accepted body of each event_id, delivered to `name`'s path or to any."""
        return {event_id: event for (path, event_id), event in self.first.items() if name is None or path == name}

    def deliveries(self, event_id: str) -> dict[str, int]:
        """How many times each path accepted `event_id` (1: exactly once; more: redelivered, deduplicated here)."""
        return {path: count for (path, eid), count in self.accepted.items() if eid == event_id}
