"""Dashboard sessions: signing out through the API (the dashboard page has its own form, gateway.dashboard.pages)."""
from __future__ import annotations

from aiohttp import web

from contracts import accounts
from gateway.convert import to_json
from gateway.dashboard.session_cookie import clear_session_cookie
from gateway.route import SESSION, Reply, RequestContext, Route
from gateway.schemas import SIGN_OUT
from switchboard.v1 import accounts_pb2


async def sign_out(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("accounts").SignOut(accounts_pb2.SignOutRequest(
        session_token=ctx.session_token, everywhere=bool(ctx.body.get("everywhere"))))
    response = web.json_response(to_json(reply))
    clear_session_cookie(response, ctx.deps.settings)
    return response


ROUTES = [
    Route("POST", "/api/v1/sessions/logout", sign_out, "Sign out: end this dashboard session, or every one",
          "sessions", auth=SESSION, body=SIGN_OUT, response="SignedOut", errors=("unauthorized", "invalid_request"),
          rpcs=("switchboard.v1.Accounts/SignOut",),
          description="Ends the dashboard session the request carries and clears its cookie; signing out a session "
          "that has ended already succeeds with sessions_ended 0. everywhere: true ends every session of the "
          "account (every browser signed in to it) and makes its unused sign-in links unusable; that needs a valid "
          "session (else 401). API keys and connected assistants are not affected: revoke those on their own. "
          f"Every dashboard session ends {accounts.SESSION_TTL.days} days after sign-in, or once unused for "
          f"{accounts.SESSION_IDLE.total_seconds() / 3600:g} hours. Like every request with the dashboard session "
          "that changes something, it needs a JSON body (Content-Type: application/json) or an X-Requested-With "
          "header (400 invalid_request otherwise): other sites cannot make a browser send either."),
]
