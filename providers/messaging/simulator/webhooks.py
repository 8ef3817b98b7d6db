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
TIMEOUT = 15.0  # seconds Twilio waits for an answer


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


async def post_with_retries(url: str, params: dict[str, str], signing_token: str, *, attempts: int,
                            pause: float, what: str, idempotency_token: str | None = None) -> int | None:
    """Deliver one callback: repeated on connection errors, time-outs and 5xx (the same idempotency token each
    time), at most `attempts` times, `pause` × attempt apart. The last status, None if never answered."""
    token, status = idempotency_token or new_idempotency_token(), None
    for attempt in range(1, attempts + 1):
        try:
            status, _, _ = await post_signed(url, params, signing_token, idempotency_token=token)
            if status < 500:
                return status
            log.info("%s to %s answered %d (attempt %d/%d)", what, url, status, attempt, attempts)
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.info("%s to %s failed: %s (attempt %d/%d)", what, url, type(exc).__name__, attempt, attempts)
        if attempt < attempts:
            await asyncio.sleep(pause * attempt)
    log.warning("%s to %s was not accepted after %d attempts", what, url, attempts)
    return status
