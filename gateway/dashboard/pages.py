"""Owner dashboard: the magic-link sign-in, what every signed-in page shares, and signing out.

A sign-in link is not used by opening it: its page has a button that posts it back (a mail scanner fetching the link,
or another site linking to it, signs nobody in). Every form here is guarded against cross-site forgery
(gateway.dashboard.forms); the session cookie is described in gateway.dashboard.session_cookie.
"""
from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from datetime import time as time_of_day
from html import escape
from typing import Any

import grpc
from aiohttp import web

from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from core.tenant import Tenant
from core.urls import url_parts
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard.forms import Form, form_token_holds, same_site_form
from gateway.dashboard.layout import html, page_text, sign_in_needed
from gateway.dashboard.session_cookie import clear_session_cookie, session_token, set_session_cookie
from gateway.routes.oauth import AUTHORIZE_PATH
from switchboard.v1 import accounts_pb2, common_pb2

HOME, SIGN_IN, LOGIN, LOGOUT = "/dashboard", "/dashboard/sign-in", "/dashboard/login", "/dashboard/logout"
CONNECTIONS_PATH, KEYS_PATH, WEBHOOKS_PATH = "/dashboard/connections", "/dashboard/keys", "/dashboard/webhooks"
NUMBERS_PATH, CALLS_PATH, LEADS_PATH = "/dashboard/numbers", "/dashboard/calls", "/dashboard/leads"
AGENTS_PATH, MESSAGES_PATH = "/dashboard/agents", "/dashboard/messages"
PIPELINE_PATH, RUNS_PATH, EXPORTS_PATH = "/dashboard/pipeline", "/dashboard/runs", "/dashboard/exports"
# The pages a sign-in may lead back to: the dashboard's own, never another site (nor a path of this one that is not
# a page, such as /api/...).
RETURN_PAGES = frozenset({HOME, CONNECTIONS_PATH, KEYS_PATH, WEBHOOKS_PATH, NUMBERS_PATH, CALLS_PATH, LEADS_PATH,
                          AGENTS_PATH, MESSAGES_PATH, PIPELINE_PATH, RUNS_PATH, EXPORTS_PATH, AUTHORIZE_PATH})
# ...and the page of one object of them: /dashboard/calls/<id> and the like.
_OBJECT_PAGE = re.compile(r"/dashboard/(calls|leads|agents|messages|runs)/[A-Za-z0-9_+-]{1,80}")
_VISIBLE_ASCII = re.compile(r"[!-~]*")


def sign_in_form(next_path: str) -> str:
    """The form that e-mails a sign-in link leading back to `next_path`."""
    return (f'<form method="post" action="{SIGN_IN}"><label>Your account e-mail <input type="email" '
            f'name="email" required></label><input type="hidden" name="next" value="{escape(next_path)}"> '
            '<button type="submit">E-mail me a sign-in link</button></form>')


async def send_sign_in_link(request: web.Request) -> web.Response:
    form = await request.post()
    email, next_path = str(form.get("email", ""))[:320], next_page(str(form.get("next", "")))
    try:
        await deps(request).clients["accounts"].SendSignInLink(
            accounts_pb2.SendSignInLinkRequest(email=email, next_path=next_path))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return html(f"Could not send a sign-in link: {escape(err.message)}.", err.http_status)
    return html(f"If {escape(email)} belongs to a Switchboard account, a sign-in link is on its way. Open it in this "
                "browser within 15 minutes to go on.")


def next_page(value: str) -> str:
    """Where to go after signing in: one of RETURN_PAGES (with its query), else the dashboard's home."""
    if not _VISIBLE_ASCII.fullmatch(value):  # no whitespace or control characters for a browser to drop
        return HOME
    parts = url_parts(value)
    if parts is None:
        return HOME
    known = parts.path in RETURN_PAGES or _OBJECT_PAGE.fullmatch(parts.path)
    if parts.scheme or parts.netloc or parts.fragment or not known:
        return HOME
    return value


async def confirm_sign_in(request: web.Request) -> web.Response:
    """GET of a sign-in link: a button that posts it back to this same address."""
    return html(f'<form method="post" action="{escape(request.path_qs)}">Sign in to Switchboard in this browser? '
                '<button type="submit">Sign in</button></form>')


async def sign_in(request: web.Request) -> web.StreamResponse:
    """POST of a sign-in link: use it, set the session cookie and go on to the page that asked."""
    settings = deps(request).settings
    try:
        session = await deps(request).clients["accounts"].RedeemMagicLink(
            accounts_pb2.RedeemMagicLinkRequest(token=request.query.get("token", "")))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return html(f"Sign-in failed: {escape(err.message)}. {sign_in_form(HOME)}", err.http_status)
    response = web.HTTPSeeOther(next_page(request.query.get("next", "")))
    set_session_cookie(response, settings, session.session_token, int(session.expires_at.ToSeconds() - time.time()))
    return response


