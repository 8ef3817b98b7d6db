"""/api/v1/agents*: create, read (live from the provider), update, persona, versions, rollback, the SMS
prompt, atomic creation across the provider and the database, scopes and tenancy."""
import json
import uuid

import nats
import pytest

from tests.agents import PROMPT, create_agent, read_agent
from tests.nats_admin import admin_connection


async def patch(api, account, agent_id: str, **fields):
    return await api.request("PATCH", "/api/v1/agents", key=account["key"], json={"id": agent_id, **fields})


async def test_create_with_defaults_and_read_it_back(api, account, voice):
    created = await create_agent(api, account, metadata={"team": "west"})
    assert set(created) == {"id", "name", "business_id", "provider_assistant_id", "created_at", "version",
                            "tool_secret"}
    assert created["tool_secret"] is None  # made with the first custom tool only (tests/e2e/test_agent_tools.py)
    assert created["version"] == 1
    assert created["business_id"] == account["business_id"] and created["provider_assistant_id"] != created["id"]
    agent = await read_agent(api, account, created["id"])
    assert agent["prompts"]["inbound"] == {"prompt": PROMPT, "llm": "gpt-4.1"}
    assert agent["prompts"]["outbound"] == {"prompt": None, "llm": "gpt-4.1", "first_message": None}
    assert agent["first_message"] == "Hello! How can I help you today?"
    assert agent["model"] == {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7}
    assert agent["voice"] == {} and agent["metadata"] == {"team": "west"} and agent["version"] == 1
    assert agent["status"] == "active" and agent["phone_number"] is None
    status, listing, _ = await api.request("GET", "/api/v1/agents", key=account["key"])
    assert status == 200 and listing["has_more"] is False
    assert [a["id"] for a in listing["agents"]] == [created["id"]]
    assert set(listing["agents"][0]) == {"id", "name", "business_id", "created_at", "phone_number", "status"}
    status, _, _ = await api.request("GET", f"/api/v1/agents/{created['id']}", key=account["key"])
    assert status == 404
    # The provider assistant carries the prompt, the greeting and the built-in lead collection.
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert status == 200
    assert assistant["model"]["messages"] == [{"role": "system", "content": PROMPT}]
    assert assistant["firstMessage"] == "Hello! How can I help you today?"
    plan = assistant["analysisPlan"]["structuredDataPlan"]
    assert plan["enabled"] is True and set(plan["schema"]["properties"]) == {"name", "email", "phone", "intent",
                                                                            "quality_dimensions"}
    assert assistant["metadata"]["switchboard_agent_id"] == created["id"]


async def test_camel_case_keys_are_ignored(api, account):
    body = {"business_id": account["business_id"], "name": "Desk", "systemPrompt": PROMPT}
    status, reply, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json=body)
    assert status == 400 and reply["error"] == {"code": "bad_request", "message": "system_prompt is required"}
    created = await create_agent(api, account, firstMessage="Yo!", first_message="Good morning!")
    assert (await read_agent(api, account, created["id"]))["first_message"] == "Good morning!"
    status, reply, _ = await patch(api, account, created["id"], firstMessage="Ignored", inboundPrompt="Ignored")
    assert status == 200 and reply["updated"] is False and reply["updated_fields"] == []


async def test_inbound_prompt_is_read_live_from_the_provider(api, account, voice):
    created = await create_agent(api, account)
    status, _ = await voice.request("PATCH", f"/assistant/{created['provider_assistant_id']}", json={
        "model": {"provider": "openai", "model": "gpt-4.1", "messages": [{"role": "system", "content": "Edited at the provider"}]}})
    assert status == 200
    assert (await read_agent(api, account, created["id"]))["prompts"]["inbound"]["prompt"] == "Edited at the provider"


