"""Fetching a client ID metadata document: the OAuth client_id is the https URL of a JSON document naming the client
and its redirect URIs. The URL comes from whoever opens an authorization request, so it is fetched through
core.outbound's guarded client: public addresses only (loopback too on a developer's stack), whether named or
written as an address, no redirect, a few seconds and 64 KiB at most."""
from __future__ import annotations

import json
from typing import Any

import aiohttp

from core.outbound import GuardedClient, RefusedAddress, TooLarge
from services.accounts.identity.oauth_domain import OAuthError

MAX_BYTES = 64 * 1024
TIMEOUT_SECONDS = 5.0
USER_AGENT = "Switchboard-OAuth/1.0"


class ClientDocuments:
    def __init__(self, allow_loopback: bool):
        self.allow_loopback = allow_loopback
        self._http = GuardedClient(allow_loopback, timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS),
                                   max_bytes=MAX_BYTES, limit=20,
                                   headers={"User-Agent": USER_AGENT, "Accept": "application/json"})

    async def close(self) -> None:
        await self._http.close()

    async def fetch(self, url: str) -> Any:
        """The document's JSON, or OAuthError invalid_client saying why it could not be had."""
        def refused(why: str) -> OAuthError:
            return OAuthError("invalid_client", f"could not fetch the client ID metadata document {url}: {why}")

        try:
            async with self._http.request("GET", url) as r:
                if r.status != 200:
                    raise refused(f"it answered {r.status}")
                raw = await self._http.read(r)
        except RefusedAddress as exc:
            raise refused(str(exc)) from None
        except TooLarge:
            raise refused(f"it is larger than {MAX_BYTES // 1024} KiB") from None
        except TimeoutError:
            raise refused(f"no answer within {TIMEOUT_SECONDS:g}s") from None
        except aiohttp.ClientConnectorError:
            raise refused("could not connect") from None
        except aiohttp.ClientError as exc:
            raise refused(type(exc).__name__) from None
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise refused("it is not JSON") from None
