"""Owner dashboard: the magic-link sign-in and a minimal landing page."""
from __future__ import annotations

import hashlib
import hmac
import time

import grpc
from aiohttp import web

from core.grpc_errors import from_rpc_error
from gateway.context import deps
from switchboard.v1 import accounts_pb2

SESSION_COOKIE = "sb_session"

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Switchboard</title></head><body>
<h1>Switchboard dashboard</h1><p>{body}</p></body></html>"""


def page(body: str) -> str:
    """A dashboard page around `body` (HTML the caller has escaped)."""
    return _PAGE.format(body=body)


def form_token(session_token: str) -> str:
    """What the dashboard's forms carry to prove they come from its own pages: derived from the session, which a
    page elsewhere cannot read (HttpOnly cookie)."""
    return hmac.new(session_token.encode(), b"switchboard dashboard form", hashlib.sha256).hexdigest()


def form_token_holds(session_token: str, given) -> bool:
    return bool(session_token) and isinstance(given, str) and hmac.compare_digest(form_token(session_token), given)


def _next_path(value: str) -> str:
    """Where to go after signing in: a path on this site only (never another origin)."""
    return value if value.startswith("/") and not value.startswith(("//", "/\\")) else "/dashboard"


async def login(request: web.Request) -> web.Response:
    token = request.query.get("token", "")
    try:
        session = await deps(request).clients["accounts"].RedeemMagicLink(accounts_pb2.RedeemMagicLinkRequest(token=token))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return web.Response(status=err.http_status, content_type="text/html",
                            text=_PAGE.format(body=f"Sign-in failed: {err.message}."))
    response = web.HTTPSeeOther(_next_path(request.query.get("next", "")))
    max_age = int(session.expires_at.ToSeconds() - time.time())
    response.set_cookie(SESSION_COOKIE, session.session_token, httponly=True, samesite="Lax", path="/",
                        max_age=max_age, secure=request.secure)
    return response


# Where the card checkout sends the owner back (services.accounts.payments_service.open_checkout).
CHECKOUT_RETURNS = {
    "complete": "Checkout complete: your trial has started and your intake agent and phone number are being set "
                "up (GET /api/v1/workspaces?id=&lt;business_id&gt; shows how far). Open the magic link from your "
                "signup to sign in.",
    "canceled": "Checkout canceled: nothing was charged. Open the checkout_url from your signup again to start "
                "your trial.",
}


async def home(request: web.Request) -> web.Response:
    returned = CHECKOUT_RETURNS.get(request.query.get("checkout", ""))
    if returned and SESSION_COOKIE not in request.cookies:
        return web.Response(content_type="text/html", text=_PAGE.format(body=returned))
    if SESSION_COOKIE not in request.cookies:
        return web.Response(status=401, content_type="text/html",
                            text=_PAGE.format(body="Not signed in: open the magic link from your signup."))
    return web.Response(content_type="text/html", text=_PAGE.format(
        body="Signed in. Manage API keys with GET/POST/PATCH/DELETE /api/v1/keys using this session. "
             '<a href="/dashboard/connections">Connected assistants</a> lists the AI assistants you signed in to '
             "the connector, and revokes them."))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/dashboard/login", login)
    app.router.add_get("/dashboard", home)
