"""The layout every dashboard page shares."""
from __future__ import annotations

from aiohttp import web

_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Switchboard</title></head><body>
<main><h1>Switchboard dashboard</h1><div>{body}</div></main></body></html>"""


def page_text(body: str) -> str:
    """A dashboard page around `body` (HTML the caller has escaped)."""
    return _PAGE.format(body=body)


def html(body: str, status: int = 200) -> web.Response:
    return web.Response(status=status, content_type="text/html", text=page_text(body))


def sign_in_needed(body: str) -> web.HTTPUnauthorized:
    """A dashboard page around `body` as the 401 to raise where a page needs a session."""
    return web.HTTPUnauthorized(content_type="text/html", text=page_text(body))