async def test_patch_changes_only_given_fields_and_syncs_the_provider(api, account, voice):
    created = await create_agent(api, account, metadata={"a": 1, "b": 2})
    status, reply, _ = await patch(api, account, created["id"], system_prompt="New inbound prompt",
                                   outbound_prompt="Call back about the quote", metadata={"b": 3, "c": 4},
                                   model={"temperature": 0.3}, voice={"provider": "11labs", "voiceId": "rachel"},
                                   name="Front desk")
    assert status == 200, reply
    assert reply["updated"] is True and reply["version"] == 2
    assert reply["updated_fields"] == ["inbound_prompt", "outbound_prompt", "voice", "model", "metadata"]
    assert set(reply) == {"id", "name", "business_id", "provider_assistant_id", "updated", "updated_fields", "version",
                          "ignored_provider_config", "eval_gate", "tool_secret"}
    assert reply["eval_gate"] is None  # the agent has not opted in to the eval gate
    agent = await read_agent(api, account, created["id"])
    assert agent["prompts"]["inbound"]["prompt"] == "New inbound prompt"
    assert agent["prompts"]["outbound"]["prompt"] == "Call back about the quote"
    assert agent["metadata"] == {"a": 1, "b": 3, "c": 4}
    assert agent["model"]["temperature"] == 0.3 and agent["model"]["model"] == "gpt-4.1"
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert assistant["voice"] == {"provider": "11labs", "voiceId": "rachel"}
    assert assistant["model"]["temperature"] == 0.3
    assert "Call back" not in json.dumps(assistant)  # outbound prompts stay with us until call time
    # The same values again change nothing and make no version.
    status, reply, _ = await patch(api, account, created["id"], inbound_prompt="New inbound prompt", metadata={"c": 4})
    assert status == 200 and reply["updated"] is False and reply["updated_fields"] == [] and reply["version"] == 2
    status, reply, _ = await patch(api, account, created["id"], inbound_prompt="A", system_prompt="B")
    assert status == 400 and "system_prompt" in reply["error"]["message"]
    # The provider cannot unset a voice (its update takes no null): a set voice can be changed, not cleared.
    status, reply, _ = await patch(api, account, created["id"], voice={})
    assert status == 400 and "cannot go back" in reply["error"]["message"], reply


async def test_provider_config_is_sanitized_before_forwarding(api, account, voice):
    created = await create_agent(api, account)
    status, reply, _ = await patch(api, account, created["id"], provider_config={
        "endCallPhrases": ["goodbye for now"], "maxDurationSeconds": 300, "server": {"url": "https://attacker.example"},
        "analysisPlan": {"structuredDataPlan": {"enabled": False}}})
    assert status == 200, reply
    assert reply["updated_fields"] == ["provider_config"] and reply["ignored_provider_config"] == ["server"]
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert assistant["endCallPhrases"] == ["goodbye for now"] and assistant["maxDurationSeconds"] == 300
    assert "server" not in assistant
    quality = assistant["analysisPlan"]["structuredDataPlan"]["schema"]["properties"]["quality_dimensions"]
    assert all(set(d) == {"type", "description"} for d in quality["properties"].values())  # the provider's JsonSchema
    # Voicemail detection off is the provider's own value (its default).
    status, reply, _ = await patch(api, account, created["id"], provider_config={"voicemailDetection": "off"})
    assert status == 200, reply
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert assistant["voicemailDetection"] == "off"
    assert assistant["analysisPlan"]["structuredDataPlan"]["enabled"] is True  # lead collection stays on
    status, reply, _ = await patch(api, account, created["id"], provider_config={"maxDurationSeconds": 1})
    assert status == 400 and "maxDurationSeconds" in reply["error"]["message"]


