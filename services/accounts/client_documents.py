"""Fetching a client ID metadata document: the OAuth client_id is the https URL of a JSON document naming the client
and its redirect URIs. The URL comes from whoever opens an authorization request, so the fetch goes only to public
addresses (core.outbound's resolver; loopback too on a developer's stack), follows no redirect, waits at most a few
seconds and reads at most 64 KiB."""
from __future__ import annotations

import asyncio
import json

import aiohttp

from core.outbound import RefusedAddress, SafeResolver
from services.accounts.oauth_domain import OAuthError

MAX_BYTES = 64 * 1024
TIMEOUT_SECONDS = 5.0
USER_AGENT = "Switchboard-OAuth/1.0"


class ClientDocuments:
    def __init__(self, allow_loopback: bool):
        self.allow_loopback = allow_loopback
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=SafeResolver(self.allow_loopback), use_dns_cache=False, limit=20)
            self._session = aiohttp.ClientSession(connector=connector,
                                                  timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS),
                                                  headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def fetch(self, url: str):
        """The document's JSON, or OAuthError invalid_client saying why it could not be had."""
        def refused(why: str) -> OAuthError:
            return OAuthError("invalid_client", f"could not fetch the client ID metadata document {url}: {why}")

        try:
            async with self._http().get(url, allow_redirects=False) as r:
                if r.status != 200:
                    raise refused(f"it answered {r.status}")
                raw = await r.content.read(MAX_BYTES + 1)
        except asyncio.TimeoutError:
            raise refused(f"no answer within {TIMEOUT_SECONDS:g}s") from None
        except aiohttp.ClientConnectorError as exc:
            cause = exc.os_error if isinstance(exc.os_error, RefusedAddress) else "could not connect"
            raise refused(str(cause)) from None
        except aiohttp.ClientError as exc:
            raise refused(type(exc).__name__) from None
        if len(raw) > MAX_BYTES:
            raise refused(f"it is larger than {MAX_BYTES // 1024} KiB")
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise refused("it is not JSON") from None
