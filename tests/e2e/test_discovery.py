"""OpenAPI, JSON Schemas, capabilities, health, usage, balance, probes."""
import asyncio

from jsonschema import Draft202012Validator

from deploy.local.servers import wait_for_port
from gateway.route_table import all_routes
from tests.waiting import wait_until


async def test_openapi_describes_every_route(api):
    status, doc, _ = await api.request("GET", "/api/v1/openapi.json")
    assert status == 200 and doc["openapi"] == "3.1.0"
    for route in all_routes():
        op = doc["paths"][route.path][route.method.lower()]
        assert op["summary"] and op["responses"]
        if route.auth == "key":
            assert "401" in op["responses"] and "429" in op["responses"]
    assert "lifecycle:write" in doc["paths"]["/api/v1/workspaces"]["patch"]["description"]
    schemas = doc["components"]["schemas"]

    def refs(node):
        if isinstance(node, dict):
            if "$ref" in node:
                yield node["$ref"]
            for v in node.values():
                yield from refs(v)
        elif isinstance(node, list):
            for v in node:
                yield from refs(v)

    for ref in refs(doc):
        assert ref.rsplit("/", 1)[1] in schemas, ref
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)


async def test_schemas_endpoint(api):
    status, body, _ = await api.request("GET", "/api/v1/schemas")
    assert status == 200 and "Workspace" in body["schemas"]
    status, one, _ = await api.request("GET", "/api/v1/schemas", params={"name": "WorkspaceList"})
    assert status == 200 and one["title"] == "WorkspaceList"
    assert one["properties"]["workspaces"]["items"]["properties"]["lifecycle_state"] == {"type": "string"}
    status, body, _ = await api.request("GET", "/api/v1/schemas", params={"name": "Nope"})
    assert status == 404 and body["error"]["code"] == "not_found"


async def test_responses_match_their_published_schemas(api, account):
    key = account["key"]
    checks = [("GET", "/api/v1/workspaces", "WorkspaceList"), ("GET", "/api/v1/capabilities", "Capabilities"),
              ("GET", "/api/v1/health", "Health"), ("GET", "/api/v1/balance", "Balance"),
              ("GET", "/api/v1/usage", "UsageList")]
    for method, path, name in checks:
        _, schema, _ = await api.request("GET", "/api/v1/schemas", params={"name": name})
        # 503 is retried, as a client is told to: the balance asks the payment provider and the health every service,
        # one of which an earlier test of the shared stack may have restarted a moment ago
        status, body, _ = await wait_until(lambda m=method, p=path: api.request(m, p, key=key), f"{path} to answer",
                                           lambda r: r[0] != 503, timeout=15, interval=1)
        assert status == 200, (path, status, body)
        Draft202012Validator(schema).validate(body)
    _, schema, _ = await api.request("GET", "/api/v1/schemas", params={"name": "ApiKeyCreated"})
    Draft202012Validator(schema).validate(await account["dashboard"].create_key())


async def test_single_reads_by_id_return_and_publish_the_resource_itself(api, account):
    """GET /agents?id= and /leads?id= answer the resource, not the list: the document says so with a oneOf
    (the list schema was once published for both, and schemathesis caught the mismatch)."""
    key, bid = account["key"], account["business_id"]
    _, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": bid, "name": "Desk", "system_prompt": "Answer the phone."})
    _, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={"business_id": bid, "name": "Ann"})
    _, doc, _ = await api.request("GET", "/api/v1/openapi.json")
    for path, record, single in (("/api/v1/agents", agent, "Agent"), ("/api/v1/leads", lead, "Lead")):
        published = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        names = [ref["$ref"].rsplit("/", 1)[1] for ref in published["oneOf"]]
        assert single in names and len(names) == 2
        schemas = {n: (await api.request("GET", "/api/v1/schemas", params={"name": n}))[1] for n in names}
        status, one, _ = await api.request("GET", path, key=key, params={"id": record["id"]})
        assert status == 200 and one["id"] == record["id"]
        assert [n for n in names if Draft202012Validator(schemas[n]).is_valid(one)] == [single]
        status, many, _ = await api.request("GET", path, key=key)
        assert [n for n in names if Draft202012Validator(schemas[n]).is_valid(many)] == [n for n in names if n != single]


async def test_creating_routes_link_to_the_routes_that_take_what_they_create(api):
    _, doc, _ = await api.request("GET", "/api/v1/openapi.json")
    links = doc["paths"]["/api/v1/agents"]["post"]["responses"]["201"]["links"]
    assert links["get_agents.id"] == {"operationId": "get_agents", "parameters": {"query.id": "$response.body#/id"}}
    assert links["patch_agents.id"] == {"operationId": "patch_agents", "requestBody": {"id": "$response.body#/id"}}
    assert links["post_agents_persona.agent_id"]["requestBody"] == {"agent_id": "$response.body#/id"}
    hooks = doc["paths"]["/api/v1/webhooks"]["post"]["responses"]["201"]["links"]
    assert hooks["delete_webhooks.id"]["parameters"] == {"query.id": "$response.body#/webhook/id",
                                                         "query.business_id": "$response.body#/business_id"}
    ops = {op["operationId"] for methods in doc["paths"].values() for op in methods.values()}
    every = [link for methods in doc["paths"].values() for op in methods.values()
             for response in op["responses"].values() for link in response.get("links", {}).values()]
    assert every and all(link["operationId"] in ops for link in every)


