"""The real HTTP client for the voice-AI provider's public REST API (Vapi).

Retries follow what is safe to repeat: reads, updates and deletes are retried on
429, 5xx, time-outs and connection errors; creates (POST) only on 429 and on a
connection that could not be opened, because the provider has no idempotency key
and a create that timed out may have happened. Backoff is exponential with jitter
and honours a numeric Retry-After, capped. Every failure is a `ProviderError`.
"""
from __future__ import annotations

import asyncio
import logging
from urllib.parse import quote

import aiohttp
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_random_exponential

from providers.voice.adapter import ProviderError

log = logging.getLogger(__name__)

MESSAGE_MAX = 300


class _Retryable(Exception):
    """An attempt that failed in a way worth repeating; carries the error to raise if attempts run out."""

    def __init__(self, error: ProviderError, retry_after: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def _provider_message(body) -> str:
    """The provider's own explanation of a 4xx (`message` may be a list), trimmed."""
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, list):
        message = "; ".join(str(m) for m in message)
    text = str(message or (body.get("error") if isinstance(body, dict) else "") or "no details")
    return text[:MESSAGE_MAX]


def _retry_after(headers) -> float | None:
    try:
        return max(0.0, float(headers.get("Retry-After", "")))
    except ValueError:
        return None


class VapiClient:
    """`VoiceProvider` over the provider's REST API (`Authorization: Bearer <private key>`)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 5.0, max_attempts: int = 4,
                 backoff_base: float = 0.2, backoff_max: float = 5.0):
        self.base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self.timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_random_exponential(multiplier=self.backoff_base, max=self.backoff_max)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(max(backoff, exc.retry_after), self.backoff_max)
        return backoff

    async def _request(self, method: str, path: str, *, json: dict | None = None, params: dict | None = None,
                       missing_ok: bool = False):
        retrying = AsyncRetrying(stop=stop_after_attempt(self.max_attempts), wait=self._wait,
                                 retry=retry_if_exception(lambda e: isinstance(e, _Retryable)), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    n = attempt.retry_state.attempt_number
                    return await self._attempt(method, path, json, params, missing_ok, n)
        except _Retryable as exc:
            raise exc.error from None

    async def _attempt(self, method: str, path: str, json, params, missing_ok: bool, attempt: int):
        idempotent = method != "POST"
        where = f"{method} {path}"
        try:
            async with self._http().request(method, self.base_url + path, json=json, params=params) as r:
                body = await r.json(content_type=None) if r.content_length != 0 else None
                status, retry_after = r.status, _retry_after(r.headers)
        except aiohttp.ClientConnectorError as exc:  # nothing was sent: safe to repeat any request
            self._log_retry(where, attempt, "connect failed")
            raise _Retryable(ProviderError(f"voice provider unreachable ({where}): {type(exc).__name__}")) from None
        except (asyncio.TimeoutError, aiohttp.ClientError, ValueError) as exc:
            error = ProviderError(f"voice provider unreachable ({where}): "
                                  f"{'timed out' if isinstance(exc, asyncio.TimeoutError) else type(exc).__name__}")
            if idempotent:
                self._log_retry(where, attempt, type(exc).__name__)
                raise _Retryable(error) from None
            raise error from None
        if status < 300:
            return body
        if status == 404 and missing_ok:
            return None
        if status == 429 or (status >= 500 and idempotent):
            self._log_retry(where, attempt, status)
            raise _Retryable(ProviderError(f"voice provider failed ({where}: {status})", status), retry_after)
        if status >= 500:
            raise ProviderError(f"voice provider failed ({where}: {status})", status)
        if status in (401, 403):
            log.error("voice provider rejected our credentials on %s (%s)", where, status)
            raise ProviderError("voice provider rejected our credentials", status)
        raise ProviderError(f"voice provider refused {where} ({status}): {_provider_message(body)}", status)

    def _log_retry(self, where: str, attempt: int, why) -> None:
        if attempt < self.max_attempts:
            log.warning("voice provider %s failed (%s) on attempt %d; retrying", where, why, attempt)

    # -- assistants ------------------------------------------------------------------

    async def create_assistant(self, body: dict) -> dict:
        return await self._request("POST", "/assistant", json=body)

    async def get_assistant(self, assistant_id: str) -> dict:
        return await self._request("GET", f"/assistant/{quote(assistant_id, safe='')}")

    async def list_assistants(self, *, limit: int | None = None) -> list[dict]:
        return await self._request("GET", "/assistant", params={"limit": limit} if limit else None)

    async def update_assistant(self, assistant_id: str, body: dict) -> dict:
        return await self._request("PATCH", f"/assistant/{quote(assistant_id, safe='')}", json=body)

    async def delete_assistant(self, assistant_id: str) -> None:
        await self._request("DELETE", f"/assistant/{quote(assistant_id, safe='')}", missing_ok=True)

    # -- phone numbers -----------------------------------------------------------------

    async def import_phone_number(self, body: dict) -> dict:
        return await self._request("POST", "/phone-number", json=body)

    async def get_phone_number(self, phone_number_id: str) -> dict:
        return await self._request("GET", f"/phone-number/{quote(phone_number_id, safe='')}")

    async def update_phone_number(self, phone_number_id: str, body: dict) -> dict:
        return await self._request("PATCH", f"/phone-number/{quote(phone_number_id, safe='')}", json=body)

    async def delete_phone_number(self, phone_number_id: str) -> None:
        await self._request("DELETE", f"/phone-number/{quote(phone_number_id, safe='')}", missing_ok=True)

    async def list_phone_numbers(self) -> list[dict]:
        return await self._request("GET", "/phone-number")

    # -- calls ---------------------------------------------------------------------------

    async def create_call(self, body: dict) -> dict:
        return await self._request("POST", "/call", json=body)

    async def get_call(self, call_id: str) -> dict:
        return await self._request("GET", f"/call/{quote(call_id, safe='')}")

    async def list_calls(self, *, assistant_id: str | None = None, limit: int | None = None) -> list[dict]:
        params = {k: v for k, v in (("assistantId", assistant_id), ("limit", limit)) if v}
        return await self._request("GET", "/call", params=params or None)

    # -- evals -----------------------------------------------------------------------------

    async def create_eval(self, body: dict) -> dict:
        return await self._request("POST", "/eval", json=body)

    async def get_eval(self, eval_id: str) -> dict:
        return await self._request("GET", f"/eval/{quote(eval_id, safe='')}")

    async def update_eval(self, eval_id: str, body: dict) -> dict:
        return await self._request("PATCH", f"/eval/{quote(eval_id, safe='')}", json=body)

    async def delete_eval(self, eval_id: str) -> None:
        await self._request("DELETE", f"/eval/{quote(eval_id, safe='')}", missing_ok=True)

    async def create_eval_run(self, body: dict) -> dict:
        return await self._request("POST", "/eval/run", json=body)

    async def get_eval_run(self, run_id: str) -> dict:
        return await self._request("GET", f"/eval/run/{quote(run_id, safe='')}")
