"""The dashboard's pages from Jinja2 templates (`templates/`, autoescaped) and its static files (`static/`), each
served under a name carrying a hash of its content, so a browser may keep it for a year and a changed file is a new
name. Pages load no inline script or style: the dashboard's Content-Security-Policy allows only this site's files
(gateway.security_headers)."""
from __future__ import annotations

import hashlib
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from aiohttp import web
from google.protobuf.timestamp_pb2 import Timestamp

HERE = Path(__file__).parent
ASSETS = "/assets"
CONTENT_TYPES = {".css": "text/css", ".js": "text/javascript"}
YEAR = 365 * 24 * 3600


def _hashed_names() -> dict[str, tuple[str, Path]]:
    """Each static file by its plain name: (its name with a content hash, its path)."""
    names = {}
    for path in sorted((HERE / "static").iterdir()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        names[path.name] = (f"{path.stem}.{digest}{path.suffix}", path)
    return names


STATIC = _hashed_names()
_BY_HASHED = {hashed: path for hashed, path in STATIC.values()}
ENVIRONMENT = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                 undefined=jinja2.StrictUndefined)
ENVIRONMENT.globals["static"] = lambda name: f"{ASSETS}/{STATIC[name][0]}"


def when(stamp: Timestamp) -> str:
    """A protobuf time as the pages show it (UTC, to the minute); empty when it is unset."""
    return f"{stamp.ToDatetime(tzinfo=UTC):%Y-%m-%d %H:%M} UTC" if stamp.seconds or stamp.nanos else ""


def with_query(path: str, query: dict[str, str], **changes: str) -> str:
    """`path` with the page's query (its filters) and `changes` to it, leaving out what is empty: the address of the
    next page of a list, or of the same list with one filter changed."""
    merged = {k: v for k, v in {**query, **changes}.items() if v}
    return f"{path}?{urlencode(merged)}" if merged else path


ENVIRONMENT.filters["when"] = when
ENVIRONMENT.globals["with_query"] = with_query


def page(template: str, status: int = 200, **context: Any) -> web.Response:
    """The template rendered as an HTML page."""
    return web.Response(status=status, content_type="text/html",
                        text=ENVIRONMENT.get_template(template).render(**context))


async def asset(request: web.Request) -> web.StreamResponse:
    path = _BY_HASHED.get(request.match_info["name"])
    if path is None:
        raise web.HTTPNotFound()
    return web.Response(body=path.read_bytes(), content_type=CONTENT_TYPES[path.suffix],
                        headers={"Cache-Control": f"public, max-age={YEAR}, immutable"})


def add_routes(app: web.Application) -> None:
    app.router.add_get(f"{ASSETS}/{{name}}", asset)
