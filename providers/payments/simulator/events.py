"""Events and their webhook delivery, the way Stripe delivers them.

Each event is a Stripe Event object (`evt_...`, `object: "event"`, `api_version`, `created`, `type`,
`data.object` a snapshot of the object when the event happened, `data.previous_attributes` on `*.updated`,
`livemode: false`, `pending_webhooks`, `request: {id, idempotency_key}`), kept in creation order. `created` is
given by the caller (`billing` stamps each subscription's events in the order they happened, a later moment a
later second) or is now.

With a webhook URL, each is POSTed as JSON (`Content-Type: application/json; charset=utf-8`, `User-Agent:
Stripe/1.0 (+https://stripe.com/docs/webhooks)`), signed with `Stripe-Signature` (`sign_payload`, a fresh
timestamp per attempt). Any answer outside 2xx, a redirect, a connection error or no answer within 15 s is a
failure, and the event is tried again after RETRY_DELAYS (1 min, 5 min, 30 min, 2 h, 5 h, then every 10 h: about
2.8 days in all, as Stripe retries "for up to three days"), each delay multiplied by the time scale. Every attempt
is recorded (`/_simulator/events`); an event acknowledged (2xx) sets its record's `acked`.

Stripe does not guarantee the order of delivery. How first attempts go out (`delivery`):

- `ordered` (the default): one queue, in creation order, each waiting for the one before; retries are not ordered
  with the other events, as Stripe's are not;
- `shuffled`: each is sent on its own after a random pause of up to SHUFFLE_WINDOW seconds, so events made
  together arrive in any order, and a retry or a slow answer lets later ones overtake.

`hold()` keeps every first attempt back until `release(order)` sends them, one after another, in creation order,
`reversed` or `shuffled`: a test makes a real out-of-order delivery with it.
"""
from __future__ import annotations

import asyncio
import builtins
import copy
import json
import logging
import random
from collections.abc import Coroutine
from typing import Any

import aiohttp

from providers.payments.simulator.objects import API_VERSION, new_id, now, public
from providers.payments.webhooks import SIGNATURE_HEADER, sign_payload

log = logging.getLogger(__name__)

USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
TIMEOUT = 15.0  # seconds an endpoint has to answer
RETRY_DELAYS = (60, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000)  # seconds
DELIVERIES = ("ordered", "shuffled")
RELEASE_ORDERS = ("created", "reversed", "shuffled")
SHUFFLE_WINDOW = 0.25  # seconds (real time): how far apart shuffled first attempts may go out


