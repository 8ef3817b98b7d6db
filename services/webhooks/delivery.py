"""One delivery attempt: the signed request, the HTTP call that can only reach allowed addresses,
and what its outcome does to the delivery and its subscription.

Safety: every name is resolved by `SafeResolver`, which refuses private, link-local, metadata and
(outside the local stack) loopback addresses, and the connection goes to the very addresses it
checked, so a DNS answer that changes between the check and the call (rebinding) gains nothing.
Redirects are not followed (a 3xx is a failed attempt) and at most 64 KiB of a response is read.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import aiohttp
import sqlalchemy as sa
from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver
from sqlalchemy.ext.asyncio import AsyncEngine

from core.errors import invalid
from core.ids import utcnow
from services.webhooks import rules
from services.webhooks.store import attempts, deliveries, subscriptions

USER_AGENT = "Switchboard-Webhooks/1.0"


class RefusedAddress(OSError):
    pass


class SafeResolver(AbstractResolver):
    def __init__(self, allow_loopback: bool):
        self.allow_loopback = allow_loopback
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET):
        results = await self._inner.resolve(host, port, family)
        for result in results:
            why = rules.address_refusal(result["host"], self.allow_loopback)
            if why:
                raise RefusedAddress(f"{host} resolves to {why}")
        return results

    async def close(self) -> None:
        await self._inner.close()


async def check_destination(url: str, allow_loopback: bool) -> None:
    """400 unless every address the URL's host resolves to may receive webhooks (checked at subscription
    time; the resolver checks again at every delivery)."""
    host, port = rules.check_url(url)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):  # UnicodeError: a label IDNA refuses, e.g. an empty one in a..b
        raise invalid(f"webhook_url host {host} does not resolve") from None
    for info in infos:
        why = rules.address_refusal(info[4][0], allow_loopback)
        if why:
            hint = " (the local stack accepts loopback URLs)" if why == "a loopback address" else ""
            raise invalid(f"webhook_url host {host} resolves to {why}; webhooks go to public addresses only"
                                f"{hint}")


def envelope_body(event_id: str, event_type: str, occurred_at: datetime, business_id: str | None,
                  data: dict) -> bytes:
    """The delivered JSON: the spec's {event, timestamp, business_id, data} plus the durable event_id and
    occurred_at."""
    stamp = occurred_at.isoformat().replace("+00:00", "Z")
    return json.dumps({"event_id": event_id, "event": event_type, "timestamp": stamp, "occurred_at": stamp,
                       "business_id": business_id, "data": data}, separators=(",", ":")).encode()


def signing_secrets(box: rules.SecretBox, subscription, now: datetime) -> list[str]:
    """The current secret, plus the previous one while the rotation overlap lasts."""
    keys = [box.open(subscription.secret_sealed)]
    if subscription.previous_secret_sealed and subscription.previous_secret_expires_at \
            and subscription.previous_secret_expires_at > now:
        keys.append(box.open(subscription.previous_secret_sealed))
    return keys


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    latency_ms: int
    error: str | None

    @property
    def ok(self) -> bool:
        return rules.is_success(self.status_code)


class Sender:
    def __init__(self, allow_loopback: bool, timeout: float = rules.DELIVERY_TIMEOUT_SECONDS):
        self.allow_loopback = allow_loopback
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=SafeResolver(self.allow_loopback), use_dns_cache=False,
                                             limit=100)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout,
                                                  headers={"User-Agent": USER_AGENT})
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        started = time.perf_counter()

        def done(status: int | None, error: str | None) -> Outcome:
            return Outcome(status, int((time.perf_counter() - started) * 1000), error)

        try:
            host, _ = rules.check_url(url)
            literal = rules.address_refusal(host.strip("[]"), self.allow_loopback) if _is_ip(host) else None
            if literal:
                return done(None, f"refused: {host} is {literal}")
            async with self._http().post(url, data=body, headers=headers, allow_redirects=False) as r:
                await r.content.read(rules.MAX_RESPONSE_BYTES)
                if 300 <= r.status < 400:
                    return done(r.status, "redirects are not followed")
                return done(r.status, None if rules.is_success(r.status) else f"receiver answered {r.status}")
        except asyncio.TimeoutError:
            return done(None, f"timed out after {self.timeout.total:g}s")
        except aiohttp.ClientConnectorError as exc:
            cause = exc.os_error if isinstance(exc.os_error, RefusedAddress) else None
            return done(None, f"refused: {cause}" if cause else f"could not connect: {exc.os_error}")
        except aiohttp.ClientError as exc:
            return done(None, f"{type(exc).__name__}: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 - e.g. the resolver's refusal raised another way
            return done(None, f"{type(exc).__name__}: {exc}"[:300])


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


async def post_signed(sender: Sender, box: rules.SecretBox, subscription, delivery_id: str, event_id: str,
                      event_type: str, occurred_at: datetime, business_id: str | None, data: dict,
                      url: str | None = None) -> Outcome:
    """One attempt: the envelope signed with every secret in force, POSTed to `url` (default: the
    subscription's)."""
    now = utcnow()
    body = envelope_body(event_id, event_type, occurred_at, business_id, data)
    header = rules.signature_header(signing_secrets(box, subscription, now), int(now.timestamp()), body)
    return await sender.post(url or subscription.url, body, {
        "Content-Type": "application/json", "X-Service-Signature": header, "X-Service-Event": event_type,
        "X-Service-Event-Id": event_id, "X-Service-Delivery": delivery_id})


async def record(engine: AsyncEngine, results: list[tuple[object, Outcome]], *, retry: bool = True,
                 scale: float = 1.0) -> None:
    """Write a batch of attempts and move each delivery and its subscription on, in one transaction
    (see rules for the schedule and the disabling window)."""
    if not results:
        return
    now = utcnow()
    d = deliveries.c
    delivered, retried, given_up = [], [], []
    for item, outcome in results:
        last = {"b_id": item.id, "b_code": outcome.status_code, "b_error": outcome.error,
                "b_latency": outcome.latency_ms}
        if outcome.ok:
            delivered.append(last)
            continue
        delay = rules.next_delay(item.attempts, scale) if retry else None
        (retried if delay else given_up).append({**last, "b_next": now + (delay or timedelta(0))})
    by_subscription: dict[str, list[bool]] = {}
    for item, outcome in results:
        if item.subscription_id:
            by_subscription.setdefault(item.subscription_id, []).append(outcome.ok)
    last_values = {"last_status_code": sa.bindparam("b_code"), "last_error": sa.bindparam("b_error"),
                   "last_latency_ms": sa.bindparam("b_latency")}
    async with engine.begin() as conn:
        await conn.execute(attempts.insert(), [
            {"delivery_id": item.id, "attempt": item.attempts, "status_code": o.status_code,
             "latency_ms": o.latency_ms, "error": o.error, "at": now} for item, o in results])
        for rows, status in ((delivered, "delivered"), (retried, "pending"), (given_up, "failed")):
            if not rows:
                continue
            values = {**last_values, "status": status}
            if status == "delivered":
                values["delivered_at"] = now
            else:
                values["next_attempt_at"] = sa.bindparam("b_next")
            await conn.execute(deliveries.update().where(d.id == sa.bindparam("b_id")).values(**values), rows)
        for subscription_id, oks in by_subscription.items():
            await _move_subscription(conn, subscription_id, oks, now, scale)


async def _move_subscription(conn, subscription_id: str, oks: list[bool], now: datetime, scale: float) -> None:
    """A success resets the failure streak; failures count, and a streak older than DISABLE_AFTER disables."""
    s = subscriptions.c
    if oks[-1]:
        # Skipped while nothing would change but a last_triggered_at under a second old: concurrent
        # batches to one subscription would otherwise all queue on its row.
        await conn.execute(subscriptions.update().where(
            s.id == subscription_id,
            sa.or_(s.failure_count != 0, s.failing_since.is_not(None), s.last_triggered_at.is_(None),
                   s.last_triggered_at < now - timedelta(seconds=1)))
            .values(last_triggered_at=now, failure_count=0, failing_since=None))
        return
    row = (await conn.execute(subscriptions.update().where(s.id == subscription_id).values(
        failure_count=s.failure_count + sum(not ok for ok in oks), last_triggered_at=now,
        failing_since=sa.func.coalesce(s.failing_since, now)).returning(s.failing_since, s.is_active))).first()
    if row and row.is_active and row.failing_since < now - rules.DISABLE_AFTER * scale:
        await conn.execute(subscriptions.update().where(s.id == subscription_id).values(
            is_active=False, disabled_reason=f"disabled at {now.isoformat()} after failing for "
            f"{rules.DISABLE_AFTER * scale} without a success; save the subscription again to re-enable it"))
