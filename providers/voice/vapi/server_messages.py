"""The provider's server messages to us (call statuses, end-of-call reports, inbound assistant requests, tool calls,
transfer destination requests):
where they go, the webhook credential that signs them, and checking that signature.

The provider POSTs `{"message": {...}}` to the server URL of the assistant (or of the call's overrides).
A webhook credential referenced by `server.credentialId` makes it authenticate each message, by one of two
plans (VOICE_WEBHOOK_AUTH): hmac (the default), hex HMAC-SHA256 under our secret over `{timestamp}.{body}` in
the `x-signature` header with the Unix time in `x-timestamp` (seconds, or milliseconds when it has 13 digits: the
provider does not document the unit); or bearer, our secret as a bearer token in
`Authorization`. We register that credential once per plan and secret (its name carries the secret's
fingerprint, as the provider never shows a secret back) and refuse any message that does not carry it, or whose
time is more than TOLERANCE away.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.constant_time import same_secret
from core.errors import invalid
from core.settings import Settings
from providers.voice.port import ProviderError
from providers.voice.vapi.client import VapiClient

log = logging.getLogger(__name__)

MESSAGES_PATH = "/api/v1/providers/voice/messages"
SIGNATURE_HEADER, TIMESTAMP_HEADER, AUTHORIZATION_HEADER = "x-signature", "x-timestamp", "Authorization"
TOLERANCE = timedelta(minutes=5)
MILLISECOND_DIGITS = 13  # an x-timestamp this long is in milliseconds (seconds have 10 digits until 2286)


# The messages that need no answer and move a call (status updates, end-of-call reports): the gateway stores them
# on the PROVIDER stream (core.bus) under this subject and the calls service applies them in batches. Every other
# type (an assistant-request wants its answer within the provider's timeout) goes to the calls service at once.
QUEUED_TYPES = ("status-update", "end-of-call-report")
QUEUED_SUBJECT = "provider.voice.messages"
# The messages whose answer the provider uses and we give (who answers an inbound call, the results of the model's
# calls of our tools, where a transfer with no destination of its own goes): the calls service answers them at once
# over RPC. Every
# other type (the provider's defaults send conversation-update, speech-update, hang, user-interrupted and more
# during each call) is acknowledged by the gateway alone: nothing of ours follows from it.
ANSWERED_TYPES = ("assistant-request", "tool-calls", "transfer-destination-request")

AUTH_KINDS = ("hmac", "bearer")


AUTH_HEADERS = (SIGNATURE_HEADER, TIMESTAMP_HEADER, AUTHORIZATION_HEADER)  # what the gateway passes on


def hmac_plan(secret: str) -> dict[str, Any]:
    return {"type": "hmac", "secretKey": secret, "algorithm": "sha256", "signatureHeader": SIGNATURE_HEADER,
            "timestampHeader": TIMESTAMP_HEADER, "payloadFormat": "{timestamp}.{body}"}


def bearer_plan(token: str) -> dict[str, Any]:
    return {"type": "bearer", "token": token, "headerName": AUTHORIZATION_HEADER, "bearerPrefixEnabled": True}


@dataclass(frozen=True)
class WebhookAuth:
    """How the provider authenticates its server messages to us: the plan of the webhook credential we register
    (hmac, the default, or bearer) and its secret. Only that plan is accepted; anything else is refused.
    `credential_id`: that credential's id at the provider when it is configured (VOICE_WEBHOOK_CREDENTIAL_ID)."""

    kind: str
    secret: str
    credential_id: str = ""

    def __post_init__(self) -> None:
        if self.kind not in AUTH_KINDS:
            raise ValueError(f"VOICE_WEBHOOK_AUTH must be one of {', '.join(AUTH_KINDS)}, not {self.kind!r}")

    @classmethod
    def of(cls, settings: Settings) -> WebhookAuth:
        return cls(settings.voice_webhook_auth, settings.voice_webhook_secret.reveal(),
                   settings.voice_webhook_credential_id.strip())

    def plan(self) -> dict[str, Any]:
        return hmac_plan(self.secret) if self.kind == "hmac" else bearer_plan(self.secret)

    def credential_name(self) -> str:
        fingerprint = hashlib.sha256(self.secret.encode()).hexdigest()[:12]
        return f"switchboard-{fingerprint}" if self.kind == "hmac" else f"switchboard-{self.kind}-{fingerprint}"

    def refusal(self, body: bytes, headers: dict[str, str], now: float) -> str | None:
        """Why a server message is not accepted, or None when it carries our credential and is recent."""
        if self.kind == "hmac":
            return _hmac_refusal(self.secret, body, headers.get(SIGNATURE_HEADER, ""),
                                 headers.get(TIMESTAMP_HEADER, ""), now)
        return _bearer_refusal(self.secret, body, headers.get(AUTHORIZATION_HEADER, ""), now)