class Events:
    def __init__(self, webhook_url: str | None, webhook_secret: str | None, time_scale: float,
                 delivery: str = "ordered"):
        if delivery not in DELIVERIES:
            raise ValueError(f"delivery must be one of {', '.join(DELIVERIES)}")
        self.webhook_url, self.webhook_secret, self.time_scale = webhook_url, webhook_secret, time_scale
        self.delivery = delivery
        self.records: list[dict[str, Any]] = []  # {"event", "status", "attempts", "next_attempt_in", "acked"}
        self.by_id: dict[str, dict[str, Any]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.holding = False
        self.held: list[dict[str, Any]] = []
        self._queue: asyncio.Queue[Any] | None = None
        self._session: aiohttp.ClientSession | None = None

    # -- making events ---------------------------------------------------------------------------------------

    def emit(self, type_: str, obj: dict[str, Any], *, previous: dict[str, Any] | None = None, request: dict[str, Any] | None = None,
             at: int | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"object": public(obj)}
        if previous is not None:
            data["previous_attributes"] = copy.deepcopy(previous)
        event: dict[str, Any] = {"id": new_id("evt"), "object": "event", "api_version": API_VERSION, "created": at or now(),
                 "data": data, "livemode": False, "pending_webhooks": 1 if self.webhook_url else 0,
                 "request": request or {"id": None, "idempotency_key": None}, "type": type_}
        acked = asyncio.Event()
        if not self.webhook_url:  # no endpoint to wait for
            acked.set()
        record: dict[str, Any] = {"event": event, "status": "pending" if self.webhook_url else "not_sent", "attempts": [],
                  "next_attempt_in": None, "acked": acked}
        self.records.append(record)
        self.by_id[event["id"]] = record
        log.info("event %s %s (%s)", event["id"], type_, data["object"].get("id"))
        if self.webhook_url:
            self._first_attempt(record)
        return event

    def list(self, type_: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.records if type_ is None or r["event"]["type"] == type_]

    # -- delivery --------------------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _first_attempt(self, record: dict[str, Any]) -> None:
        if self.holding:
            self.held.append(record)
        elif self.delivery == "shuffled":
            self._spawn(self._shuffled(record))
        else:
            self._enqueue(record)

    def _enqueue(self, record: dict[str, Any]) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._spawn(self._first_attempts(self._queue))
        self._queue.put_nowait(record)

    async def _first_attempts(self, queue: asyncio.Queue[Any]) -> None:
        while True:
            record = await queue.get()
            if not await self.attempt(record):
                self._retry_later(record, 0)

    async def _shuffled(self, record: dict[str, Any]) -> None:
        await asyncio.sleep(random.uniform(0, SHUFFLE_WINDOW))
        if not await self.attempt(record):
            self._retry_later(record, 0)

    def hold(self) -> None:
        """Keep every first attempt back until `release`."""
        self.holding = True

    def release(self, order: str = "created") -> builtins.list[str]:  # (`list` is a method here)
        """Send the held events one after another in `order` (created, reversed, shuffled); their ids, in that
        order. Events made afterwards go out as `delivery` says."""
        if order not in RELEASE_ORDERS:
            raise ValueError(f"order must be one of {', '.join(RELEASE_ORDERS)}")
        held, self.held, self.holding = self.held, [], False
        if order == "reversed":
            held.reverse()
        elif order == "shuffled":
            random.shuffle(held)
        for record in held:
            self._enqueue(record)
        return [r["event"]["id"] for r in held]

    def _retry_later(self, record: dict[str, Any], retries_done: int) -> None:
        if retries_done >= len(RETRY_DELAYS):
            record.update(status="failed", next_attempt_in=None)
            log.warning("event %s was not accepted after %d attempts; giving up", record["event"]["id"],
                        len(record["attempts"]))
            return
        delay = RETRY_DELAYS[retries_done]
        record.update(status="retrying", next_attempt_in=delay)
        self._spawn(self._retry(record, retries_done, delay))

    async def _retry(self, record: dict[str, Any], retries_done: int, delay: float) -> None:
        await asyncio.sleep(delay * self.time_scale)
        if record["status"] == "succeeded":  # delivered by a manual resend meanwhile
            return
        if not await self.attempt(record):
            self._retry_later(record, retries_done + 1)

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))
        return self._session

    async def attempt(self, record: dict[str, Any], *, manual: bool = False) -> bool:
        """One POST of the event to the webhook URL; whether it was accepted (2xx). Recorded either way."""
        event = record["event"]
        url, secret = self.webhook_url, self.webhook_secret
        assert url is not None and secret is not None  # only events with somewhere to go are attempted
        body = json.dumps(event, indent=2).encode()  # Stripe pretty-prints; receivers must sign-check the raw bytes
        stamp = now()
        headers = {SIGNATURE_HEADER: sign_payload(body, secret, stamp),
                   "Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT,
                   "Accept": "*/*; q=0.5, application/xml", "Cache-Control": "no-cache"}
        entry: dict[str, Any] = {"at": stamp, "status": None, "error": None, "manual": manual}
        record["attempts"].append(entry)
        try:
            async with self._http().post(url, data=body, headers=headers, allow_redirects=False) as r:
                entry["status"] = r.status
                await r.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            entry["error"] = "timed out" if isinstance(exc, asyncio.TimeoutError) else type(exc).__name__
        except Exception as exc:  # a failed attempt, never a dead delivery queue
            log.exception("event %s delivery to %s failed", event["id"], self.webhook_url)
            entry["error"] = type(exc).__name__
        accepted = entry["status"] is not None and 200 <= entry["status"] < 300
        if accepted:
            record.update(status="succeeded", next_attempt_in=None)
            record["acked"].set()
        log.log(logging.INFO if accepted else logging.WARNING, "event %s %s attempt %d%s: %s", event["id"],
                event["type"], len(record["attempts"]), " (resend)" if manual else "",
                entry["status"] if entry["status"] is not None else entry["error"])
        return accepted

    # -- lifecycle -------------------------------------------------------------------------------------------

    def reset(self) -> None:
        self.stop()
        self.records.clear()
        self.by_id.clear()
        self.held.clear()
        self.holding = False

    def stop(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        self._queue = None

    async def close(self) -> None:
        self.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None
