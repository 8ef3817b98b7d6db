"""Self-description: the OpenAPI document and the JSON Schemas (no authentication)."""
from __future__ import annotations

from aiohttp import web

from core.errors import ServiceError
from gateway import openapi
from gateway.context import ROUTE_TABLE
from gateway.route import PUBLIC, Reply, RequestContext, Route
from gateway.schemas import SCHEMAS, resolved


async def openapi_document(ctx: RequestContext) -> Reply:
    document = openapi.published(ctx.request.app[ROUTE_TABLE], ctx.deps.settings.public_base_url)
    headers = {"ETag": document.etag, "Cache-Control": "no-cache"}  # a client may keep it, asking if it changed
    if any(tag.value == "*" or f'"{tag.value}"' == document.etag for tag in ctx.request.if_none_match or ()):
        return web.Response(status=304, headers=headers)
    return web.Response(body=document.body, content_type="application/json", headers=headers)


async def schemas(ctx: RequestContext) -> Reply:
    name = ctx.query.get("name")
    if name is None:
        return {"schemas": {n: resolved(n) for n in SCHEMAS}}
    if name not in SCHEMAS:
        raise ServiceError("not_found", f"no schema named {name!r}; known: {', '.join(sorted(SCHEMAS))}")
    return resolved(name)


ROUTES = [
    Route("GET", "/api/v1/openapi.json", openapi_document, "OpenAPI 3.1 description of this API", "discovery",
          auth=PUBLIC, headers={"If-None-Match": {"type": "string", "maxLength": 1000, "description": "the ETag of a "
                                                  "copy the client keeps: 304 when it is still this document"}},
          own_replies={304: "The copy whose ETag was sent is current"}, reply_headers={200: {
              "ETag": "the document's version"}},
          description="Generated from the gateway's route table (once per process: the same bytes and ETag until "
          "the next deploy); it prevails over any other description."),
    Route("GET", "/api/v1/schemas", schemas, "JSON Schemas of request and response objects", "discovery", auth=PUBLIC,
          query={"type": "object", "properties": {"name": {"type": "string"}}}, errors=("not_found",)),
]
