"""Where the platform may send a request a user asked for (webhook receivers, an agent's custom tools): a URL's
form, and the addresses its host resolves to. Checked when the URL is saved; core.outbound's resolver checks the
addresses again at every request."""
from __future__ import annotations

import asyncio
import socket

from core.errors import invalid
from core.outbound import address_refusal
from core.settings import Settings
from core.urls import split_url


def allow_loopback(cfg: Settings) -> bool:
    """Loopback receivers are for a developer's own machine: the local stack, or an explicit setting."""
    return cfg.environment == "local" or cfg.webhooks_allow_loopback


def check_url(url: str, field: str) -> tuple[str, int]:
    """(host, port) of a well-formed http(s) URL without credentials, or 400 naming `field`."""
    if len(url) > 2000:
        raise invalid(f"{field} must be at most 2000 characters")
    parts = split_url(url.strip(), field)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise invalid(f"{field} must be an http(s) URL such as https://example.com/hooks")
    if parts.username or parts.password:
        raise invalid(f"{field} must not carry credentials")
    if not parts.hostname.isascii():
        raise invalid(f"{field} host must be ASCII: write an international domain in its punycode form (xn--...)")
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


async def check_destination(url: str, allow_loopback: bool, field: str, what: str) -> None:
    """400 unless every address the URL's host resolves to may receive `what` (e.g. "webhooks")."""
    host, port = check_url(url, field)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):  # UnicodeError: a label IDNA refuses, e.g. an empty one in a..b
        raise invalid(f"{field} host {host} does not resolve") from None
    for info in infos:
        why = address_refusal(str(info[4][0]), allow_loopback)
        if why:
            hint = " (the local stack accepts loopback URLs)" if why == "a loopback address" else ""
            raise invalid(f"{field} host {host} resolves to {why}; {what} go to public addresses only{hint}")