async def signed_in(request: web.Request) -> tuple[str, Principal]:
    """The page's session and whose it is; a 401 page with the sign-in form (back to this page) when there is no
    session or it has ended (its cookie then goes)."""
    d = deps(request)
    session = session_token(request, d.settings)
    back = sign_in_form(next_page(request.path))
    if not session:
        raise sign_in_needed("Not signed in: open the magic link from your signup, or get a new one. " + back)
    try:
        return session, await d.auth.authenticate_session(session)
    except ServiceError as err:
        if err.code != "unauthorized":  # the accounts service did not answer: the session may be fine, keep it
            raise web.HTTPServiceUnavailable(content_type="text/html", text=page_text(
                f"The dashboard cannot check your sign-in just now ({escape(err.message)}); try again shortly.")) from None
        refused = sign_in_needed(f"{escape(err.message)}. " + back)
        clear_session_cookie(refused, d.settings)
        raise refused from None


BUSINESSES_SHOWN = 100


async def businesses_of(request: web.Request, principal: Principal) -> dict[str, str]:
    """The signed-in owner's businesses (the first BUSINESSES_SHOWN), id to name, newest first."""
    listed = await deps(request).clients["accounts"].as_caller(principal.tenant).ListWorkspaces(
        accounts_pb2.ListWorkspacesRequest(page=common_pb2.PageRequest(limit=BUSINESSES_SHOWN)))
    return {w.id: w.name for w in listed.workspaces}


def of_business(principal: Principal, business_id: str) -> Tenant:
    """The owner as a caller of this one business (of theirs): the lists that span every business of the caller
    (ListLeads, ListCalls, ListMessages) then give this business's alone."""
    return Tenant(account_id=principal.account_id, business_ids=(business_id,), api_key_id=principal.key_id,
                  scopes=principal.scopes, bound_business_id=business_id)


def day_start(value: str) -> datetime | None:
    """The start (UTC) of the day a date field of a form gives (YYYY-MM-DD); None when it is empty. Raises
    ValueError for what is not a date."""
    return datetime.combine(date.fromisoformat(value), time_of_day(), UTC) if value else None


def chosen(business_id: str, businesses: dict[str, str]) -> str:
    """The business a page shows: the one asked for if it is the owner's, else their first."""
    return business_id if business_id in businesses else next(iter(businesses), "")


# A page's own rendering: (request, session, principal, *its arguments, status=..., error=...) to the page.
PageRender = Callable[..., Awaitable[web.Response]]


async def posted(request: web.Request, render: PageRender, undone: str,
                 *args: object) -> web.Response | tuple[str, Principal, Form]:
    """The session, whose it is and the posted form of a signed-in page; or the page again (`render` with `args`), a
    403 saying nothing was `undone`, when the form does not carry this session's token."""
    session, principal = await signed_in(request)
    form = await request.post()
    if not form_token_holds(session, form.get("form_token")):
        return await render(request, session, principal, *args, status=403, error="This form expired or did not "
                            f"come from this page; nothing was {undone}. Try again.")
    return session, principal, form


async def business_form(request: web.Request, render: PageRender, undone: str,
                        act: Callable[[Principal, Form], Awaitable[dict[str, Any]]],
                        field: str = "business_id") -> web.StreamResponse:
    """A form of a business's page (its business_id field; or of an object's page, its `field` naming the object):
    `act(principal, form)` does it and gives what the page says after it (keywords of `render`); a refusal of the
    service is said on the page with its status."""
    shown = str((await request.post()).get(field, ""))
    form_posted = await posted(request, render, undone, shown)
    if isinstance(form_posted, web.Response):
        return form_posted
    session, principal, form = form_posted
    try:
        said = await act(principal, form)
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await render(request, session, principal, shown, status=err.http_status,
                            error=f"Nothing was {undone}: {err.message}")
    return await render(request, session, principal, shown, **said)


async def sign_out(request: web.Request) -> web.Response:
    """End this session, or every session of the account; the cookie goes either way."""
    settings = deps(request).settings
    session = session_token(request, settings)
    form = await request.post()
    if not form_token_holds(session, form.get("form_token")):
        return html("This form expired or did not come from the Switchboard dashboard; open the dashboard and sign "
                    "out from there.", 403)
    everywhere = form.get("everywhere") == "1"
    try:
        await deps(request).clients["accounts"].SignOut(
            accounts_pb2.SignOutRequest(session_token=session, everywhere=everywhere))
        done = "You are signed out of every browser" if everywhere else "You are signed out"
        response = html(f"{done}. API keys and connected assistants keep working until you revoke them. "
                        + sign_in_form(HOME))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        if err.code != "unauthorized":  # the session goes on: keep the cookie, so signing out can be tried again
            return html(f"Not signed out: {escape(err.message)}.", err.http_status)
        response = html(f"{escape(err.message)}. " + sign_in_form(HOME), err.http_status)
    clear_session_cookie(response, settings)
    return response


def add_routes(app: web.Application) -> None:
    app.router.add_post(SIGN_IN, same_site_form(send_sign_in_link))
    app.router.add_get(LOGIN, confirm_sign_in)
    app.router.add_post(LOGIN, same_site_form(sign_in))
    app.router.add_post(LOGOUT, same_site_form(sign_out))
