"""The connector's tools take their scopes from the REST route table, and those scopes are the spec's."""
import pytest

from gateway.mcp import tools
from gateway.mcp.tools import GUARDED, TOOLS, Tool
from gateway.rest_routes import rest_routes

# SPEC, "Tools and the scope each needs".
SPEC_SCOPES = {"list_agents": "agents:read", "get_business_info": "agents:read", "list_recent_calls": "calls:read",
               "check_call_status": "calls:read", "get_transcript": "calls:read", "make_call": "calls:write"}


def test_each_tools_scope_is_the_one_the_spec_gives_it():
    assert {name: tool.scope for name, tool in TOOLS.items()} == SPEC_SCOPES


def test_each_tools_scope_is_derived_from_the_route_it_mirrors():
    for tool in TOOLS.values():
        method, path = tool.mirrors.split(" ")
        [route] = [r for r in rest_routes() if (r.method, r.path) == (method, path)]
        assert tool.scope == route.scope, tool.name


def test_business_info_withholds_what_rest_shows_behind_other_scopes():
    assert GUARDED == {tools.CALL_VOLUME: "calls:read", tools.SUBSCRIPTION: "workspaces:read"}


@pytest.mark.parametrize("operation", ["GET /api/v1/nowhere", "DELETE /api/v1/agents", "PATCH /api/v1/workspaces",
                                       "POST /api/mcp/tools/call"])
def test_a_tool_that_names_no_rest_route_with_a_scope_fails_when_declared(operation):
    with pytest.raises(LookupError, match=operation):
        Tool("broken", "Broken", "mirrors nothing usable", operation, {}, "BusinessInfo", tools._list_agents)
