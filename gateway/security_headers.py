"""The security headers of every response the gateway sends, set in one place as each response is prepared (so
aiohttp's own answers, errors and streamed bodies get them too):

- every response: `X-Content-Type-Options: nosniff` (a body is only ever what its Content-Type says), and
  `Strict-Transport-Security` when the public URL (PUBLIC_BASE_URL) is https;
- every HTML page: it may not be framed by any site (`X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`,
  against clickjacking);
- every dashboard page and redirect (the dashboard's paths and the OAuth authorization page): not stored by any
  cache (`Cache-Control: no-store`: they show an account's data, redirects carry authorization codes) and no
  `Referer` to where it leads (`Referrer-Policy: no-referrer`: its URLs may carry sign-in tokens); its HTML may
  load scripts, styles, images and media from this site only, never inline (`Content-Security-Policy`; forms
  may post anywhere, as the authorization page's answer goes back to the assistant's site).
"""
from __future__ import annotations

from aiohttp import web

from core.settings import Settings
from gateway.dashboard.pages import HOME
from gateway.dashboard.session_cookie import served_over_https
from gateway.routes.oauth import AUTHORIZE_PATH

HSTS_SECONDS = 365 * 24 * 3600
NO_FRAMING = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}
PRIVATE_PAGE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
DASHBOARD_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
                 "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


def is_dashboard(path: str) -> bool:
    return path in (HOME, AUTHORIZE_PATH) or path.startswith(HOME + "/")


def add_security_headers(app: web.Application, settings: Settings) -> None:
    everywhere = {"X-Content-Type-Options": "nosniff"}
    if served_over_https(settings):
        everywhere["Strict-Transport-Security"] = f"max-age={HSTS_SECONDS}"

    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.update(everywhere)
        if response.content_type == "text/html":
            response.headers.update(NO_FRAMING)
        if is_dashboard(request.path):
            response.headers.update(PRIVATE_PAGE)
            if response.content_type == "text/html":
                response.headers["Content-Security-Policy"] = DASHBOARD_CSP

    app.on_response_prepare.append(on_prepare)
