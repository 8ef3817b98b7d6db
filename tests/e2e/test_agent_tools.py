"""An agent's tools through the public API (/api/v1/agents, /api/v1/agents/rotate-tool-secret): stored and
versioned, given to the provider assistant in Vapi's documented `model.tools` shape, the custom tools' secret shown
once and rotated, bad tools refused naming the field, and another business's key refused."""
from providers.voice.vapi import assistants
from tests.agents import create_agent, read_agent

LOOKUP = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
          "parameters": {"type": "object", "properties": {"order": {"type": "string", "description": "Its number"}},
                         "required": ["order"]},
          "url": "http://127.0.0.1:9/tools/orders"}  # loopback: the stack is local (`make run`)
TOOLS = [{"type": "send_sms"}, {"type": "end_call"},
         {"type": "transfer_call", "destinations": [{"name": "Sales", "phone_number": "+14155550123",
                                                     "message": "One moment, putting you through."}]}]


async def patch(api, account, agent_id: str, **fields):
    return await api.request("PATCH", "/api/v1/agents", key=account["key"], json={"id": agent_id, **fields})


async def provider_tools(voice, assistant_id: str) -> list:
    status, assistant = await voice.request("GET", f"/assistant/{assistant_id}")
    assert status == 200
    return assistant["model"].get("tools", [])


async def test_tools_are_stored_versioned_and_given_to_the_provider(api, account, voice):
    created = await create_agent(api, account, tools=TOOLS)
    assert created["tool_secret"] is None  # no custom tool: no secret
    agent = await read_agent(api, account, created["id"])
    assert agent["tool_secret_masked"] is None
    assert agent["tools"] == [TOOLS[0], TOOLS[1], {"type": "transfer_call", "destinations": [
        {"name": "Sales", "phone_number": "+14155550123", "mode": "warm",
         "message": "One moment, putting you through."}]}]
    sms, end, transfer = await provider_tools(voice, created["provider_assistant_id"])
    assert sms["type"] == "function" and sms["function"]["name"] == "send_sms"
    assert sms["server"]["url"].endswith("/api/v1/providers/voice/messages") and sms["server"]["credentialId"]
    assert set(sms["function"]["parameters"]["properties"]) == {"to", "text"}
    assert end == {"type": "endCall"}
    assert transfer == {"type": "transferCall", "destinations": [
        {"type": "number", "number": "+14155550123", "description": "Sales", "message":
         "One moment, putting you through.", "transferPlan": {
             "mode": "warm-transfer-experimental",
             "fallbackPlan": {"message": assistants.TRANSFER_FAILED, "endCallEnabled": False}}}],
        "messages": [{"type": "request-failed", "role": "system", "content": assistants.FAILED_TRANSFER_HINT}]}

    # PATCH replaces the list: a new version, the provider's model follows, the secret is shown this once.
    status, reply, _ = await patch(api, account, created["id"], tools=[{"type": "end_call"}, LOOKUP])
    assert status == 200, reply
    assert reply["updated_fields"] == ["tools"] and reply["version"] == 2
    secret = reply["tool_secret"]
    assert secret.startswith("tsec_")
    agent = await read_agent(api, account, created["id"])
    assert agent["tools"] == [{"type": "end_call"}, {**LOOKUP, "timeout_ms": 5000}] and agent["version"] == 2
    assert agent["tool_secret_masked"] == f"tsec_...{secret[-4:]}"
    end, custom = await provider_tools(voice, created["provider_assistant_id"])
    assert custom["function"] == {"name": "lookup_order", "description": "Find an order by its number",
                                  "parameters": LOOKUP["parameters"]}
    assert custom["server"]["url"].endswith("/api/v1/providers/voice/messages")  # we call the business's URL
    status, one, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"],
                                       params={"agent_id": created["id"], "version": "2"})
    assert status == 200 and one["version"]["changed_fields"] == ["tools"]
    assert one["version"]["config_snapshot"]["tools"][1]["url"] == LOOKUP["url"]
    assert secret not in str(one) and secret not in str(agent)

    # The same list again changes nothing and shows no secret; removing every tool is a version of its own.
    status, reply, _ = await patch(api, account, created["id"], tools=[{"type": "end_call"}, LOOKUP])
    assert status == 200 and reply["updated"] is False and reply["tool_secret"] is None
    status, reply, _ = await patch(api, account, created["id"], tools=[])
    assert status == 200 and reply["version"] == 3 and reply["tool_secret"] is None
    assert await provider_tools(voice, created["provider_assistant_id"]) == []
    assert (await read_agent(api, account, created["id"]))["tools"] == []


