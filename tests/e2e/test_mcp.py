"""The assistant connector through the official MCP Python SDK client, in both protocol eras (the initialize
handshake and the stateless 2026-07-28 revision), with a bearer key: every tool, tool failures, scopes, another
account's key; the wire rules a client relies on (headers checked against the body, notifications, GET and
DELETE, Origin); and the plain-HTTP helper endpoints."""
from contextlib import asynccontextmanager

import httpx2
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.connector import COMPLETES, MCP, NO_ANSWER, TOOLS, settled
from tests.waiting import wait_until

MODES = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@asynccontextmanager
async def connected(api, key: str, mode: str):
    """The official client on the connector, with the key as its bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                                  timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(api.base + MCP, http_client=http), mode=mode) as client:
            yield client


def failure(result) -> str:
    assert result.is_error and result.structured_content is None, result
    return result.content[0].text


@pytest.mark.parametrize("mode", list(MODES))
async def test_the_official_client_uses_every_tool_in_both_eras(api, account, calling_agent, mode):
    agent = calling_agent
    async with connected(api, account["key"], mode) as client:
        assert client.protocol_version == MODES[mode]
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == TOOLS
        assert all(t.input_schema["type"] == "object" and t.output_schema["type"] == "object" for t in listed.tools)

        agents = await client.call_tool("list_agents", {})
        assert not agents.is_error
        [mine] = [a for a in agents.structured_content["agents"] if a["id"] == agent["id"]]
        assert mine["name"] == "Closer" and mine["phone_number"] == agent["phone_number"]
        assert agents.content[0].type == "text" and agent["id"] in agents.content[0].text

        info = (await client.call_tool("get_business_info", {})).structured_content
        [business] = info["businesses"]
        assert business["id"] == account["business_id"] and business["name"] == "Acme Plumbing"
        assert business["agent_count"] >= 1 and agent["phone_number"] in business["phone_numbers"]
        calls_before = business["calls_last_7_days"]

        placed = await client.call_tool("make_call", {"agent_id": agent["id"], "to": COMPLETES,
                                                      "context": "Follow up on the water heater quote"})
        assert not placed.is_error, placed
        call = placed.structured_content
        assert call["status"] == "queued" and call["to"] == COMPLETES and call["agent_id"] == agent["id"]
        ended = await settled(client, call["id"])
        assert ended["status"] == "completed" and ended["context"] == "Follow up on the water heater quote"

        recent = (await client.call_tool("list_recent_calls", {"agent_id": agent["id"], "limit": 1})).structured_content
        assert [c["id"] for c in recent["calls"]] == [call["id"]] and recent["calls"][0]["status"] == "completed"
        transcript = (await client.call_tool("get_transcript", {"call_id": call["id"]})).structured_content
        assert transcript["call_id"] == call["id"] and "water heater" in transcript["summary"]
        # A California callee: the recording disclosure is the agent's first line, after the callee's hello.
        lines = transcript["transcript"].splitlines()
        assert all(line.startswith(("Agent: ", "Caller: ")) for line in lines), lines
        assert next(line for line in lines if line.startswith("Agent: ")).startswith("Agent: This call is recorded")
        info = (await client.call_tool("get_business_info", {"business_id": account["business_id"]})).structured_content
        assert info["businesses"][0]["calls_last_7_days"] == calls_before + 1

    # The usage log names the call the connector placed and read, as it does for the REST routes: make_call,
    # check_call_status (at least once), get_transcript.
    async def logged() -> list[dict]:
        status, usage, _ = await api.request("GET", "/api/v1/usage", key=account["key"], params={"limit": "100"})
        return [u for u in usage["usage"] if u["endpoint"] == MCP and u["call_id"] == call["id"]]
    await wait_until(logged, f"three usage entries of the connector for call {call['id']}",
                     lambda entries: len(entries) >= 3, timeout=5)


async def test_a_failing_tool_answers_an_error_result_the_assistant_can_read(api, account, calling_agent):
    async with connected(api, account["key"], "2026-07-28") as client:
        assert failure(await client.call_tool("check_call_status", {"call_id": "0" * 8 + "-0000-4000-8000-" + "0" * 12})) \
            .startswith("not_found: ")
        assert "call_id" in failure(await client.call_tool("check_call_status", {"call_id": "nope"}))
        assert "required" in failure(await client.call_tool("make_call", {"agent_id": calling_agent["id"]}))
        assert "E.164" in failure(await client.call_tool("make_call", {"agent_id": calling_agent["id"],
                                                                        "to": "555-0100"}))
        assert "additional" in failure(await client.call_tool("list_agents", {"secret": True})).lower()
        missed = (await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": NO_ANSWER}))
        ended = await settled(client, missed.structured_content["id"])
        assert ended["status"] == "no-answer"
        assert failure(await client.call_tool("get_transcript", {"call_id": ended["id"]})).startswith(
            "conflict: this call (no-answer) ended without a transcript")
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("delete_everything", {})
        assert unknown.value.error.code == types.INVALID_PARAMS


async def test_each_tool_needs_its_scope(api, account, calling_agent):
    reader = (await account["dashboard"].create_key(name="reader", scopes=["calls:read"]))["key"]
    async with connected(api, reader, "legacy") as client:
        assert not (await client.call_tool("list_recent_calls", {})).is_error
        for tool, args in (("make_call", {"agent_id": calling_agent["id"], "to": COMPLETES}), ("list_agents", {})):
            with pytest.raises(MCPError) as refused:
                await client.call_tool(tool, args)
            assert "scope" in refused.value.error.message
    status, body, headers = await api.request("POST", MCP, key=reader, json={
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "make_call", "arguments": {"agent_id": calling_agent["id"], "to": COMPLETES}}})
    assert status == 403 and body["id"] == 7 and body["error"]["data"] == {"code": "forbidden", "scope": "calls:write"}
    assert headers["WWW-Authenticate"].startswith('Bearer error="insufficient_scope", scope="calls:write"')


async def test_another_accounts_key_reaches_nothing_of_this_one(api, account, calling_agent, other_key):
    async with connected(api, account["key"], "2026-07-28") as client:
        call = (await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": COMPLETES}))
        call_id = call.structured_content["id"]
    async with connected(api, other_key, "legacy") as client:
        agents = (await client.call_tool("list_agents", {})).structured_content["agents"]
        assert calling_agent["id"] not in [a["id"] for a in agents]
        calls = (await client.call_tool("list_recent_calls", {"limit": 100})).structured_content["calls"]
        assert call_id not in [c["id"] for c in calls]
        for tool in ("check_call_status", "get_transcript"):
            assert failure(await client.call_tool(tool, {"call_id": call_id})).startswith("not_found: ")
        assert failure(await client.call_tool("get_business_info", {"business_id": account["business_id"]})) \
            .startswith("not_found: ")
        assert failure(await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": COMPLETES})) \
            .startswith("not_found: ")
        [own] = (await client.call_tool("get_business_info", {})).structured_content["businesses"]
        assert own["id"] != account["business_id"] and own["name"] == "Other Co"


async def test_a_key_bound_to_one_business_sees_that_one_only(api, account):
    status, second, _ = await api.request("POST", "/api/v1/workspaces", key=account["key"], json={"name": "Branch"})
    assert status == 201, second
    bound = (await account["dashboard"].create_key(name="bound", scopes=["agents:read"],
                                                   business_id=second["id"]))["key"]
    async with connected(api, account["key"], "auto") as client:
        info = (await client.call_tool("get_business_info", {})).structured_content
        assert {b["id"] for b in info["businesses"]} == {account["business_id"], second["id"]}
    async with connected(api, bound, "auto") as client:
        info = (await client.call_tool("get_business_info", {})).structured_content
        assert [(b["id"], b["name"], b["agent_count"]) for b in info["businesses"]] == [(second["id"], "Branch", 0)]
        assert failure(await client.call_tool("get_business_info", {"business_id": account["business_id"]})) \
            .startswith("not_found: ")


VOLUME = {"scope": "calls:read", "fields": ["calls_last_7_days", "calls_last_30_days"]}
SUBSCRIPTION = {"scope": "workspaces:read", "fields": ["status", "subscription_status"]}


async def test_business_info_shows_only_what_rest_would_show_the_key(api, account, calling_agent,
                                                                    other_key):
    async with connected(api, account["key"], "auto") as client:
        assert not (await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": COMPLETES})).is_error
    status, report, _ = await api.request("GET", "/api/v1/analytics/businesses", key=account["key"])
    assert status == 200, report
    [calls] = [b["calls"]["total"] for b in report["businesses"] if b["business_id"] == account["business_id"]]
    status, listed, _ = await api.request("GET", "/api/v1/workspaces", key=account["key"],
                                          params={"id": account["business_id"]})
    assert status == 200 and calls >= 1, listed
    [workspace] = listed["workspaces"]
    volume = {"calls_last_30_days": calls}
    subscription = {"status": workspace["lifecycle_state"], "subscription_status": workspace["subscription_status"]}
    for scopes, shown, withheld in (
            (["agents:read"], {}, [VOLUME, SUBSCRIPTION]),
            (["agents:read", "calls:read"], volume, [SUBSCRIPTION]),
            (["agents:read", "calls:read", "workspaces:read"], {**volume, **subscription}, [])):
        key = (await account["dashboard"].create_key(name=" ".join(scopes), scopes=scopes))["key"]
        # The official client checks the answer against the tool's outputSchema.
        async with connected(api, key, "legacy") as client:
            info = (await client.call_tool("get_business_info", {})).structured_content
        [business] = info["businesses"]
        assert business["id"] == account["business_id"] and business["agent_count"] == 1, scopes
        assert calling_agent["phone_number"] in business["phone_numbers"]
        assert info["withheld"] == withheld, scopes
        guarded = {field for part in (VOLUME, SUBSCRIPTION) for field in part["fields"]}
        withheld_fields = {field for part in withheld for field in part["fields"]}
        assert set(business) & guarded == guarded - withheld_fields, scopes
        assert {k: business[k] for k in shown} == shown, scopes
        # What the connector withheld, REST refuses the same key.
        for path, part in (("/api/v1/analytics/businesses", VOLUME), ("/api/v1/workspaces", SUBSCRIPTION)):
            status, _, _ = await api.request("GET", path, key=key)
            assert status == (403 if part in withheld else 200), (path, scopes)
    # Another account's key with every scope sees its own business only, none of the first's calls.
    async with connected(api, other_key, "2026-07-28") as client:
        info = (await client.call_tool("get_business_info", {})).structured_content
        assert failure(await client.call_tool("get_business_info", {"business_id": account["business_id"]})) \
            .startswith("not_found: ")
    [own] = info["businesses"]
    assert own["id"] != account["business_id"] and own["name"] == "Other Co" and info["withheld"] == []
    assert own["calls_last_7_days"] == own["calls_last_30_days"] == 0 and own["agent_count"] == 0


def modern(method: str, name: str | None = None) -> dict:
    return {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}


META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}


async def test_the_wire_rules_of_both_eras(api, account):
    key = account["key"]

    async def post(body, headers=None, raw=None, **kw):
        if raw is not None:
            return await api.request("POST", MCP, key=key, data=raw, headers={"Content-Type": "application/json",
                                                                               **(headers or {})}, **kw)
        return await api.request("POST", MCP, key=key, json=body, headers=headers, **kw)

    # The handshake era: initialize answers the version asked for; a notification is accepted with 202.
    status, body, headers = await post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert status == 200 and body["result"]["protocolVersion"] == "2025-06-18" and "Mcp-Session-Id" not in headers
    assert body["result"]["serverInfo"]["name"] == "switchboard" and "tools" in body["result"]["capabilities"]
    status, _, _ = await post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                              {"MCP-Protocol-Version": "2025-06-18"})
    assert status == 202
    status, body, _ = await post({"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
                                 {"MCP-Protocol-Version": "2025-11-25"})
    assert status == 200 and body["error"]["code"] == types.METHOD_NOT_FOUND
    # The 2026 revision: discover; headers must agree with the body; _meta is required; unknown methods 404.
    status, body, _ = await post({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": META},
                                 modern("server/discover"))
    assert status == 200 and body["result"]["supportedVersions"] == ["2026-07-28"]
    assert body["result"]["resultType"] == "complete"
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "list_agents", "arguments": {}, **META}}
    status, body, _ = await post(call, modern("tools/call", "list_agents"))
    assert status == 200 and body["result"]["resultType"] == "complete" and not body["result"].get("isError")
    for headers in (modern("tools/list", "list_agents"), modern("tools/call", "make_call"), modern("tools/call")):
        status, body, _ = await post(call, headers)
        assert status == 400 and body["error"]["code"] == types.HEADER_MISMATCH, (headers, body)
    status, body, _ = await post({**call, "params": {"name": "list_agents", "arguments": {}}},
                                 modern("tools/call", "list_agents"))
    assert status == 400 and body["error"]["code"] == types.INVALID_PARAMS
    status, body, _ = await post({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": META},
                                 modern("initialize"))
    assert status == 404 and body["error"]["code"] == types.METHOD_NOT_FOUND
    status, body, _ = await post({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, {"MCP-Protocol-Version": "1999"})
    assert status == 400 and body["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    # Malformed messages, batches, other media types.
    status, body, _ = await post(None, raw=b'{"jsonrpc": "2.0", "id": ')
    assert status == 400 and body["error"]["code"] == types.PARSE_ERROR
    status, body, _ = await post([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    assert status == 400 and body["error"]["code"] == types.INVALID_REQUEST
    status, body, _ = await post({"jsonrpc": "1.0", "id": 1, "method": "tools/list"})
    assert status == 400 and body["error"]["code"] == types.INVALID_REQUEST
    status, body, _ = await api.request("POST", MCP, key=key, data="{}", headers={"Content-Type": "text/plain"})
    assert status == 415
    # No sessions: GET and DELETE are not allowed; the key is required; a foreign browser Origin is refused.
    for method in ("GET", "DELETE"):
        status, _, headers = await api.request(method, MCP, key=key)
        assert status == 405 and headers["Allow"] == "POST"
    listing = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}
    status, body, _ = await api.request("POST", MCP, json=listing)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, body, _ = await post(listing, {"Origin": "https://evil.example"})
    assert status == 403 and body["error"]["code"] == types.INVALID_REQUEST
    status, body, _ = await post(listing, {"Origin": api.base})
    assert status == 200 and [t["name"] for t in body["result"]["tools"]] == TOOLS


async def test_the_plain_http_helpers(api, account, other_key):
    key = account["key"]
    status, body, _ = await api.request("POST", f"{MCP}/initialize", key=key, json={})
    assert status == 200 and body["protocolVersion"] == "2025-11-25" and body["serverInfo"]["name"] == "switchboard"
    status, body, _ = await api.request("POST", f"{MCP}/tools/list", key=key)
    assert status == 200 and [t["name"] for t in body["tools"]] == TOOLS
    status, body, _ = await api.request("POST", f"{MCP}/tools/call", key=key, json={"name": "get_business_info"})
    assert status == 200 and body["structuredContent"]["businesses"][0]["id"] == account["business_id"]
    assert not body.get("isError")
    status, body, _ = await api.request("POST", f"{MCP}/tools/call", key=key, json={
        "name": "check_call_status", "arguments": {"call_id": "not-a-uuid"}})
    assert status == 200 and body["isError"] is True and body["content"][0]["text"].startswith("invalid_request")
    status, body, _ = await api.request("POST", f"{MCP}/tools/call", key=key, json={"name": "nope"})
    assert status == 400 and body["error"]["code"] == "invalid_request" and "list_agents" in body["error"]["message"]
    status, body, _ = await api.request("POST", f"{MCP}/tools/call", key=key, json={"arguments": {}})
    assert status == 400 and body["error"]["code"] == "bad_request"  # SPEC: a required parameter missing
    reader = account["read_key"]  # the signup key: default scopes, no calls:write
    status, body, headers = await api.request("POST", f"{MCP}/tools/call", key=reader, json={
        "name": "make_call", "arguments": {"agent_id": account["business_id"], "to": COMPLETES}})
    assert status == 403 and body["error"]["code"] == "forbidden" and "insufficient_scope" in headers["WWW-Authenticate"]
    status, body, _ = await api.request("POST", f"{MCP}/tools/call", key=other_key, json={
        "name": "get_business_info", "arguments": {"business_id": account["business_id"]}})
    assert status == 200 and body["isError"] is True and body["content"][0]["text"].startswith("not_found")


async def test_the_connectors_make_call_enforces_compliance_when_asked(api, account, calling_agent):
    key, to = account["key"], "+13055559931"  # no consent recorded
    async with connected(api, key, "2026-07-28") as client:
        refused = await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": to,
                                                       "compliance": "enforce"})
        assert refused.is_error and "number_opted_out" in refused.content[0].text
        placed = await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": to})
        assert not placed.is_error, placed.content
    status, page, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params={"phone": to})
    logged = page["decisions"]
    assert [(d["actor"], d["outcome"], d["rule"]) for d in logged] == [
        ("unchecked_call", "allow", "not_checked"), ("enforced_call", "refuse", "no_consent_call")]
    assert logged[0]["inputs"]["checks"]["code"] == "number_opted_out"
