"""The real HTTP client for the voice-AI provider's public REST API (Vapi).

Retries follow what is safe to repeat: reads, updates and deletes (GET, PATCH,
DELETE) are retried on 429, 5xx, time-outs and connection errors; creates (POST)
only on 429 and on a connection that could not be opened (nothing was sent),
because the provider has no idempotency key and a create that failed or timed
out may still have happened. Backoff is exponential with full jitter, capped at
`backoff_max`, and a numeric Retry-After is honoured (also capped).
`max_attempts` counts the first try.

One exception: starting an eval run (POST /eval/run) is not retried on a 429.
The provider rate-limits runs per organization, and our evals service fans runs
out and must back off itself, so the 429 reaches it at once as a `ProviderError`
with status 429 and `retry_after` (the Retry-After seconds, when given). A run
start is still repeated when the connection could not be opened (nothing was sent).

Every failure is a `ProviderError` whose message is safe to show the caller: the
route (`GET /assistant/{id}`, not the id), the status, and for a 4xx the
provider's own `message`. Never the key, never a 5xx body.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from providers.http import SessionClient, json_or_none, path_segment, retry_after_seconds
from providers.voice.port import ProviderError

log = logging.getLogger(__name__)

MESSAGE_MAX = 300


class _Retryable(Exception):
    """An attempt that failed in a way worth repeating; carries the error to raise once attempts run out."""

    def __init__(self, error: ProviderError, retry_after: float | None = None):
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


def _provider_message(body: object) -> str:
    """The provider's own explanation of a 4xx (`message` may be a list of strings), trimmed."""
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, list):
        message = "; ".join(str(m) for m in message)
    if not message and isinstance(body, dict):
        message = body.get("error")
    return str(message or "no details")[:MESSAGE_MAX]


