"""The client's address, trusting X-Forwarded-For only from configured proxies (addresses or CIDR ranges).

Behind an ingress every request's peer is the ingress: without its range in TRUSTED_PROXIES every per-address
limit (signup's, the public routes') would count the whole internet as one client, so a deployed gateway refuses
to start without it.
"""
from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network

from aiohttp import web

from core.settings import Networks, Settings


def _address(text: str) -> IPv4Address | IPv6Address | None:
    try:
        found = ip_address(text)
    except ValueError:
        return None
    return found.ipv4_mapped or found if isinstance(found, IPv6Address) else found


def is_trusted(text: str, trusted: Networks) -> bool:
    address = _address(text)
    return address is not None and any(address in network for network in trusted)


def client_ip(request: web.Request, trusted_proxies: Networks) -> str:
    """The nearest address in the forwarding chain that is not a trusted proxy."""
    peer = request.remote or ""
    if not is_trusted(peer, trusted_proxies):
        return peer
    hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not is_trusted(hop, trusted_proxies):
            return hop
    return peer


def require_trusted_proxies(settings: Settings) -> None:
    """Outside the local stack, refuse to start without the proxies' range (see the module's docstring)."""
    if settings.environment != "local" and not settings.trusted_proxies:
        raise SystemExit("TRUSTED_PROXIES must be set outside the local stack: the addresses or CIDR ranges of the "
                         "load balancer or ingress controller in front of the gateway (comma-separated, e.g. "
                         "10.244.0.0/16); without it every client behind it shares one rate-limit bucket")


def address_key(address: str) -> str:
    """The client an address counts as in every per-address limit: an IPv6 client by its /64 (a subscriber's usual
    allocation, all of it one client's), any other by itself."""
    try:
        parsed = ip_address(address)
    except ValueError:
        return address
    return str(ip_network(f"{parsed}/64", strict=False)) if isinstance(parsed, IPv6Address) else address