async def test_versions_snapshots_redaction_and_rollback(api, account, voice):
    created = await create_agent(api, account)
    aid = created["id"]
    await patch(api, account, aid, inbound_prompt="Second prompt",
                provider_config={"transcriber": {"provider": "deepgram", "apiKey": "dg-secret-123"},
                                 "startSpeakingPlan": {"waitSeconds": 1}})
    await patch(api, account, aid, first_message="Hi there!")
    status, listing, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"], params={"agent_id": aid})
    assert status == 200, listing
    versions = listing["versions"]
    assert [v["version"] for v in versions] == [3, 2, 1] and listing["has_more"] is False
    assert [v["parent_version"] for v in versions] == [2, 1, None]
    assert [v["source"] for v in versions] == ["update", "update", "create"]
    assert versions[0]["changed_fields"] == ["first_message"]
    assert all(v["content_hash"].startswith("sha256:") for v in versions)
    assert "config_snapshot" not in versions[0]
    status, one, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"],
                                       params={"agent_id": aid, "version": "2"})
    assert status == 200
    snap = one["version"]["config_snapshot"]
    assert snap["inbound_prompt"] == "Second prompt"
    assert snap["provider_config"]["transcriber"] == {"provider": "deepgram", "apiKey": "[redacted]"}
    assert "dg-secret-123" not in json.dumps(one)
    status, page, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"],
                                        params={"agent_id": aid, "limit": "2"})
    assert [v["version"] for v in page["versions"]] == [3, 2] and page["has_more"] is True

    status, rolled, _ = await api.request("POST", "/api/v1/agents/versions/rollback", key=account["key"],
                                          json={"agent_id": aid, "version": 1})
    assert status == 200, rolled
    assert rolled["version"] == 4 and rolled["rollback_of"] == 1
    assert rolled["updated_fields"] == ["inbound_prompt", "first_message", "provider_config"]
    agent = await read_agent(api, account, aid)
    assert agent["prompts"]["inbound"]["prompt"] == PROMPT and agent["first_message"] == "Hello! How can I help you today?"
    # The provider's update takes no null: a group added after version 1 goes back to its documented default (an
    # empty plan); one without a default (the transcriber) cannot be removed there, so the rollback keeps it.
    assert agent["provider_config"] == {"transcriber": {"provider": "deepgram", "apiKey": "dg-secret-123"}}
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert assistant["startSpeakingPlan"] == {} and assistant["transcriber"]["provider"] == "deepgram"
    status, listing, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"], params={"agent_id": aid})
    newest = listing["versions"][0]
    assert newest["rollback_of"] == 1 and newest["parent_version"] == 3 and newest["source"] == "rollback"
    assert newest["changed_fields"] == ["inbound_prompt", "first_message", "provider_config"]
    for params, code in (({"agent_id": aid, "version": "99"}, 404), ({"version": "1"}, 400)):
        status, body, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"], params=params)
        assert status == code, body
    status, body, _ = await api.request("POST", "/api/v1/agents/versions/rollback", key=account["key"],
                                        json={"agent_id": aid, "version": 99})
    assert status == 404


async def test_owner_edit_guard_on_writes_and_personas(api, account, voice):
    created = await create_agent(api, account)
    aid = created["id"]
    persona = {"lead_name": "Dana Reyes", "scenario": "Her water heater is leaking.", "objective": "Book a visit today",
               "facts_to_reveal": ["Lives in Oakland"], "facts_to_withhold": ["Has a competing quote"]}
    # The prompt the agent was created with through the API is no owner edit: a persona replaces it.
    assert (await read_agent(api, account, aid))["prompts"]["inbound"]["prompt"] == PROMPT
    status, loaded, _ = await api.request("POST", "/api/v1/agents/persona", key=account["key"],
                                          json={"id": aid, "persona": persona})
    assert status == 200, loaded
    assert loaded["persona_loaded"] is True and loaded["updated"] is True
    assert loaded["persona_summary"] == {"lead_name": "Dana Reyes", "objective": "Book a visit today"}
    status, assistant = await voice.request("GET", f"/assistant/{created['provider_assistant_id']}")
    assert "Dana Reyes" in assistant["model"]["messages"][0]["content"]
    assert assistant["firstMessage"] == "Hi, this is Dana Reyes."
    # A persona may replace a persona without force; a stale expected_version is refused.
    status, again, _ = await api.request("POST", "/api/v1/agents/persona", key=account["key"], json={
        "agent_id": aid, "persona": {**persona, "lead_name": "Sam"}, "first_message": "Hello?",
        "expected_version": loaded["version"]})
    assert status == 200 and again["version"] == loaded["version"] + 1
    status, body, _ = await patch(api, account, aid, name="Renamed", expected_version=loaded["version"])
    assert status == 409 and "version" in body["error"]["message"]
    assert (await read_agent(api, account, aid))["name"] == "Front desk"
    for bad, fragment, code in (
            ({"persona": persona}, "agent_id or id is required", "bad_request"),
            ({"agent_id": aid, "persona": {"lead_name": "X"}}, "persona.scenario is required", "bad_request"),
            ({"agent_id": aid, "id": aid, "persona": persona}, "only one of agent_id or id", "invalid_request")):
        status, body, _ = await api.request("POST", "/api/v1/agents/persona", key=account["key"], json=bad)
        assert status == 400 and fragment in body["error"]["message"] and body["error"]["code"] == code, body


