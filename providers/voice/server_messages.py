"""The provider's server messages to us (call statuses, end-of-call reports, inbound assistant requests):
where they go, the webhook credential that signs them, and checking that signature.

The provider POSTs `{"message": {...}}` to the server URL of the assistant (or of the call's overrides).
A webhook credential referenced by `server.credentialId` makes it sign each message with an HMAC plan:
hex HMAC-SHA256 under our secret over `{timestamp}.{body}`, in the `x-signature` header with the Unix time
in `x-timestamp`. We register that credential once per secret (its name carries the secret's fingerprint, as
the provider never shows a secret back) and refuse any message whose signature is wrong or whose timestamp is
more than TOLERANCE away.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
from datetime import timedelta

from providers.voice.adapter import VoiceProvider

MESSAGES_PATH = "/api/v1/providers/voice/messages"
SIGNATURE_HEADER, TIMESTAMP_HEADER = "x-signature", "x-timestamp"
TOLERANCE = timedelta(minutes=5)


def hmac_plan(secret: str) -> dict:
    return {"type": "hmac", "secretKey": secret, "algorithm": "sha256", "signatureHeader": SIGNATURE_HEADER,
            "timestampHeader": TIMESTAMP_HEADER, "payloadFormat": "{timestamp}.{body}"}


def credential_name(secret: str) -> str:
    return f"switchboard-{hashlib.sha256(secret.encode()).hexdigest()[:12]}"


def refusal(secret: str, body: bytes, signature: str, timestamp: str, now: float) -> str | None:
    """Why a server message is not accepted, or None when its signature and timestamp hold."""
    if not signature or not timestamp:
        return f"server messages must carry the {SIGNATURE_HEADER} and {TIMESTAMP_HEADER} headers"
    try:
        sent = int(timestamp)
    except ValueError:
        return f"{TIMESTAMP_HEADER} must be a Unix time in seconds"
    if abs(now - sent) > TOLERANCE.total_seconds():
        return f"{TIMESTAMP_HEADER} is more than {int(TOLERANCE.total_seconds())} seconds away from now"
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature.strip().lower()):
        return "the signature does not match the body"
    return None


class ServerConfig:
    """The `server` object our calls and assistants carry, with the credential registered on first use."""

    def __init__(self, voice: VoiceProvider, secret: str, base_url: str):
        self.voice, self.secret, self.url = voice, secret, base_url.rstrip("/") + MESSAGES_PATH
        self._credential_id: str | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> dict:
        return {"url": self.url, "credentialId": await self._credential()}

    async def _credential(self) -> str:
        async with self._lock:
            if self._credential_id is None:
                name = credential_name(self.secret)
                found = [c for c in await self.voice.list_credentials() if c.get("name") == name]
                made = found[0] if found else await self.voice.create_credential(
                    {"provider": "webhook", "name": name, "authenticationPlan": hmac_plan(self.secret)})
                self._credential_id = made["id"]
            return self._credential_id
