"""The dashboard session cookie: HttpOnly (no script reads it), SameSite=Lax (other sites' forms and requests do not
carry it), Path=/, no Domain, and as long-lived as the session (services.accounts.domain: 7 days after sign-in, or
12 hours unused; the accounts service decides, the cookie only stops being sent).

Where the public URL (PUBLIC_BASE_URL) is https it is Secure and named `__Host-sb_session`: whatever the socket
behind the ingress is, browsers send it over https only, and accept it only from this exact host with Path=/ and no
Domain, so neither a sibling subdomain nor a plain-http response can plant or overwrite it. Browsers refuse a
`__Host-` cookie without Secure, so on a plain-http public URL (the embedded stack) it is `sb_session`, not Secure.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

from core.settings import Settings

PLAIN_NAME, SECURE_NAME = "sb_session", "__Host-sb_session"


def served_over_https(settings: Settings) -> bool:
    return settings.public_base_url.startswith("https://")


def cookie_name(settings: Settings) -> str:
    return name_at(settings.public_base_url)


def name_at(public_url: str) -> str:
    """The cookie's name on a site whose public URL is `public_url`."""
    return SECURE_NAME if public_url.startswith("https://") else PLAIN_NAME


def session_token(request: web.Request, settings: Settings) -> str:
    """The session cookie's value, or "" (a value that is not ASCII is none we set: our tokens are base64url)."""
    token = request.cookies.get(cookie_name(settings), "")
    return token if token.isascii() else ""


def set_session_cookie(response: web.StreamResponse, settings: Settings, token: str, max_age: int) -> None:
    response.set_cookie(cookie_name(settings), token, max_age=max_age, **_attributes(settings))


def clear_session_cookie(response: web.StreamResponse, settings: Settings) -> None:
    # With the same attributes: browsers ignore a `__Host-` cookie, even an expired one, set without Secure.
    response.set_cookie(cookie_name(settings), "", max_age=0, **_attributes(settings))


def _attributes(settings: Settings) -> dict[str, Any]:
    return {"path": "/", "httponly": True, "samesite": "Lax", "secure": served_over_https(settings)}