async def test_capabilities_lists_workspaces_scopes_and_endpoints(api, account):
    status, caps, _ = await api.request("GET", "/api/v1/capabilities", key=account["read_key"])
    assert status == 200
    assert [w["id"] for w in caps["workspaces"]] == [account["business_id"]]
    assert "lifecycle:write" in caps["scopes"] and "*" in caps["scopes"]
    endpoints = {(e["method"], e["path"]): e for e in caps["endpoints"]}
    assert endpoints[("GET", "/api/v1/workspaces")]["allowed"] is True
    assert endpoints[("POST", "/api/v1/workspaces")]["allowed"] is False


async def test_health_and_probes(api, account):
    status, health, _ = await api.request("GET", "/api/v1/health", key=account["read_key"])
    assert status == 200 and health["status"] == "ok" and health["queue"] == "ok"
    assert health["services"] == {"accounts": "ok", "agents": "ok", "calls": "ok", "evals": "ok", "messaging": "ok",
                                  "sdr": "ok", "webhooks": "ok"}
    assert health["providers"]["voice"] == health["providers"]["messaging"] == "ok"
    assert (await api.request("GET", "/api/v1/health"))[0] == 401
    status, body, _ = await api.request("GET", "/healthz")
    assert status == 200 and body == {"status": "ok"}
    status, body, _ = await api.request("GET", "/readyz")
    # ready means this gateway can serve; what it reaches is information (/api/v1/health tells its state)
    assert status == 200 and (body["ready"], body["draining"], body["nats"]) == (True, False, "ok")


async def test_usage_log_records_requests_written_behind(api, account):
    key = account["key"]
    await api.request("GET", "/api/v1/workspaces", key=key)
    await api.request("GET", "/api/v1/workspaces", key=key, params={"id": "00000000-0000-0000-0000-000000000000"})

    async def logged() -> list[dict]:
        status, body, _ = await api.request("GET", "/api/v1/usage", key=key)
        return [e for e in body["usage"] if e["endpoint"] == "/api/v1/workspaces"]
    entries = await wait_until(logged, "two usage entries of /api/v1/workspaces", lambda found: len(found) >= 2,
                               timeout=8, interval=0.2)
    assert sorted(e["status_code"] for e in entries) == [200, 404]
    assert all(e["method"] == "GET" and e["cost_cents"] == 0 and e["call_id"] is None for e in entries)
    status, page, _ = await api.request("GET", "/api/v1/usage", key=key, params={"limit": "1"})
    assert len(page["usage"]) == 1 and page["has_more"] is True
    status, body, _ = await api.request("GET", "/api/v1/usage", key=key,
                                        params={"start": "2030-01-01T00:00:00Z", "end": "2020-01-01T00:00:00Z"})
    assert status == 400
    status, body, _ = await api.request("GET", "/api/v1/usage", key=key, params={"limit": "501"})
    assert status == 400
    other = await api.signup()
    status, body, _ = await api.request("GET", "/api/v1/usage", key=other["api_key"])
    assert all(e["id"] not in {x["id"] for x in entries} for e in body["usage"])


async def test_requests_made_while_accounts_is_down_reach_the_usage_log_soon_after_it_is_back(api, account, stack):
    """The usage writer waits for accounts to be reachable instead of sleeping ever longer between attempts (it
    slept 0.5, 1, 2, 4, 8 s, so a log was ~15 s behind after accounts started late)."""
    key = account["key"]
    await api.request("GET", "/api/v1/workspaces", key=key)  # the key's principal cached: no accounts call needed
    accounts = stack.process("accounts")
    await asyncio.to_thread(stack.stop_process, accounts)
    try:
        for _ in range(3):
            status, body, _ = await api.request("GET", "/api/v1/calls", key=key, params={"limit": "1"})
            assert status == 200, body
        await asyncio.sleep(7)  # the writer has failed to send them several times by now
    finally:
        def restart():
            stack.spawn(accounts)
            wait_for_port(accounts.port, 30, accounts.proc, "accounts", accounts.log)
        await asyncio.to_thread(restart)

    async def logged() -> list[dict]:
        status, body, _ = await api.request("GET", "/api/v1/usage", key=key, params={"limit": "100"})
        return [e for e in body["usage"] if e["endpoint"] == "/api/v1/calls"] if status == 200 else []
    # the channel's reconnect backoff is at most 3 s (core.rpc.BALANCING), then the batch goes at once
    entries = await wait_until(logged, "the requests made while accounts was down", lambda found: len(found) == 3,
                               timeout=4, interval=0.1)
    assert {e["status_code"] for e in entries} == {200}
    await asyncio.to_thread(stack.wait_ready, 30)