async def test_sms_prompt_update_is_audited_and_prompt_changes_emit_events(api, account, stack, db):
    created = await create_agent(api, account)
    nc = await admin_connection(stack)
    try:
        sub = await nc.jetstream().subscribe("events.agent.prompt_changed", ordered_consumer=True,
                                             deliver_policy=nats.js.api.DeliverPolicy.NEW)
        status, body, _ = await api.request("POST", "/api/v1/sms/update-prompt", key=account["key"], json={
            "agent_id": created["id"], "sms_prompt": "Reply in two sentences.", "reason": "shorter texts"})
        assert status == 200, body
        assert body == {"success": True, "agent_id": created["id"], "message": "SMS prompt updated", "version": 2,
                        "eval_gate": None}
        event = None
        while event is None:
            msg = await sub.next_msg(timeout=10)
            candidate = json.loads(msg.data)
            if candidate["data"]["agent_id"] == created["id"]:
                event = candidate
        assert event["business_id"] == account["business_id"]
        assert event["data"]["fields"] == ["sms_prompt"] and event["data"]["reason"] == "shorter texts"
        assert event["data"]["notify"] == "owner"
    finally:
        await nc.close()
    rows = await db.fetch("SELECT field, previous, current, source, reason FROM agents.prompt_history "
                          "WHERE agent_id = $1 ORDER BY id", created["id"])
    assert [tuple(r) for r in rows][-1] == ("sms_prompt", None, "Reply in two sentences.", "sms_prompt", "shorter texts")
    assert [r["field"] for r in rows][:2] == ["inbound_prompt", "first_message"]  # written at creation
    agent = await read_agent(api, account, created["id"])
    assert agent["prompts"]["sms"] == {"prompt": "Reply in two sentences.", "llm": "gpt-4.1"}
    status, body, _ = await api.request("POST", "/api/v1/sms/update-prompt", key=account["key"],
                                        json={"agent_id": created["id"]})
    assert status == 400 and "sms_prompt" in body["error"]["message"]


async def test_creation_is_atomic_when_the_provider_fails(api, account, voice, db):
    await voice.fail_next("POST", "/assistant", 500)
    body = {"business_id": account["business_id"], "name": "Provider down", "system_prompt": PROMPT}
    status, reply, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json=body)
    assert status == 500 and reply["error"]["code"] == "provider_error"
    assert "svc_live" not in reply["error"]["message"]
    assert await db.fetchval("SELECT count(*) FROM agents.agents WHERE business_id = $1", account["business_id"]) == 0


async def test_creation_is_atomic_when_the_database_insert_fails(api, account, voice, db):
    name = f"db-fault-{uuid.uuid4().hex[:8]}"
    await db.execute(f"""
        CREATE FUNCTION agents.refuse_{name.replace('-', '_')}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.name = '{name}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse_{name.replace('-', '_')} BEFORE INSERT ON agents.agents
        FOR EACH ROW EXECUTE FUNCTION agents.refuse_{name.replace('-', '_')}();""")
    try:
        status, reply, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
            "business_id": account["business_id"], "name": name, "system_prompt": PROMPT})
    finally:
        await db.execute(f"DROP TRIGGER refuse_{name.replace('-', '_')} ON agents.agents; "
                         f"DROP FUNCTION agents.refuse_{name.replace('-', '_')}()")
    assert status == 500 and reply["error"]["code"] == "internal_error"
    status, assistants = await voice.request("GET", "/assistant?limit=1000")
    assert status == 200 and name not in [a.get("name") for a in assistants]  # the provider assistant was removed
    assert await db.fetchval("SELECT count(*) FROM agents.agents WHERE name = $1", name) == 0


async def test_a_provider_outage_on_update_changes_nothing(api, account, voice):
    created = await create_agent(api, account)
    await voice.fail_next("PATCH", "/assistant", 503, times=10)
    status, reply, _ = await patch(api, account, created["id"], inbound_prompt="Will not land")
    assert status == 500 and reply["error"]["code"] == "provider_error"
    await voice.clear_faults()
    agent = await read_agent(api, account, created["id"])
    assert agent["prompts"]["inbound"]["prompt"] == PROMPT and agent["version"] == 1


