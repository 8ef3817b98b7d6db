"""What the providers' HTTP clients share: one lazily opened session, and ids made safe as path segments."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import aiohttp

from core import metrics, telemetry
from core.uow import forbid_provider_call


def path_segment(value: str) -> str:
    """An id as one path segment (`/`, `?`, `..` cannot reach another route)."""
    if not isinstance(value, str) or not value:
        raise ValueError("a provider id must be a non-empty string")
    return quote(value, safe="")


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """A numeric Retry-After in seconds (the HTTP-date form is ignored)."""
    try:
        value = float(headers.get("Retry-After", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def json_or_none(raw: bytes) -> Any:
    """A response body as JSON, or None when it is empty or not JSON (a proxy's error page, say)."""
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


class SessionClient:
    """One `aiohttp.ClientSession` with the client's headers, opened on first use and closed by `close()`;
    `timeout` bounds each attempt. Each request is timed under `provider` when metrics are on (core.metrics)."""

    provider = "other"

    def __init__(self, headers: dict[str, str], timeout: float):
        self._headers = headers
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        """The session, for one request (none may be sent while a unit of work is open, core.uow)."""
        forbid_provider_call(type(self).__name__)
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self.timeout,
                                                  trace_configs=[*metrics.provider_traces(self.provider),
                                                                 *telemetry.http_client_traces()])
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
