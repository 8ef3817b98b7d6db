"""Requests the simulator makes to the customer's server, as Twilio makes them: a form-encoded POST signed with
`X-Twilio-Signature` over the exact URL and parameters, keyed with the account's auth token, with an
`I-Twilio-Idempotency-Token` that stays the same when the same request is sent again."""
from __future__ import annotations

import asyncio
import logging
import secrets

import aiohttp

from providers.messaging.signatures import SIGNATURE_HEADER, sign

log = logging.getLogger(__name__)

USER_AGENT = "TwilioProxy/1.1"
IDEMPOTENCY_HEADER = "I-Twilio-Idempotency-Token"
TIMEOUT = 15.0  # seconds Twilio waits for an answer, and for all the attempts at one request (tt)
RETRIES = 1  # a request whose connection failed is made once more (rc=1, rp=ct)


def new_idempotency_token() -> str:
    return secrets.token_hex(16)


async def post_signed(url: str, params: dict[str, str], signing_token: str, *, idempotency_token: str,
                      timeout: float = TIMEOUT) -> tuple[int, str, str]:
    """POST `params` to `url`; the answer's status, content type and text. Raises aiohttp.ClientError or
    asyncio.TimeoutError when the server cannot be reached or does not answer in time."""
    headers = {SIGNATURE_HEADER: sign(signing_token, url, params), IDEMPOTENCY_HEADER: idempotency_token,
               "User-Agent": USER_AGENT, "Accept": "*/*"}
    async with aiohttp.ClientSession() as session, session.post(
            url, data=params, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout),
            allow_redirects=False) as r:
        return r.status, r.content_type, await r.text()


def connection_failed(exc: BaseException) -> bool:
    """A request that never reached the server's answer: no connection made, or the connection lost before any
    answer (a time-out waiting for the answer is not one)."""
    return isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError))


async def post_with_retry(url: str, params: dict[str, str], signing_token: str, *, what: str,
                          idempotency_token: str | None = None) -> int | None:
    """Deliver one callback with Twilio's default connection settings (its webhook connection overrides unset):
    retried once (rc=1), only when the connection failed (rp=ct), at once and with the same idempotency token,
    all within 15 s (tt); an answer, 5xx included, or a time-out waiting for one, is final. The status our server
    answered, None if it never answered."""
    token, deadline = idempotency_token or new_idempotency_token(), asyncio.get_running_loop().time() + TIMEOUT
    for attempt in range(1, RETRIES + 2):
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            break
        try:
            status, _, _ = await post_signed(url, params, signing_token, idempotency_token=token, timeout=left)
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.info("%s to %s failed: %s (attempt %d)", what, url, type(exc).__name__, attempt)
            if connection_failed(exc):
                continue
            return None
        if status >= 300:
            log.info("%s to %s answered %d; not retried", what, url, status)
        return status
    log.warning("%s to %s could not be delivered", what, url)
    return None
