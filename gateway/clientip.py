"""The client's address, trusting X-Forwarded-For only from configured proxies."""
from __future__ import annotations

from aiohttp import web


def client_ip(request: web.Request, trusted_proxies: tuple[str, ...]) -> str:
    """The nearest address in the forwarding chain that is not a trusted proxy."""
    peer = request.remote or ""
    if peer not in trusted_proxies:
        return peer
    hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if hop not in trusted_proxies:
            return hop
    return peer
