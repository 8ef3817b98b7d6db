"""The route table: every public route, from which the gateway builds routing, scope checks, request validation
and the OpenAPI document."""
from gateway.rest_routes import rest_routes
from gateway.route import Route
from gateway.routes import mcp, oauth


def all_routes() -> list[Route]:
    return [*rest_routes(), *mcp.ROUTES, *oauth.ROUTES]
