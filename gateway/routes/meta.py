"""Self-description: the OpenAPI document and the JSON Schemas (no authentication)."""
from __future__ import annotations

from core.errors import ServiceError
from gateway import openapi
from gateway.context import ROUTE_TABLE
from gateway.routes import PUBLIC, RequestContext, Route
from gateway.schemas import SCHEMAS, resolved


async def openapi_document(ctx: RequestContext):
    return openapi.build(ctx.request.app[ROUTE_TABLE], ctx.deps.settings.public_base_url)


async def schemas(ctx: RequestContext):
    name = ctx.query.get("name")
    if name is None:
        return {"schemas": {n: resolved(n) for n in SCHEMAS}}
    if name not in SCHEMAS:
        raise ServiceError("not_found", f"no schema named {name!r}; known: {', '.join(sorted(SCHEMAS))}")
    return resolved(name)


ROUTES = [
    Route("GET", "/api/v1/openapi.json", openapi_document, "OpenAPI 3.1 description of this API", "discovery",
          auth=PUBLIC, description="Generated at request time from the gateway's route table; it prevails over any "
          "other description."),
    Route("GET", "/api/v1/schemas", schemas, "JSON Schemas of request and response objects", "discovery", auth=PUBLIC,
          query={"type": "object", "properties": {"name": {"type": "string"}}}, errors=("not_found",)),
]
