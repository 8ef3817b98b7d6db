"""What the platform needs from a voice-AI provider, independent of the HTTP client behind it.

Payloads are the provider's own JSON objects (camelCase, as in its public REST
API): the adapter is a transport, the services decide what to send. Every
failure is a `ProviderError`, a public `provider_error` whose message is safe to
show the caller (never the provider key or a raw 5xx body).
"""
from __future__ import annotations

from typing import Any, Protocol

from core.errors import ServiceError


class ProviderError(ServiceError):
    """The voice provider failed or refused a request.

    `status` is the provider's HTTP status (None when it could not be reached),
    so a caller can tell "not there any more" (404) from an outage. `retry_after`
    is the provider's numeric Retry-After in seconds on a refusal that had one
    (a 429 above all), so a caller that backs off itself knows for how long.
    """

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__("provider_error", message)
        self.status = status
        self.retry_after = retry_after


class VoiceProvider(Protocol):
    # Assistants
    async def create_assistant(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def get_assistant(self, assistant_id: str) -> dict[str, Any]: ...
    async def list_assistants(self, *, limit: int | None = None) -> list[dict[str, Any]]: ...
    async def update_assistant(self, assistant_id: str, body: dict[str, Any]) -> dict[str, Any]: ...
    async def delete_assistant(self, assistant_id: str) -> None:
        """Deleting an assistant that is already gone (404) is not an error."""

    # Phone numbers
    async def import_phone_number(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def get_phone_number(self, phone_number_id: str) -> dict[str, Any]: ...
    async def update_phone_number(self, phone_number_id: str, body: dict[str, Any]) -> dict[str, Any]: ...
    async def delete_phone_number(self, phone_number_id: str) -> None:
        """Deleting a number that is already gone (404) is not an error."""
    async def list_phone_numbers(self) -> list[dict[str, Any]]: ...

    # Calls
    async def create_call(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def get_call(self, call_id: str) -> dict[str, Any]: ...
    async def list_calls(self, *, assistant_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]: ...

    # Credentials (how the provider authenticates its server messages to us)
    async def create_credential(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def list_credentials(self) -> list[dict[str, Any]]: ...

    # Evals (mock conversations with judge plans) and eval runs
    async def create_eval(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def get_eval(self, eval_id: str) -> dict[str, Any]: ...
    async def update_eval(self, eval_id: str, body: dict[str, Any]) -> dict[str, Any]: ...
    async def delete_eval(self, eval_id: str) -> None: ...
    async def list_evals(self, *, limit: int | None = None, page: int | None = None) -> dict[str, Any]:
        """The provider's page: `{"results": [eval, ...], "metadata": {"itemsPerPage", "totalItems",
        "currentPage", ...}}`, newest first."""
    async def run_eval(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start a run (`{"type": "eval", "evalId" | "eval", "target": {"type": "assistant", "assistantId" |
        "assistant", "assistantOverrides"?}}`); returns the run as created (`queued`). Never retried on a 429:
        the `ProviderError` (status 429, `retry_after`) reaches the caller, which backs off."""
    async def get_eval_run(self, run_id: str) -> dict[str, Any]: ...
    async def list_eval_runs(self, *, limit: int | None = None, page: int | None = None) -> dict[str, Any]:
        """Like `list_evals`: `{"results": [run, ...], "metadata": {...}}`."""
    async def delete_eval_run(self, run_id: str) -> None: ...

    async def close(self) -> None: ...
