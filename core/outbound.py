"""Requests the platform makes on a user's behalf, to URLs a user or a provider names (webhook receivers, OAuth
client metadata documents, call recordings): only to addresses that may be called.

`GuardedClient` is the one way to make them. Its connections resolve names through `SafeResolver`, which refuses
private, link-local, cloud-metadata, tunnelled-IPv4 and (unless allowed, on a developer's own stack) loopback
addresses, and the connection goes to the very addresses it checked, so a DNS answer that changes between a check
and the request (rebinding) gains nothing. aiohttp never asks the resolver about a host that looks like an address
(digits and dots, or a colon), so such a host is checked before connecting, and one that is not an address in
standard form (`2130706433`, `10.1`, `10.0.0.5.`: the system would still read them as addresses) is refused, as
recent aiohttp does too, so the guard does not hang on the library's version.
Redirects are never followed (the caller sees the 3xx), and time and body size are bounded.
"""
from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.helpers import is_ip_address
from aiohttp.resolver import DefaultResolver
from opentelemetry.trace import Span
from yarl import URL

from core import telemetry
from core.uow import forbid_provider_call

# AWS (IPv4, IPv6), Alibaba Cloud, Azure's wireserver (a public address every Azure VM reaches).
METADATA_ADDRESSES = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"),
                      ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("168.63.129.16")}


class RefusedAddress(OSError):
    pass


class TooLarge(Exception):
    pass


def address_refusal(address: str, allow_loopback: bool) -> str | None:
    """Why a resolved address may not be called, or None when it may."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None or ip.teredo is not None:  # 2002::/16, 2001::/32: relays reach the IPv4 inside
            return "a tunnelled IPv4 address (6to4 or Teredo)"
        elif ip.is_site_local:  # fec0::/10: deprecated, yet routed inside some networks
            return "a private or reserved address"
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or ip.is_reserved or ip.is_multicast or ip.is_unspecified or not ip.is_global:
        return "a private or reserved address"
    return None


def host_refusal(host: str, allow_loopback: bool) -> str | None:
    """Why a URL's host may not be called before any name is resolved: aiohttp connects to a host that looks like
    an address (its `is_ip_address`) without asking the resolver. None for a name (the resolver checks it)."""
    if not is_ip_address(host):
        return None
    try:
        return address_refusal(host.strip("[]"), allow_loopback)
    except ValueError:
        return "not an address in standard form"


class SafeResolver(AbstractResolver):
    def __init__(self, allow_loopback: bool) -> None:
        self.allow_loopback = allow_loopback
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            why = address_refusal(result["host"], self.allow_loopback)
            if why:
                raise RefusedAddress(f"{host} resolves to {why}")
        return results

    async def close(self) -> None:
        await self._inner.close()


class GuardedClient:
    """One aiohttp session for requests to URLs callers name. `request` raises RefusedAddress for an address that
    may not be called, besides aiohttp's ClientError and asyncio.TimeoutError; `chunks`/`read` raise TooLarge past
    `max_bytes`. Close it (or use it as an async context manager). Each request is a CLIENT span when spans are
    exported (core.telemetry.http_client_traces), to which `span_hook(span, params)` may add attributes."""

    def __init__(self, allow_loopback: bool, *, timeout: aiohttp.ClientTimeout, max_bytes: int,
                 headers: dict[str, str] | None = None, limit: int = 100, limit_per_host: int = 0,
                 span_hook: Callable[[Span, aiohttp.TraceRequestStartParams], None] | None = None):
        self.allow_loopback, self.timeout, self.max_bytes = allow_loopback, timeout, max_bytes
        self._span_hook = span_hook
        self._headers, self._limits = headers or {}, (limit, limit_per_host)
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        forbid_provider_call("an outbound HTTP request")  # none while a unit of work is open (core.uow)
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=SafeResolver(self.allow_loopback), use_dns_cache=False,
                                             limit=self._limits[0], limit_per_host=self._limits[1])
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout, headers=self._headers,
                                                  trace_configs=telemetry.http_client_traces(self._span_hook))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def __aenter__(self) -> GuardedClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def request(self, method: str, url: str, **kwargs: Any) -> AsyncIterator[aiohttp.ClientResponse]:
        """The response as it comes, a 3xx included: redirects are not followed."""
        try:
            host = URL(url).raw_host
        except ValueError:
            raise aiohttp.InvalidURL(url) from None
        why = host_refusal(host, self.allow_loopback) if host else None
        if why:
            raise RefusedAddress(f"{host} is {why}")
        try:
            async with self._http().request(method, url, allow_redirects=False, **kwargs) as response:
                yield response
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, RefusedAddress):
                raise exc.os_error from None
            raise

    async def chunks(self, response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        """The body as it arrives; TooLarge (before any chunk when the declared length says so) past max_bytes."""
        too_large = f"the response is larger than {self.max_bytes} bytes"
        if (response.content_length or 0) > self.max_bytes:
            raise TooLarge(too_large)
        seen = 0
        async for chunk in response.content.iter_any():
            seen += len(chunk)
            if seen > self.max_bytes:
                raise TooLarge(too_large)
            yield chunk

    async def read(self, response: aiohttp.ClientResponse) -> bytes:
        return b"".join([chunk async for chunk in self.chunks(response)])
