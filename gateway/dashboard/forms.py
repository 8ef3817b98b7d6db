"""How the dashboard's HTML forms resist cross-site request forgery, twice over.

1. Every form post must come from this site by the browser's own word: `Sec-Fetch-Site` same-origin (or none: the
   user typed or bookmarked it), or, from a browser that does not send that header, an `Origin` of this site. A
   request with neither comes from no browser (curl, scripts): it carries no victim's cookies, so it is let through.
   This is what guards the forms used before there is a session (the sign-in form and the magic link's confirm
   button, against login CSRF), where no per-session token can exist. (The same rule as Go's
   net/http.CrossOriginProtection.)
2. Forms of a signed-in page also carry a token derived from the session (`form_token`), which a page elsewhere
   cannot read (the cookie is HttpOnly and this site sends no CORS headers for its pages).
The session cookie is SameSite=Lax as well (gateway.dashboard.session_cookie).
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiDictProxy

from core.constant_time import same_secret
from gateway.context import deps
from gateway.dashboard.layout import html

# A posted form, as aiohttp reads it (its values are text here: the dashboard uploads no files).
Form = MultiDictProxy[str | bytes | bytearray | web.FileField]
FormHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def form_token(session_token: str) -> str:
    """What the dashboard's forms carry to prove they come from its own pages: derived from the session."""
    return hmac.new(session_token.encode(), b"switchboard dashboard form", hashlib.sha256).hexdigest()


def form_token_holds(session_token: str, given: object) -> bool:
    return bool(session_token) and isinstance(given, str) and same_secret(given, form_token(session_token))


def from_this_site(request: web.Request) -> bool:
    """Whether a form post comes from this site's own pages, as far as the browser tells (see the module)."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    public = urlsplit(deps(request).settings.public_base_url)
    return origin in (f"{public.scheme}://{public.netloc}", f"{request.scheme}://{request.host}")


def same_site_form(handler: FormHandler) -> FormHandler:
    """A form handler that first refuses posts another site made the browser send (403)."""
    async def guarded(request: web.Request) -> web.StreamResponse:
        if not from_this_site(request):
            return html("This form was sent from another site, not from the Switchboard dashboard; nothing was "
                        "done. Open the dashboard and try again.", 403)
        return await handler(request)

    return guarded
