"""Owner dashboard: the magic-link sign-in and a minimal landing page."""
from __future__ import annotations

import hashlib
import hmac
import time
from html import escape

import grpc
from aiohttp import web

from core.grpc_errors import from_rpc_error
from gateway.context import deps
from switchboard.v1 import accounts_pb2

SESSION_COOKIE = "sb_session"

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Switchboard</title></head><body>
<h1>Switchboard dashboard</h1><p>{body}</p></body></html>"""


def html(body: str, status: int = 200, headers: dict | None = None) -> web.Response:
    """A dashboard page around `body` (HTML the caller has escaped)."""
    return web.Response(status=status, content_type="text/html", text=_PAGE.format(body=body), headers=headers)


def form_token(session_token: str) -> str:
    """What the dashboard's forms carry to prove they come from its own pages: derived from the session, which a
    page elsewhere cannot read (HttpOnly cookie)."""
    return hmac.new(session_token.encode(), b"switchboard dashboard form", hashlib.sha256).hexdigest()


def form_token_holds(session_token: str, given) -> bool:
    return bool(session_token) and isinstance(given, str) and hmac.compare_digest(form_token(session_token), given)


def sign_in_form(next_path: str) -> str:
    """The form that e-mails a sign-in link leading back to `next_path`."""
    return ('<form method="post" action="/dashboard/sign-in"><label>Your account e-mail <input type="email" '
            f'name="email" required></label><input type="hidden" name="next" value="{escape(next_path)}"> '
            '<button type="submit">E-mail me a sign-in link</button></form>')


async def send_sign_in_link(request: web.Request) -> web.Response:
    form = await request.post()
    email, next_path = str(form.get("email", ""))[:320], _next_path(str(form.get("next", "")))
    try:
        await deps(request).clients["accounts"].SendSignInLink(
            accounts_pb2.SendSignInLinkRequest(email=email, next_path=next_path))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return html(f"Could not send a sign-in link: {escape(err.message)}.", err.http_status)
    return html(f"If {escape(email)} belongs to a Switchboard account, a sign-in link is on its way. Open it in this "
                "browser within 15 minutes to go on.")


def _next_path(value: str) -> str:
    """Where to go after signing in: a path on this site only (never another origin)."""
    return value if value.startswith("/") and not value.startswith(("//", "/\\")) else "/dashboard"


async def login(request: web.Request) -> web.Response:
    token = request.query.get("token", "")
    try:
        session = await deps(request).clients["accounts"].RedeemMagicLink(accounts_pb2.RedeemMagicLinkRequest(token=token))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return html(f"Sign-in failed: {escape(err.message)}.", err.http_status)
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
        return html(returned)
    if SESSION_COOKIE not in request.cookies:
        return html("Not signed in: open the magic link from your signup, or get a new one. "
                    + sign_in_form("/dashboard"), 401)
    return html("Signed in. Manage API keys with GET/POST/PATCH/DELETE /api/v1/keys using this session. "
                '<a href="/dashboard/connections">Connected assistants</a> lists the AI assistants you signed in to '
                "the connector, and revokes them.")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/dashboard/login", login)
    app.router.add_get("/dashboard", home)
    app.router.add_post("/dashboard/sign-in", send_sign_in_link)