class VapiClient(SessionClient):
    """`VoiceProvider` over the provider's REST API (`Authorization: Bearer <private key>`, JSON bodies).

    One `aiohttp.ClientSession`, opened on first use and closed by `close()`.
    `timeout` bounds each attempt.
    """

    provider = "voice"

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0, max_attempts: int = 4,
                 backoff_base: float = 0.2, backoff_max: float = 5.0) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts counts the first try: at least 1")
        self.base_url = base_url.rstrip("/")
        super().__init__({"Authorization": f"Bearer {api_key}", "Accept": "application/json"}, timeout)
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max

    def __repr__(self) -> str:  # never the key
        return f"VapiClient({self.base_url!r})"

    # -- transport ---------------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_random_exponential(multiplier=self.backoff_base, max=self.backoff_max)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(max(backoff, exc.retry_after), self.backoff_max)
        return backoff

    async def _request(self, method: str, route: str, path: str, *, json: dict[str, Any] | None = None,
                       params: dict[str, Any] | None = None, missing_ok: bool = False, retry_429: bool = True) -> Any:
        """The answer's JSON (None when empty, or for a 404 with `missing_ok`). `route` names the endpoint in
        messages (`/assistant/{id}`); `path` is what is requested. `retry_429=False`: a 429 is raised at once (with
        its Retry-After) instead of being waited out."""
        retrying = AsyncRetrying(stop=stop_after_attempt(self.max_attempts), wait=self._wait,
                                 retry=retry_if_exception_type(_Retryable), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._attempt(method, route, path, json, params, missing_ok, retry_429,
                                               attempt.retry_state.attempt_number)
        except _Retryable as exc:
            raise exc.error from None

    async def _attempt(self, method: str, route: str, path: str, json: dict[str, Any] | None,
                       params: dict[str, Any] | None, missing_ok: bool, retry_429: bool, attempt: int) -> Any:
        idempotent = method != "POST"
        where = f"{method} {route}"
        try:
            async with self._http().request(method, self.base_url + path, json=json, params=params) as r:
                status, retry_after = r.status, retry_after_seconds(r.headers)
                raw = await r.read()
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            # The connection was never opened, so nothing was sent: safe to repeat even a create.
            error = ProviderError(f"voice provider unreachable ({where}): "
                                  f"{'timed out' if isinstance(exc, asyncio.TimeoutError) else 'could not connect'}")
            if isinstance(exc, aiohttp.ClientSSLError):
                raise error from None
            self._log_retry(method, path, attempt, type(exc).__name__)
            raise _Retryable(error) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else "connection lost"
            error = ProviderError(f"voice provider unreachable ({where}): {reason}", maybe_applied=not idempotent)
            if idempotent:  # the request may have been applied: only repeat what is safe to repeat
                self._log_retry(method, path, attempt, type(exc).__name__)
                raise _Retryable(error) from None
            raise error from None

        if status < 300:
            body = json_or_none(raw)
            if body is None and raw.strip():
                raise ProviderError(f"voice provider sent an unreadable response ({where})", status)
            return body
        if status == 404 and missing_ok:
            return None
        if status == 429 and not retry_429:
            log.warning("voice provider rate-limited %s %s (retry after %s s); not retried", method, path, retry_after)
            raise ProviderError(f"voice provider refused {where} (429): {_provider_message(json_or_none(raw))}",
                                status, retry_after)
        if status == 429 or (status >= 500 and idempotent):
            self._log_retry(method, path, attempt, status)
            raise _Retryable(ProviderError(f"voice provider failed ({where}: {status})", status,
                                           retry_after if status == 429 else None), retry_after)
        if status >= 500:  # a create (not repeated): it may have been carried out before the failure
            raise ProviderError(f"voice provider failed ({where}: {status})", status, maybe_applied=True)
        if status in (401, 403):
            log.error("voice provider rejected our credentials on %s %s (%d)", method, path, status)
            raise ProviderError("voice provider rejected our credentials", status)
        raise ProviderError(f"voice provider refused {where} ({status}): {_provider_message(json_or_none(raw))}", status)

    async def _object(self, method: str, route: str, path: str, *, json: dict[str, Any] | None = None,
                      params: dict[str, Any] | None = None, retry_429: bool = True) -> dict[str, Any]:
        """A request the provider documents as answered by a JSON object (a resource, or a page of them)."""
        answer: dict[str, Any] = await self._request(method, route, path, json=json, params=params,
                                                     retry_429=retry_429)
        return answer

    async def _objects(self, route: str, path: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """A read the provider documents as answered by a JSON array of objects."""
        answer: list[dict[str, Any]] = await self._request("GET", route, path, params=params)
        return answer

    def _log_retry(self, method: str, path: str, attempt: int, status: int | str) -> None:
        if attempt < self.max_attempts:
            log.warning("voice provider %s %s attempt %d/%d failed (%s); retrying", method, path, attempt,
                        self.max_attempts, status)
        else:
            log.warning("voice provider %s %s attempt %d/%d failed (%s); giving up", method, path, attempt,
                        self.max_attempts, status)

    # -- assistants ------------------------------------------------------------------------------

    async def create_assistant(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("POST", "/assistant", "/assistant", json=body)

    async def get_assistant(self, assistant_id: str) -> dict[str, Any]:
        return await self._object("GET", "/assistant/{id}", f"/assistant/{path_segment(assistant_id)}")

    async def list_assistants(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        return await self._objects("/assistant", "/assistant", {"limit": limit} if limit is not None else None)

    async def update_assistant(self, assistant_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("PATCH", "/assistant/{id}", f"/assistant/{path_segment(assistant_id)}", json=body)

    async def delete_assistant(self, assistant_id: str) -> None:
        await self._request("DELETE", "/assistant/{id}", f"/assistant/{path_segment(assistant_id)}", missing_ok=True)

    # -- phone numbers -----------------------------------------------------------------------------

    async def import_phone_number(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("POST", "/phone-number", "/phone-number", json=body)

    async def get_phone_number(self, phone_number_id: str) -> dict[str, Any]:
        return await self._object("GET", "/phone-number/{id}", f"/phone-number/{path_segment(phone_number_id)}")

    async def update_phone_number(self, phone_number_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("PATCH", "/phone-number/{id}", f"/phone-number/{path_segment(phone_number_id)}",
                                  json=body)

    async def delete_phone_number(self, phone_number_id: str) -> None:
        await self._request("DELETE", "/phone-number/{id}", f"/phone-number/{path_segment(phone_number_id)}", missing_ok=True)

    async def list_phone_numbers(self) -> list[dict[str, Any]]:
        return await self._objects("/phone-number", "/phone-number")

    # -- calls -------------------------------------------------------------------------------------

    async def create_call(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("POST", "/call", "/call", json=body)

    async def get_call(self, call_id: str) -> dict[str, Any]:
        return await self._object("GET", "/call/{id}", f"/call/{path_segment(call_id)}")

    async def delete_call(self, call_id: str, body: dict[str, Any]) -> None:
        """Vapi's "Delete Call": the call with its recording, transcript and artifact; a 404 is a call already gone.
        Its 503 (the recordings could not be erased, nothing was deleted) is retried as every 5xx of a DELETE."""
        await self._request("DELETE", "/call/{id}", f"/call/{path_segment(call_id)}", json=body, missing_ok=True)

    async def list_calls(self, *, assistant_id: str | None = None, limit: int | None = None,
                         created_at_ge: str | None = None, created_at_lt: str | None = None) -> list[dict[str, Any]]:
        """Newest first; `created_at_ge`/`created_at_lt` (ISO 8601) bound their createdAt."""
        params = {k: v for k, v in (("assistantId", assistant_id), ("limit", limit), ("createdAtGe", created_at_ge),
                                    ("createdAtLt", created_at_lt)) if v is not None}
        return await self._objects("/call", "/call", params=params or None)

    # -- credentials -------------------------------------------------------------------------------

    async def create_credential(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("POST", "/credential", "/credential", json=body)

    async def list_credentials(self) -> list[dict[str, Any]]:
        return await self._objects("/credential", "/credential")

    # -- evals and eval runs -----------------------------------------------------------------------

    async def create_eval(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("POST", "/eval", "/eval", json=body)

    async def get_eval(self, eval_id: str) -> dict[str, Any]:
        return await self._object("GET", "/eval/{id}", f"/eval/{path_segment(eval_id)}")

    async def update_eval(self, eval_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._object("PATCH", "/eval/{id}", f"/eval/{path_segment(eval_id)}", json=body)

    async def delete_eval(self, eval_id: str) -> None:
        await self._request("DELETE", "/eval/{id}", f"/eval/{path_segment(eval_id)}")

    async def list_evals(self, *, limit: int | None = None, page: int | None = None) -> dict[str, Any]:
        """`{"results": [...], "metadata": {...}}`, newest first."""
        return await self._object("GET", "/eval", "/eval", params=_page_params(limit, page))

    async def run_eval(self, body: dict[str, Any]) -> dict[str, Any]:
        """The run as created (`queued`). A 429 is raised at once (status 429, `retry_after`), never retried here."""
        return await self._object("POST", "/eval/run", "/eval/run", json=body, retry_429=False)

    create_eval_run = run_eval  # the name of the first version

    async def get_eval_run(self, run_id: str) -> dict[str, Any]:
        return await self._object("GET", "/eval/run/{id}", f"/eval/run/{path_segment(run_id)}")

    async def list_eval_runs(self, *, limit: int | None = None, page: int | None = None) -> dict[str, Any]:
        """`{"results": [...], "metadata": {...}}`, newest first."""
        return await self._object("GET", "/eval/run", "/eval/run", params=_page_params(limit, page))

    async def delete_eval_run(self, run_id: str) -> None:
        await self._request("DELETE", "/eval/run/{id}", f"/eval/run/{path_segment(run_id)}")


def _page_params(limit: int | None, page: int | None) -> dict[str, Any] | None:
    params = {k: v for k, v in (("limit", limit), ("page", page)) if v is not None}
    return params or None
