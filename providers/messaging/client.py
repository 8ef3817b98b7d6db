"""The real HTTP client for the SMS provider's REST API (Twilio Programmable Messaging, API version 2010-04-01).

Twilio's conventions: HTTP Basic auth with the Account SID and auth token, form-encoded request bodies,
JSON responses when the path ends in `.json`, and errors as `{"code", "message", "more_info", "status"}`.

Retries follow what is safe to repeat. Reads (GET) are retried on 429, 5xx, time-outs and connection
errors, with exponential backoff and full jitter (a numeric Retry-After is honoured, capped).
`max_attempts` counts the first try. The send (POST .../Messages.json) is NEVER retried, whatever went
wrong: Twilio has no idempotency key for it, and a send that failed or timed out may still go out, so a
repeat could text someone twice. A failed send raises at once; the caller decides (and can look the
message up by its recipient before trying again). A redaction (POST .../Messages/{Sid}.json with an empty Body) and
a media's deletion (DELETE .../Media/{Sid}.json) come to the same result however often they are made: they are
retried as reads are. A number's purchase (POST .../IncomingPhoneNumbers.json) is a
POST too, never repeated: the caller looks the number up among the account's own (`owned_number`).

Every failure is a `ProviderError` whose message is safe to show an API user: for a 4xx, Twilio's own
`message` (it explains the refusal: "The 'To' number ... is not a valid phone number.") with the Account
SID masked; otherwise the route (`GET /Messages/{Sid}`, not the SID), the status and what happened.
Never the auth token, never a 5xx body.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from providers.http import SessionClient, json_or_none, path_segment, retry_after_seconds
from providers.messaging.adapter import ProviderError
from providers.messaging.numbers import OfferedNumber, OwnedNumber, offered, owned

log = logging.getLogger(__name__)

API_VERSION = "2010-04-01"
# What a send gives Messages.json (providers/fidelity compares them with Twilio's document); StatusCallback only
# when there is one.
SEND_PARAMETERS = ("To", "From", "Body", "StatusCallback")
# What a search of AvailablePhoneNumbers/{CountryCode}/Local.json asks (query), and what a purchase gives
# IncomingPhoneNumbers.json: numbers for calls and texts, texts coming to our inbound webhook by POST.
SEARCH_PARAMETERS = ("AreaCode", "SmsEnabled", "VoiceEnabled", "PageSize")
BUY_PARAMETERS = ("PhoneNumber", "SmsUrl", "SmsMethod")
# What a redaction gives the Message resource (POST .../Messages/{Sid}.json): Body, empty (Twilio's documented way).
REDACT_PARAMETERS = ("Body",)
MEDIA_PAGE = 1000  # the most media listed at once (Twilio's largest PageSize)
MESSAGE_MAX = 300
BACKOFF_BASE, BACKOFF_MAX = 0.1, 2.0  # seconds: the first retry within 0.2 s, none later than 2 s


class _Retryable(Exception):
    """A read that failed in a way worth repeating; carries the error to raise once attempts run out."""

    def __init__(self, error: ProviderError, retry_after: float | None = None):
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


def _twilio_code(body: object) -> int | None:
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


class TwilioClient(SessionClient):
    """`MessagingProvider` over Twilio's REST API. One `aiohttp.ClientSession`, opened on first use and closed
    by `close()`; `timeout` bounds each attempt."""

    provider = "sms"

    def __init__(self, base_url: str, account_sid: str, auth_token: str, *, timeout: float = 5.0,
                 max_attempts: int = 3):
        # Unset credentials are not refused here (the service still starts and reports the provider as
        # refusing us): Twilio answers them with 401 or 404 like any wrong ones.
        if max_attempts < 1:
            raise ValueError("max_attempts counts the first try: at least 1")
        self.base_url = base_url.rstrip("/")
        self.account_sid = account_sid
        super().__init__({"Authorization": aiohttp.encode_basic_auth(account_sid, auth_token),
                          "Accept": "application/json"}, timeout)
        self._token = auth_token
        self.max_attempts = max_attempts

    def __repr__(self) -> str:  # never the token
        return f"TwilioClient({self.base_url!r}, {self.account_sid!r})"

    @property
    def _account_path(self) -> str:
        return f"/{API_VERSION}/Accounts/{path_segment(self.account_sid)}"

    # -- the API -------------------------------------------------------------------------------------------

    async def send_message(self, *, to: str, from_: str, body: str, status_callback: str | None = None) -> dict[str, Any]:
        form = dict(zip(SEND_PARAMETERS, (to, from_, body, status_callback or ""), strict=True))
        if not status_callback:
            del form["StatusCallback"]
        return await self._send("/Messages", f"{self._account_path}/Messages.json", form)

    async def get_message(self, sid: str) -> dict[str, Any]:
        return await self._read("/Messages/{Sid}", f"{self._account_path}/Messages/{path_segment(sid)}.json")

    async def list_messages(self, *, to: str | None = None, from_: str | None = None,
                            page_size: int | None = None) -> list[dict[str, Any]]:
        """The first page of messages, newest first, optionally only those to or from one number."""
        params = {k: str(v) for k, v in (("To", to), ("From", from_), ("PageSize", page_size)) if v is not None}
        page = await self._read("/Messages", f"{self._account_path}/Messages.json", params or None)
        return page.get("messages") or []

    async def redact_message(self, sid: str) -> dict[str, Any] | None:
        """The body redacted (Body ""), then each of the message's media deleted; None when Twilio has no such
        message (404)."""
        path = f"{self._account_path}/Messages/{path_segment(sid)}"
        form = dict(zip(REDACT_PARAMETERS, ("",), strict=True))
        try:
            redacted = await self._read("/Messages/{Sid}", f"{path}.json", method="POST", form=form)
        except ProviderError as exc:
            if exc.status == 404:
                return None
            raise
        if int(redacted.get("num_media") or 0) > 0:
            media = await self._read("/Messages/{Sid}/Media", f"{path}/Media.json", {"PageSize": str(MEDIA_PAGE)})
            for item in media.get("media_list") or ():
                await self._delete_media(path, str(item["sid"]))
        return redacted

    async def _delete_media(self, message_path: str, media_sid: str) -> None:
        try:
            await self._read("/Messages/{Sid}/Media/{Sid}", f"{message_path}/Media/{path_segment(media_sid)}.json",
                             method="DELETE")
        except ProviderError as exc:
            if exc.status != 404:  # 404: gone already, which is what was asked
                raise

    async def check(self) -> dict[str, Any]:
        """The Account resource, without its `auth_token` (Twilio returns it; nobody downstream needs it)."""
        account = await self._read("/Accounts/{AccountSid}", f"{self._account_path}.json")
        account.pop("auth_token", None)
        return account

    # -- numbers (providers.messaging.numbers.NumberProvider) ---------------------------------------------------

    async def offered_numbers(self, country: str, area_code: str | None, *, limit: int) -> list[OfferedNumber]:
        values = (area_code, "true", "true", str(limit))
        params = {k: v for k, v in zip(SEARCH_PARAMETERS, values, strict=True) if v is not None}
        page = await self._read("/AvailablePhoneNumbers/{CountryCode}/Local",
                                f"{self._account_path}/AvailablePhoneNumbers/{path_segment(country)}/Local.json", params)
        return [offered(r) for r in page.get("available_phone_numbers") or ()]

    async def buy_number(self, phone_number: str, sms_url: str) -> OwnedNumber:
        form = dict(zip(BUY_PARAMETERS, (phone_number, sms_url, "POST"), strict=True))
        return owned(await self._send("/IncomingPhoneNumbers", f"{self._account_path}/IncomingPhoneNumbers.json", form))

    async def owned_number(self, phone_number: str) -> OwnedNumber | None:
        page = await self._read("/IncomingPhoneNumbers", f"{self._account_path}/IncomingPhoneNumbers.json",
                                {"PhoneNumber": phone_number})
        found = [r for r in page.get("incoming_phone_numbers") or () if r.get("phone_number") == phone_number]
        return owned(found[0]) if found else None

    async def release_number(self, reference: str) -> None:
        where = "DELETE /IncomingPhoneNumbers/{Sid}"
        path = f"{self._account_path}/IncomingPhoneNumbers/{path_segment(reference)}.json"
        try:
            async with self._http().delete(self.base_url + path) as r:
                status, raw = r.status, await r.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise ProviderError(f"messaging provider unreachable ({where}): {self._reason(exc)}",
                                maybe_done=not isinstance(exc, aiohttp.ClientConnectorError)) from None
        if status >= 300 and status != 404:  # 404: no longer the account's, which is what was asked
            raise self._failure(where, status, raw)

    # -- transport -----------------------------------------------------------------------------------------

    async def _send(self, route: str, path: str, form: dict[str, str]) -> dict[str, Any]:
        """One POST, never repeated: any failure raises at once."""
        where = f"POST {route}"
        try:
            async with self._http().post(self.base_url + path, data=form) as r:
                status, raw = r.status, await r.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            # Not connected at all: nothing was sent. Anything later (a time-out, a dropped connection): it may have.
            maybe_done = not isinstance(exc, aiohttp.ClientConnectorError)
            log.warning("messaging provider %s failed (%s); not retried%s", where, type(exc).__name__,
                        ": it may have been carried out" if maybe_done else "")
            raise ProviderError(f"messaging provider unreachable ({where}): {self._reason(exc)}",
                                maybe_done=maybe_done) from None
        return self._result(where, status, raw)

    async def _read(self, route: str, path: str, params: dict[str, Any] | None = None, *, method: str = "GET",
                    form: dict[str, str] | None = None) -> dict[str, Any]:
        """A request safe to repeat (a read, or a write whose repeat changes nothing more), retried."""
        retrying = AsyncRetrying(stop=stop_after_attempt(self.max_attempts), wait=self._wait,
                                 retry=retry_if_exception_type(_Retryable), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._read_once(route, path, params, attempt.retry_state.attempt_number, method,
                                                 form)
        except _Retryable as exc:
            raise exc.error from None
        raise AssertionError("tenacity stops by raising (reraise=True)")

    async def _read_once(self, route: str, path: str, params: dict[str, Any] | None, attempt: int,
                         method: str = "GET", form: dict[str, str] | None = None) -> dict[str, Any]:
        where = f"{method} {route}"
        try:
            async with self._http().request(method, self.base_url + path, params=params, data=form) as r:
                status, retry_after, raw = r.status, retry_after_seconds(r.headers), await r.read()
        except aiohttp.ClientSSLError:
            raise ProviderError(f"messaging provider unreachable ({where}): TLS failure") from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            self._log_retry(where, attempt, type(exc).__name__)
            raise _Retryable(ProviderError(f"messaging provider unreachable ({where}): {self._reason(exc)}")) \
                from None
        if status == 429 or status >= 500:
            self._log_retry(where, attempt, status)
            raise _Retryable(self._failure(where, status, raw), retry_after)
        return self._result(where, status, raw)

    def _result(self, where: str, status: int, raw: bytes) -> dict[str, Any]:
        if status >= 300:
            raise self._failure(where, status, raw)
        if status == 204:  # a deletion: no content
            return {}
        body = json_or_none(raw)
        if not isinstance(body, dict):
            raise ProviderError(f"messaging provider sent an unreadable response ({where})", status)
        return body

    def _failure(self, where: str, status: int, raw: bytes) -> ProviderError:
        body = json_or_none(raw)
        code = _twilio_code(body)
        if status in (401, 403):
            log.error("messaging provider rejected our credentials on %s (%d, code %s)", where, status, code)
            return ProviderError("messaging provider rejected our credentials", status, code)
        if status >= 500 or status == 429:  # no body: it may carry anything
            return ProviderError(f"messaging provider failed ({where}: {status})", status, code)
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, str) or not message.strip():
            return ProviderError(f"messaging provider refused {where} ({status})", status, code)
        return ProviderError(self._safe(message)[:MESSAGE_MAX], status, code)

    def _safe(self, text: str) -> str:
        """Twilio's message without our credentials (a 404 names the requested path, Account SID included)."""
        if self._token:
            text = text.replace(self._token, "[redacted]")
        return text.replace(self.account_sid, "{AccountSid}") if self.account_sid else text

    @staticmethod
    def _reason(exc: BaseException) -> str:
        if isinstance(exc, asyncio.TimeoutError):
            return "timed out"
        if isinstance(exc, aiohttp.ClientConnectorError):
            return "could not connect"
        return "connection lost"

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_random_exponential(multiplier=BACKOFF_BASE, max=BACKOFF_MAX)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(max(backoff, exc.retry_after), BACKOFF_MAX)
        return backoff

    def _log_retry(self, where: str, attempt: int, what: str | int) -> None:
        verdict = "retrying" if attempt < self.max_attempts else "giving up"
        log.warning("messaging provider %s attempt %d/%d failed (%s); %s", where, attempt, self.max_attempts,
                    what, verdict)
