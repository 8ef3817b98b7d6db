"""The API keys page: the account's keys, creating one (with its scopes, if chosen one business and an expiry; the
key shown this once), and expiring or revoking one. Every action is the same RPC the session-authenticated `/api/v1/keys` routes make."""
from __future__ import annotations

from typing import Any

import grpc
from aiohttp import web

from core.grpc_errors import from_rpc_error
from core.messages import set_timestamp
from core.scopes import ALL_SCOPES
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import form_token, same_site_form
from gateway.dashboard.pages import KEYS_PATH, signed_in
from gateway.dashboard.templates import page, when
from switchboard.v1 import accounts_pb2


def _key_row(key: accounts_pb2.ApiKey) -> dict[str, Any]:
    expired = key.HasField("expires_at") and not key.is_active
    return {"id": key.id, "name": key.name, "prefix": key.prefix, "scopes": list(key.scopes),
            "business_id": key.business_id if key.HasField("business_id") else None, "active": key.is_active,
            "status": "active" if key.is_active else "expired" if expired else "revoked",
            "last_used": when(key.last_used_at) or None, "expires": when(key.expires_at)}


async def _render(request: web.Request, session: str, principal: Principal, *, status: int = 200,
                  created: dict[str, Any] | None = None, error: str | None = None) -> web.Response:
    accounts = deps(request).clients["accounts"]
    keys = await accounts.ListKeys(accounts_pb2.ListKeysRequest(session_token=session))
    return page("keys.html", status, title="API keys", active="keys", form_token=form_token(session),
                keys=[_key_row(k) for k in keys.keys], scopes=ALL_SCOPES, created=created, error=error,
                businesses=await pages.businesses_of(request, principal))


async def keys(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal)


async def create(request: web.Request) -> web.StreamResponse:
    posted = await pages.posted(request, _render, "created")
    if isinstance(posted, web.Response):
        return posted
    session, principal, form = posted
    scopes = [str(s) for s in form.getall("scopes", [])]
    business = str(form.get("business_id", ""))
    try:
        creating = accounts_pb2.CreateKeyRequest(
            session_token=session, name=str(form.get("name", "")), scopes=scopes, scopes_given=bool(scopes))
        if business:
            creating.business_id = business
        # the start of the day chosen, UTC; none chosen: a key that does not expire
        set_timestamp(creating, "expires_at", pages.day_start(str(form.get("expires_on", ""))))
        key = await deps(request).clients["accounts"].CreateKey(creating)
    except ValueError:
        return await _render(request, session, principal, status=400,
                             error="Not created: the expiry date must be a date such as 2027-01-31.")
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await _render(request, session, principal, status=err.http_status, error=f"Not created: {err.message}")
    return await _render(request, session, principal, status=201, created={"name": key.name, "key": key.key})


async def _change(request: web.Request, change: str, done: str, undone: str) -> web.StreamResponse:
    """Apply `change` (UpdateKeyRequest's expire or revoke) to the posted key, as PATCH /api/v1/keys does."""
    posted = await pages.posted(request, _render, undone)
    if isinstance(posted, web.Response):
        return posted
    session, principal, form = posted
    try:
        await deps(request).clients["accounts"].UpdateKey(
            accounts_pb2.UpdateKeyRequest(session_token=session, id=str(form.get("id", "")),
                                          expire=change == "expire", revoke=change == "revoke"))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return await _render(request, session, principal, status=err.http_status, error=f"Not {done}: {err.message}")
    deps(request).auth.forget_account(principal.account_id)  # this replica at once; the others hear it over NATS
    return web.HTTPSeeOther(KEYS_PATH)


async def revoke(request: web.Request) -> web.StreamResponse:
    return await _change(request, "revoke", "revoked", "revoked")


async def expire(request: web.Request) -> web.StreamResponse:
    return await _change(request, "expire", "expired", "expired")


def add_routes(app: web.Application) -> None:
    app.router.add_get(KEYS_PATH, keys)
    app.router.add_post(KEYS_PATH, same_site_form(create))
    app.router.add_post(f"{KEYS_PATH}/revoke", same_site_form(revoke))
    app.router.add_post(f"{KEYS_PATH}/expire", same_site_form(expire))

