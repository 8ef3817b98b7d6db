"""One delivery attempt: the signed request and the HTTP call that can only reach allowed addresses.

Safety: every request goes through core.outbound's `GuardedClient`, which refuses private, link-local, metadata
and (outside the local stack) loopback addresses at the moment of connecting, whether the URL names a host or an
address. Redirects are not followed (a 3xx is a failed attempt) and at most 64 KiB of a response is read.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

import aiohttp
from opentelemetry.trace import Span

from contracts import webhooks
from core import destinations, signing
from core.events import Envelope
from core.ids import utcnow
from core.outbound import GuardedClient, RefusedAddress
from core.sealing import SecretBox
from services.webhooks import domain
from services.webhooks.records import CallSecret, Subscription

USER_AGENT = "Switchboard-Webhooks/1.0"


async def check_destination(url: str, allow_loopback: bool) -> None:
    """400 unless every address the URL's host resolves to may receive webhooks (checked at subscription
    time; the resolver checks again at every delivery)."""
    await destinations.check_destination(url, allow_loopback, "webhook_url", "webhooks")


def signing_secrets(box: SecretBox, subscription: Subscription | CallSecret, now: datetime) -> list[str]:
    """The current secret, plus the previous one while the rotation overlap lasts."""
    return box.in_force(subscription.secret_sealed, subscription.previous_secret_sealed,
                        subscription.previous_secret_expires_at, now)


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    latency_ms: int
    error: str | None

    @property
    def ok(self) -> bool:
        return domain.is_success(self.status_code)


class Sender:
    def __init__(self, allow_loopback: bool, timeout: float = webhooks.DELIVERY_TIMEOUT_SECONDS):
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._http = GuardedClient(allow_loopback, timeout=self.timeout, max_bytes=domain.MAX_RESPONSE_BYTES,
                                   headers={"User-Agent": USER_AGENT}, limit=domain.CONNECTIONS,
                                   limit_per_host=domain.CONNECTIONS_PER_RECEIVER, span_hook=_describe)

    async def close(self) -> None:
        await self._http.close()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        started = time.perf_counter()

        def done(status: int | None, error: str | None) -> Outcome:
            return Outcome(status, int((time.perf_counter() - started) * 1000), error)

        try:
            async with self._http.request("POST", url, data=body, headers=headers) as r:
                await r.content.read(domain.MAX_RESPONSE_BYTES)  # the rest is not wanted: not a failure
                if 300 <= r.status < 400:
                    return done(r.status, "redirects are not followed")
                return done(r.status, None if domain.is_success(r.status) else f"receiver answered {r.status}")
        except RefusedAddress as exc:
            return done(None, f"refused: {exc}")
        except TimeoutError:
            return done(None, f"timed out after {self.timeout.total:g}s")
        except aiohttp.ClientConnectorError as exc:
            return done(None, f"could not connect: {exc.os_error}")
        except aiohttp.ClientError as exc:
            return done(None, f"{type(exc).__name__}: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 - e.g. the resolver's refusal raised another way
            return done(None, f"{type(exc).__name__}: {exc}"[:300])


async def post_signed(sender: Sender, secrets: list[str], url: str, delivery_id: str, event: Envelope) -> Outcome:
    """One attempt: the event's webhook body signed with every secret in force (signing_secrets), POSTed to
    `url`."""
    body = event.webhook_body()
    header = signing.signature_header(secrets, int(utcnow().timestamp()), body)
    return await sender.post(url, body, {
        "Content-Type": "application/json", signing.SIGNATURE_HEADER: header, "X-Service-Event": event.type,
        "X-Service-Event-Id": event.event_id, "X-Service-Delivery": delivery_id})


def _describe(span: Span, params: aiohttp.TraceRequestStartParams) -> None:
    """What the attempt's CLIENT span (aiohttp-client's: the receiver's URL without its query, which may hold a
    token of theirs; no trace context is sent to them) adds: which delivery and event it carries."""
    if span.is_recording():
        span.set_attributes({"switchboard.webhook.delivery_id": params.headers.get("X-Service-Delivery", ""),
                             "switchboard.event.type": params.headers.get("X-Service-Event", "")})
