"""Requests to URLs that callers name (webhook receivers, OAuth client metadata documents): only public addresses.

`SafeResolver` refuses private, link-local, cloud-metadata and (unless allowed, on a developer's own stack) loopback
addresses, and the connection goes to the very addresses it checked, so a DNS answer that changes between a check
and the request (rebinding) gains nothing.
"""
from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver

METADATA_ADDRESSES = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"),
                      ipaddress.ip_address("100.100.100.200")}


class RefusedAddress(OSError):
    pass


def address_refusal(address: str, allow_loopback: bool) -> str | None:
    """Why a resolved address may not be called, or None when it may."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or ip.is_reserved or ip.is_multicast or ip.is_unspecified or not ip.is_global:
        return "a private or reserved address"
    return None


class SafeResolver(AbstractResolver):
    def __init__(self, allow_loopback: bool):
        self.allow_loopback = allow_loopback
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET):
        results = await self._inner.resolve(host, port, family)
        for result in results:
            why = address_refusal(result["host"], self.allow_loopback)
            if why:
                raise RefusedAddress(f"{host} resolves to {why}")
        return results

    async def close(self) -> None:
        await self._inner.close()