def _hmac_refusal(secret: str, body: bytes, signature: str, timestamp: str, now: float) -> str | None:
    if not signature or not timestamp:
        return f"server messages must carry the {SIGNATURE_HEADER} and {TIMESTAMP_HEADER} headers"
    if not (signature.isascii() and timestamp.isascii()):
        return f"{SIGNATURE_HEADER} (hex) and {TIMESTAMP_HEADER} (Unix time) must be ASCII"
    if not timestamp.isdigit():
        return f"{TIMESTAMP_HEADER} must be a Unix time in seconds or milliseconds"
    if abs(now - _sent_seconds(timestamp)) > TOLERANCE.total_seconds():
        return f"{TIMESTAMP_HEADER} is more than {int(TOLERANCE.total_seconds())} seconds away from now"
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    if not same_secret(signature.strip().lower(), expected):
        return "the signature does not match the body"
    return None


def _sent_seconds(timestamp: str) -> float:
    """An x-timestamp's Unix time in seconds: the provider does not say whether it sends seconds or milliseconds, so
    both are read, by their length."""
    return int(timestamp) / 1000 if len(timestamp) >= MILLISECOND_DIGITS else int(timestamp)


def _bearer_refusal(token: str, body: bytes, authorization: str, now: float) -> str | None:
    """A bearer token proves the sender but not the time, so the message's own timestamp (milliseconds) must be
    recent: a captured message cannot be replayed later."""
    scheme, _, presented = authorization.partition(" ")
    if scheme.lower() != "bearer" or not presented:
        return f"server messages must carry the {AUTHORIZATION_HEADER} header with our bearer token"
    if not same_secret(presented.strip(), token):
        return "the bearer token is not ours"
    try:
        sent = json.loads(body)["message"]["timestamp"] / 1000
    except (ValueError, KeyError, TypeError):
        return "a server message carries message.timestamp (milliseconds since the epoch)"
    if abs(now - sent) > TOLERANCE.total_seconds():
        return f"message.timestamp is more than {int(TOLERANCE.total_seconds())} seconds away from now"
    return None


class ServerConfig:
    """The `server` object our calls and assistants carry, with the credential registered on first use.

    The provider's OpenAPI document has no `/credential` route (only its guides show `POST /credential`), and
    none documents listing credentials or what a credential's answer shows. So a configured credential id
    (VOICE_WEBHOOK_CREDENTIAL_ID) is the primary path and nothing is asked; without one, discovery is a
    convenience: a credential of ours found by name (which carries the secret's fingerprint: no secret is ever
    read back), else one created, whose id is logged to be configured."""

    def __init__(self, voice: VapiClient, auth: WebhookAuth, base_url: str):
        self.voice, self.auth, self.url = voice, auth, base_url.rstrip("/") + MESSAGES_PATH
        self._credential_id: str | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> dict[str, Any]:
        return {"url": self.url, "credentialId": await self._credential()}

    async def _credential(self) -> str:
        async with self._lock:
            if self._credential_id is None:
                self._credential_id = self.auth.credential_id or await self._discover()
            return self._credential_id

    async def _discover(self) -> str:
        name = self.auth.credential_name()
        try:
            found = [c for c in await self.voice.list_credentials() if c.get("name") == name]
        except ProviderError as exc:
            if exc.status is None or exc.status >= 500 or exc.status in (401, 403):
                raise
            log.warning("the voice provider does not list credentials (%s); creating one", exc.status)
            found = []
        if found:
            return str(found[0]["id"])
        made = await self.voice.create_credential(
            {"provider": "webhook", "name": name, "authenticationPlan": self.auth.plan()})
        log.warning("registered webhook credential %s at the voice provider: set VOICE_WEBHOOK_CREDENTIAL_ID=%s so "
                    "that no process has to find or create it again", made["id"], made["id"])
        return str(made["id"])


def message_of(payload: object) -> dict[str, Any]:
    """The `message` of a server message body, checked for what every message carries."""
    message = payload.get("message") if isinstance(payload, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise invalid("a server message is {\"message\": {\"type\": ..., \"call\": {...}}}")
    call = message.get("call")
    if message["type"] in (*QUEUED_TYPES, *ANSWERED_TYPES) and not (
            isinstance(call, dict) and isinstance(call.get("id"), str)):
        raise invalid(f"a {message['type']} message names its call (message.call.id)")
    return message
