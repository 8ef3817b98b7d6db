"""The catch-all's HTTP side, the read API for developers and tests, and the app that also runs the SMTP server
(started before the HTTP port opens, closed when the app stops)."""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from providers.email.catchall.mailbox import Mailbox
from providers.email.catchall.receiver import start_smtp

log = logging.getLogger("providers.email.catchall")

MAILBOX = web.AppKey("mailbox", Mailbox)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every refusal as `{"error": ...}`, including aiohttp's own (unknown path, wrong method)."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        return web.json_response({"error": f"not found: {request.path}"}, status=404)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return web.json_response({"error": exc.reason}, status=exc.status, headers=_allow(exc))
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return web.json_response({"error": "internal server error"}, status=500)


def _allow(exc: web.HTTPException) -> dict[str, Any]:
    return {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else {}


async def list_messages(request: web.Request) -> web.Response:
    return web.json_response({"messages": request.app[MAILBOX].messages(request.query.get("to") or None)})


async def get_message(request: web.Request) -> web.Response:
    raw = request.app[MAILBOX].raw(request.match_info["id"])
    if raw is None:
        raise web.HTTPNotFound()
    return web.Response(body=raw, content_type="message/rfc822",
                        headers={"Content-Disposition": f'inline; filename="{request.match_info["id"]}.eml"'})


async def delete_messages(request: web.Request) -> web.Response:
    deleted = request.app[MAILBOX].clear()
    log.info("deleted %d messages", deleted)
    return web.json_response({"deleted": deleted})


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def build_app(mailbox: Mailbox, *, smtp_port: int, smtp_host: str = "127.0.0.1") -> web.Application:
    app = web.Application(middlewares=[json_errors])
    app[MAILBOX] = mailbox
    app.router.add_get("/messages", list_messages)
    app.router.add_delete("/messages", delete_messages)
    app.router.add_get("/messages/{id}", get_message)
    app.router.add_get("/health", health)

    async def smtp_server(app: web.Application) -> AsyncIterator[None]:
        server = await start_smtp(mailbox, smtp_host, smtp_port)
        yield
        server.close()
        await server.wait_closed()

    app.cleanup_ctx.append(smtp_server)
    return app
