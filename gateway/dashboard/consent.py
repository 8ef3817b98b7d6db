"""The browser side of the connector's OAuth sign-in: the authorization endpoint's sign-in and consent pages, and the
dashboard page listing connected assistant clients with a revoke button.

Forms post back to this origin, guarded against cross-site forgery (gateway.dashboard.forms). Like every dashboard
page, these may not be framed (clickjacking) or cached (gateway.security_headers).
"""
from __future__ import annotations

from html import escape
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from core.errors import ServiceError
from gateway.context import deps
from gateway.dashboard.forms import form_token, form_token_holds, same_site_form
from gateway.dashboard.layout import html
from gateway.dashboard.pages import CONNECTIONS_PATH, sign_in_form
from gateway.dashboard.session_cookie import session_token
from gateway.routes.oauth import AUTHORIZE_PATH, Refused, ask, parameters
from switchboard.v1 import accounts_pb2

REQUEST_FIELDS = tuple(accounts_pb2.OAuthAuthorization.DESCRIPTOR.fields_by_name)
SCOPE_TEXT = {"agents:read": "see your agents and businesses", "calls:read": "read your calls and transcripts",
              "calls:write": "place calls with your agents"}


def _session(request: web.Request) -> str:
    return session_token(request, deps(request).settings)


def _refused(err: ServiceError, redirect: type[web.HTTPFound | web.HTTPSeeOther] = web.HTTPFound) -> web.StreamResponse:
    """Back to the client when the error may go there (with `redirect`'s status), else a page saying what is
    wrong."""
    if where := err.details.get("redirect_to"):
        return redirect(where)
    return html(f"<p>This sign-in cannot go on: {escape(err.message)}.</p>", err.http_status)


def _authorization(params: MultiMapping[Any]) -> accounts_pb2.OAuthAuthorization:
    """The authorization request's parameters, by the token endpoint's rules (gateway.routes.oauth.parameters)."""
    try:
        return accounts_pb2.OAuthAuthorization(**parameters(params, REQUEST_FIELDS))
    except Refused as err:
        raise ServiceError("invalid_request", err.description) from None


def _consent_page(consent: accounts_pb2.OAuthConsent, authorization: accounts_pb2.OAuthAuthorization,
                  session: str) -> str:
    client = consent.client
    name = escape(client.client_name or client.client_id)
    hidden = "".join(f'<input type="hidden" name="{n}" value="{escape(getattr(authorization, n))}">'
                     for n in REQUEST_FIELDS)
    scopes = "".join(f'<li><label><input type="checkbox" name="scope_approved" value="{s}" checked> {s}: '
                     f'{escape(SCOPE_TEXT.get(s, s))}</label></li>' for s in consent.scopes)
    businesses = "".join(f'<li><label><input type="checkbox" name="business_id" value="{b.id}" checked> '
                         f'{escape(b.name)}</label></li>' for b in consent.businesses)
    return (f"<h2>Connect {name} to Switchboard?</h2>"
            f"<p>{name} (client <code>{escape(client.client_id)}</code>) asks to act on your behalf through the "
            f"assistant connector. After you approve, it is sent to <code>{escape(consent.redirect_uri)}</code>.</p>"
            f'<form method="post" action="{AUTHORIZE_PATH}">{hidden}'
            f'<input type="hidden" name="form_token" value="{form_token(session)}">'
            f"<p>It may:</p><ul>{scopes}</ul><p>on these businesses:</p><ul>{businesses}</ul>"
            '<button type="submit" name="decision" value="approve">Approve</button> '
            '<button type="submit" name="decision" value="deny">Deny</button></form>'
            f'<p>You can revoke it any time under <a href="{CONNECTIONS_PATH}">connected assistants</a>.</p>')


