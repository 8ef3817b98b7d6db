"""The soak load's HTTP client. Each request goes to a gateway that answered its last readiness poll (as an
Ingress sends to ready pods), every attempt is recorded in the history, and a request that met a 5xx, a 429 or no
answer is sent again, with backoff, until `RETRY_FOR_SECONDS` have passed: what a careful integrator does. A create
is repeated with the same Idempotency-Key where the route takes one (the caller passes it), so a repeat never
doubles it; a 500 the spec names (the provider refused) is final and left to the actor; the ledger counts every retried request and whether it ended with a final answer."""
from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import aiohttp

from bench.soak.history import Attempt, History, Retried, Tenant
from deploy.local.ingress import POLL_SECONDS, Balancer

RETRY_FOR_SECONDS = 120.0  # longer than a PostgreSQL restart and the supervisor's backoff after repeated kills
FIRST_BACKOFF_SECONDS = 0.2
MAX_BACKOFF_SECONDS = 5.0
TIMEOUT_SECONDS = 30.0  # one attempt; the longest route's own limit is shorter
# What is tried again: no answer, a limit, and the platform's transient errors. A 500 is only when it is the
# unexpected internal_error: the spec's other 500s are the provider's answer (call_failed, sms_send_failed, ...),
# final for their Idempotency-Key (a replay answers the same), which the actor handles. A 429 naming a plan's daily
# limit (error.limit, Retry-After until the next UTC midnight) is final too: an integrator does not wait a day.
RETRIED_STATUSES = frozenset({0, 429, 502, 503, 504})
TRANSIENT_500 = "internal_error"


def at_daily_limit(status: int, body: Any) -> bool:
    """The 429 of a plan's daily limit (calls_per_day, texts_per_day, ...: its error names the limit)."""
    return status == 429 and isinstance(body, dict) and "limit" in (body.get("error") or {})


def transient(status: int, body: Any) -> bool:
    """Whether an answer is worth the same request again."""
    if status == 500:
        return not isinstance(body, dict) or (body.get("error") or {}).get("code") == TRANSIENT_500
    return status in RETRIED_STATUSES and not at_daily_limit(status, body)


class SoakClient:
    def __init__(self, http: aiohttp.ClientSession, balancer: Balancer, history: History):
        self.http, self.balancer, self.history = http, balancer, history

    async def request(self, method: str, path: str, *, tenant: Tenant | None = None, key: str | None = None,
                      json: Any = None, data: Any = None, params: dict[str, str] | None = None,
                      headers: dict[str, str] | None = None, idempotency_key: str | None = None,
                      retry: bool = True) -> tuple[int, Any]:
        """The request's last answer (status, JSON body or text; status 0: none came). `tenant`'s key, or `key`,
        authenticates it; `idempotency_key` is sent on every attempt."""
        hdrs = dict(headers or {})
        bearer = key or (tenant.key if tenant is not None else None)
        if bearer is not None:
            hdrs["Authorization"] = f"Bearer {bearer}"
        if idempotency_key is not None:
            hdrs["Idempotency-Key"] = idempotency_key
        account = tenant.account_id if tenant is not None else None
        deadline, backoff, first, attempts = time.monotonic() + RETRY_FOR_SECONDS, FIRST_BACKOFF_SECONDS, None, 0
        while True:
            status, body, retry_after = await self._attempt(method, path, hdrs, json, data, params, account)
            attempts += 1
            first = status if first is None else first
            if not retry or not transient(status, body) or time.monotonic() >= deadline:
                break
            wait = retry_after if retry_after is not None else random.uniform(0, backoff)
            await asyncio.sleep(min(wait, max(0.0, deadline - time.monotonic())))
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
        if attempts > 1:
            self.history.retried.append(Retried(method, path.split("?")[0], first, status, attempts,
                                                not transient(status, body)))
        return status, body

    async def _attempt(self, method: str, path: str, headers: dict[str, str], json: Any, data: Any,
                       params: dict[str, str] | None, account: str | None) -> tuple[int, Any, float | None]:
        url = self.balancer.pick()
        at = time.monotonic()
        if url is None:  # no gateway ready: an Ingress would answer 503 itself
            self.history.record(Attempt(at, method, path.split("?")[0], "", 0, account, at))
            return 0, "no gateway ready", POLL_SECONDS
        try:
            async with self.http.request(method, url + path, json=json, data=data, params=params, headers=headers,
                                         allow_redirects=False,
                                         timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)) as r:
                text = await r.text()
                try:
                    body: Any = await r.json(content_type=None) if text else None
                except ValueError:
                    body = text
                status = r.status
                retry_after = r.headers.get("Retry-After")
        except (aiohttp.ClientError, TimeoutError) as exc:
            status, body, retry_after = 0, repr(exc), None
        self.history.record(Attempt(at, method, path.split("?")[0], url, status, account, time.monotonic()))
        return status, body, float(retry_after) if retry_after and retry_after.isdigit() else None
