"""What the platform needs from an SMS provider, independent of the HTTP client behind it.

Payloads are the provider's own JSON objects (Twilio's Message and Account resources, snake_case as its
REST API returns them): the adapter is a transport, the messaging service decides what to send and how to
read a status. Every failure is a `ProviderError` whose message is safe to show an API user (never the auth
token, never a raw 5xx body), with the provider's HTTP status and its numeric error code, so the service can
tell a refused number (400, 21211) from bad credentials (401, 20003) from an outage (None or 5xx).
"""
from __future__ import annotations

from typing import Any, Protocol

# Twilio's refusal of a send to a recipient who replied STOP (or another opt-out keyword) to that sender: its
# default opt-out handling (on for long codes and toll-free numbers) keeps a block until they reply START.
UNSUBSCRIBED_RECIPIENT = 21610

# What the carrier error codes of a status callback's ErrorCode (and a Message's error_code) mean, in Twilio's
# words (its error dictionary). A status callback carries the code alone: Twilio sends no ErrorMessage parameter.
CARRIER_ERRORS = {
    30001: "Queue overflow",
    30002: "Account suspended",
    30003: "Unreachable destination handset",
    30004: "Message blocked",
    30005: "Unknown destination handset",
    30006: "Landline or unreachable carrier",
    30007: "Message filtered",
    30008: "Unknown error",
}


def carrier_error(code: str) -> str:
    """What a status callback's ErrorCode means: Twilio's words for it, else the code itself."""
    try:
        meaning = CARRIER_ERRORS.get(int(code))
    except ValueError:
        meaning = None
    return f"{meaning} ({code})" if meaning else f"the carrier reported error {code}"


class ProviderError(Exception):
    """The SMS provider failed or refused a request.

    `status`: the provider's HTTP status (None when it could not be reached or timed out);
    `code`: the provider's numeric error code (Twilio's, e.g. 21211) when it gave one;
    `maybe_done`: the request reached the provider and no answer came back (a time-out, a dropped connection), so
    it may have been carried out: a text may have gone out.
    """

    def __init__(self, message: str, status: int | None = None, code: int | None = None, maybe_done: bool = False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.maybe_done = maybe_done

    def __repr__(self) -> str:
        return (f"ProviderError({self.message!r}, status={self.status!r}, code={self.code!r}, "
                f"maybe_done={self.maybe_done!r})")


class MessagingProvider(Protocol):
    async def send_message(self, *, to: str, from_: str, body: str, status_callback: str | None = None) -> dict[str, Any]:
        """Send one text; the Message resource as created (status `queued`). Never retried: a repeat could
        text someone twice."""

    async def get_message(self, sid: str) -> dict[str, Any]:
        """The Message resource as it is now (its status, error_code and error_message)."""

    async def list_messages(self, *, to: str | None = None, from_: str | None = None,
                            page_size: int | None = None) -> list[dict[str, Any]]:
        """The first page of messages, newest first, optionally only those to or from one number."""

    async def redact_message(self, sid: str) -> dict[str, Any] | None:
        """The message's body redacted at the provider (Twilio: a POST of an empty Body to the Message resource),
        and any media it carries deleted: the Message resource after (its body "", its media listed no more); None
        when the provider has no such message (deleted, or never kept). Safe to repeat: a redacted message is
        redacted again, a deleted media is not there to delete."""

    async def check(self) -> dict[str, Any]:
        """The Account resource; raises `ProviderError` when the provider is unreachable or refuses us
        (health checks)."""

    async def close(self) -> None: ...