@pytest.mark.parametrize("fields, fragment, code", [
    ({"model": {"temperature": 5}}, "temperature", "invalid_request"),
    ({"name": ""}, "name", "invalid_request"),
    ({"voice": {"voiceId": "x"}}, "voice.voiceId needs voice.provider", "bad_request"),
    ({"voice": {"provider": "11labs"}}, "voiceId", "bad_request"),
    ({"voice": {"provider": "elevenlabs", "voiceId": "x"}}, "voice.provider", "invalid_request"),
    ({"model": {"provider": "custom-llm"}}, "model.provider", "invalid_request"),
    ({"metadata": "x"}, "metadata", "invalid_request"),
    ({"inbound_prompt": "a", "system_prompt": "a"}, "not together", "invalid_request"),
])
async def test_update_validation_names_the_field(api, account, fields, fragment, code):
    created = await create_agent(api, account)
    status, reply, _ = await patch(api, account, created["id"], **fields)
    assert status == 400 and reply["error"]["code"] == code and fragment in reply["error"]["message"], reply


async def test_integral_floats_are_integers_and_out_of_range_integers_are_refused(api, account):
    """JSON Schema takes 2.0 as an integer: so do we (it once raised a TypeError in the gateway)."""
    created = await create_agent(api, account)
    status, body, _ = await patch(api, account, created["id"], name="Second", expected_version=1.0)
    assert status == 200 and body["version"] == 2, body
    status, body, _ = await api.request("POST", "/api/v1/agents/versions/rollback", key=account["key"],
                                        json={"agent_id": created["id"], "version": 1.0, "expected_version": 2.0})
    assert status == 200 and body["rollback_of"] == 1, body
    for request in (("POST", "/api/v1/agents/versions/rollback", {"json": {"agent_id": created["id"], "version": 923383.0}}),
                    ("POST", "/api/v1/agents/versions/rollback", {"json": {"agent_id": created["id"], "version": 2**40}}),
                    ("GET", "/api/v1/agents/versions", {"params": {"agent_id": created["id"], "version": str(10**20)}})):
        method, path, kwargs = request
        status, body, _ = await api.request(method, path, key=account["key"], **kwargs)
        assert status in (400, 404) and body["error"]["code"] in ("invalid_request", "not_found"), (request, body)


async def test_scopes_and_another_account(api, account, other_key):
    created = await create_agent(api, account)
    aid, bid = created["id"], account["business_id"]
    status, body, _ = await api.request("POST", "/api/v1/agents", key=account["read_key"],
                                        json={"business_id": bid, "name": "x", "system_prompt": "x"})
    assert status == 403 and "agents:write" in body["error"]["message"]
    assert (await api.request("GET", "/api/v1/agents", key=account["read_key"], params={"id": aid}))[0] == 200
    status, listing, _ = await api.request("GET", "/api/v1/agents", key=other_key)
    assert status == 200 and listing["agents"] == []
    attempts = [
        ("GET", "/api/v1/agents", {"params": {"id": aid}}),
        ("PATCH", "/api/v1/agents", {"json": {"id": aid, "name": "Hijacked"}}),
        ("POST", "/api/v1/agents/persona", {"json": {"agent_id": aid, "force": True,
                                                      "persona": {"lead_name": "x", "scenario": "y"}}}),
        ("GET", "/api/v1/agents/versions", {"params": {"agent_id": aid}}),
        ("POST", "/api/v1/agents/versions/rollback", {"json": {"agent_id": aid, "version": 1}}),
        ("POST", "/api/v1/sms/update-prompt", {"json": {"agent_id": aid, "sms_prompt": "x"}}),
    ]
    for method, path, kwargs in attempts:
        status, body, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 404 and body["error"]["code"] == "not_found", (method, path, body)
    status, body, _ = await api.request("POST", "/api/v1/agents", key=other_key,
                                        json={"business_id": bid, "name": "x", "system_prompt": "x"})
    assert status == 403 and body["error"]["code"] == "forbidden"
    status, body, _ = await api.request("GET", "/api/v1/agents", key=other_key, params={"business_id": bid})
    assert status == 403
    agent = await read_agent(api, account, aid)
    assert agent["name"] == "Front desk" and agent["version"] == 1