async def authorize(request: web.Request) -> web.StreamResponse:
    """GET: check the request, then ask who is signed in to approve it."""
    session = _session(request)
    try:
        authorization = _authorization(request.query)
        consent = await ask(deps(request).clients["accounts"].StartOAuthConsent,
                             accounts_pb2.OAuthConsentRequest(session_token=session, authorization=authorization))
    except ServiceError as err:
        return _refused(err)
    if not consent.signed_in:
        return html(f"<h2>Sign in to connect {escape(consent.client.client_name or consent.client.client_id)}</h2>"
                    "<p>You are not signed in to the Switchboard dashboard. We can e-mail you a sign-in link that "
                    f"brings you back here.</p>{sign_in_form(request.path_qs)}", 401)
    return html(_consent_page(consent, authorization, session))


async def decide(request: web.Request) -> web.StreamResponse:
    """POST: the account user's decision, then back to the client (303: the browser follows with a GET)."""
    session = _session(request)
    form = await request.post()
    if not form_token_holds(session, form.get("form_token")):
        return html("<p>This form expired or did not come from the Switchboard dashboard; open the sign-in again "
                    "from your assistant.</p>", 403)
    try:
        where = await ask(deps(request).clients["accounts"].DecideOAuthConsent, accounts_pb2.OAuthDecision(
            session_token=session, authorization=_authorization(form), approve=form.get("decision") == "approve",
            scopes=[str(s) for s in form.getall("scope_approved", ())],
            business_ids=[str(b) for b in form.getall("business_id", ())]))
    except ServiceError as err:
        return _refused(err, web.HTTPSeeOther)
    return web.HTTPSeeOther(where.location)


async def connections(request: web.Request) -> web.Response:
    session = _session(request)
    try:
        listed = await ask(deps(request).clients["accounts"].ListOAuthConnections,
                            accounts_pb2.ListOAuthConnectionsRequest(session_token=session))
    except ServiceError as err:
        return html(f"<p>{escape(err.message)}.</p>", err.http_status)
    rows = "".join(
        f"<tr><td>{escape(c.client_name or c.client_id)}</td><td>{escape(' '.join(c.scopes))}</td>"
        f"<td>{len(c.business_ids)}</td><td>{c.created_at.ToDatetime():%Y-%m-%d %H:%M} UTC</td>"
        f"<td>{f'{c.last_used_at.ToDatetime():%Y-%m-%d %H:%M} UTC' if c.HasField('last_used_at') else 'never'}</td>"
        f'<td><form method="post" action="{CONNECTIONS_PATH}/revoke"><input type="hidden" name="id" value="{c.id}">'
        f'<input type="hidden" name="form_token" value="{form_token(session)}">'
        '<button type="submit">Revoke</button></form></td></tr>' for c in listed.connections)
    table = ("<table><tr><th>Assistant</th><th>Scopes</th><th>Businesses</th><th>Connected</th><th>Last used</th>"
             f"<th></th></tr>{rows}</table>") if rows else "<p>No assistant is connected.</p>"
    return html(f"<h2>Connected assistants</h2>{table}")


async def disconnect(request: web.Request) -> web.StreamResponse:
    session = _session(request)
    form = await request.post()
    if not form_token_holds(session, form.get("form_token")):
        return html("<p>This form expired or did not come from the Switchboard dashboard.</p>", 403)
    try:
        reply = await ask(deps(request).clients["accounts"].RevokeOAuthConnection,
                          accounts_pb2.RevokeOAuthConnectionRequest(session_token=session, id=str(form.get("id", ""))))
    except ServiceError as err:
        return html(f"<p>{escape(err.message)}.</p>", err.http_status)
    deps(request).auth.forget_account(reply.account_id)  # this replica at once; the others hear it over NATS
    return web.HTTPSeeOther(CONNECTIONS_PATH)


def add_routes(app: web.Application) -> None:
    app.router.add_get(AUTHORIZE_PATH, authorize)
    app.router.add_post(AUTHORIZE_PATH, same_site_form(decide))
    app.router.add_get(CONNECTIONS_PATH, connections)
    app.router.add_post(f"{CONNECTIONS_PATH}/revoke", same_site_form(disconnect))