async def test_the_tool_secret_is_shown_once_and_rotated(api, account):
    created = await create_agent(api, account, tools=[LOOKUP])
    first = created["tool_secret"]
    assert first.startswith("tsec_")
    status, rotated, _ = await api.request("POST", "/api/v1/agents/rotate-tool-secret", key=account["key"],
                                           json={"id": created["id"]})
    assert status == 200, rotated
    assert set(rotated) == {"id", "tool_secret", "previous_secret_expires_at"}
    assert rotated["id"] == created["id"] and rotated["tool_secret"].startswith("tsec_")
    assert rotated["tool_secret"] != first and rotated["previous_secret_expires_at"].endswith("Z")
    agent = await read_agent(api, account, created["id"])
    assert agent["version"] == 1 and first not in str(agent) and rotated["tool_secret"] not in str(agent)
    assert agent["tool_secret_masked"] == f"tsec_...{rotated['tool_secret'][-4:]}"
    status, body, _ = await api.request("POST", "/api/v1/agents/rotate-tool-secret", key=account["read_key"],
                                        json={"id": created["id"]})
    assert status == 403 and "agents:write" in body["error"]["message"]


async def test_bad_tools_are_refused_naming_the_field(api, account, voice):
    cases = [
        ([{"type": "fax"}], "tools[0].type must be one of"),
        ([{"type": "send_sms"}, {**LOOKUP, "url": "https://10.0.0.7/orders"}], "tools[1].url must name a host"),
        ([{**LOOKUP, "url": "http://tools.example.com/orders"}], "tools[0].url must be an https URL"),
        ([{**LOOKUP, "parameters": {"type": "object", "properties": {"n": {"type": "strin"}}}}],
         "tools[0].parameters.properties.n.type is not a valid JSON Schema"),
        ([{"type": "send_link", "links": [{"name": "Menu", "url": "http://example.com/menu"}]}],
         "tools[0].links[0].url must be an https URL"),
        ([{"type": "transfer_call", "destinations": [{"name": "Sales", "phone_number": "+1415"}]}],
         "tools[0].destinations[0].phone_number must be a valid phone number"),
        ([{"type": "end_call"}] * 21, "tools may hold at most 20 tools"),
    ]
    status, before = await voice.request("GET", "/assistant")
    for tools, message in cases:
        body = {"business_id": account["business_id"], "name": "Desk", "system_prompt": "Answer.", "tools": tools}
        status, reply, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json=body)
        assert status == 400 and reply["error"]["code"] == "invalid_request", (tools, reply)
        assert message in reply["error"]["message"], reply
    status, after = await voice.request("GET", "/assistant")
    assert len(after) == len(before)  # refused before the provider was asked
    created = await create_agent(api, account)
    status, reply, _ = await patch(api, account, created["id"], tools=[{"type": "custom", "name": "x"}])
    assert status == 400 and reply["error"]["message"].startswith("tools[0].description is required")
    status, reply, _ = await patch(api, account, created["id"], tools="send_sms")
    assert status == 400 and reply["error"]["code"] == "invalid_request"
    assert (await read_agent(api, account, created["id"]))["version"] == 1


async def test_the_catalogue_is_in_the_capabilities(api, account):
    status, caps, _ = await api.request("GET", "/api/v1/capabilities", key=account["key"])
    assert status == 200
    assert [t["type"] for t in caps["agent_tools"]] == ["send_sms", "send_link", "check_availability",
                                                        "book_appointment", "update_lead", "transfer_call",
                                                        "end_call", "custom"]
    assert all(t["description"] for t in caps["agent_tools"])


async def test_another_business_cannot_read_change_or_rotate(api, account, other_key):
    created = await create_agent(api, account, tools=[LOOKUP])
    attempts = [("GET", "/api/v1/agents", {"params": {"id": created["id"]}}),
                ("PATCH", "/api/v1/agents", {"json": {"id": created["id"], "tools": []}}),
                ("POST", "/api/v1/agents/rotate-tool-secret", {"json": {"id": created["id"]}})]
    for method, path, kwargs in attempts:
        status, body, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 404 and body["error"]["code"] == "not_found", (method, path, body)
        assert "tsec_" not in str(body)
    agent = await read_agent(api, account, created["id"])
    assert agent["version"] == 1 and agent["tools"][0]["name"] == "lookup_order"
