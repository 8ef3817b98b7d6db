"""Every route but the assistant connector's own and OAuth's: the policy table the connector's tools take their
scopes from (gateway.mcp.tools), a module of its own so the connector's routes can import the tools."""
from gateway.route import Route
from gateway.routes import (
    accounts,
    agents,
    analytics,
    bookings,
    calls,
    compliance,
    evals,
    exports,
    leads,
    messaging,
    meta,
    numbers,
    privacy,
    providers,
    runs,
    sdr,
    sessions,
    webhooks,
)


def rest_routes() -> list[Route]:
    return [*meta.ROUTES, *accounts.ROUTES, *sessions.ROUTES, *agents.ROUTES, *numbers.ROUTES, *calls.ROUTES,
            *leads.ROUTES, *bookings.ROUTES,
            *messaging.ROUTES, *compliance.ROUTES, *runs.ROUTES, *sdr.ROUTES, *evals.ROUTES,
            *analytics.ROUTES, *webhooks.ROUTES, *privacy.ROUTES, *exports.ROUTES, *providers.ROUTES]
