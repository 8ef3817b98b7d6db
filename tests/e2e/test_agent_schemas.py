"""Every agents and phone-numbers response matches the schema the API publishes for it."""
from jsonschema import Draft202012Validator


async def test_agent_and_number_responses_match_their_published_schemas(api, account):
    key, bid = account["key"], account["business_id"]
    checked = []

    async def check(name: str, status_and_body):
        status, body, _ = status_and_body
        assert status in (200, 201), body
        _, schema, _ = await api.request("GET", "/api/v1/schemas", params={"name": name})
        Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(body)
        checked.append(name)
        return body

    created = await check("AgentCreated", await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": bid, "name": "Schema", "system_prompt": "Answer."}))
    aid = created["id"]
    await check("Agent", await api.request("GET", "/api/v1/agents", key=key, params={"id": aid}))
    await check("AgentList", await api.request("GET", "/api/v1/agents", key=key))
    await check("AgentUpdated", await api.request("PATCH", "/api/v1/agents", key=key,
                                                  json={"id": aid, "first_message": "Hi"}))
    await check("PersonaLoaded", await api.request("POST", "/api/v1/agents/persona", key=key, json={
        "agent_id": aid, "force": True, "persona": {"lead_name": "Kim", "scenario": "Wants a quote"}}))
    await check("SmsPromptUpdated", await api.request("POST", "/api/v1/sms/update-prompt", key=key,
                                                      json={"agent_id": aid, "sms_prompt": "Be brief"}))
    await check("AgentVersionList", await api.request("GET", "/api/v1/agents/versions", key=key,
                                                      params={"agent_id": aid}))
    await check("AgentVersionDetail", await api.request("GET", "/api/v1/agents/versions", key=key,
                                                        params={"agent_id": aid, "version": "1"}))
    await check("AgentRolledBack", await api.request("POST", "/api/v1/agents/versions/rollback", key=key,
                                                     json={"agent_id": aid, "version": 1}))
    pool = await check("AvailableNumberList", await api.request("GET", "/api/v1/phone-numbers/available", key=key,
                                                                params={"country": "GB"}))
    number = pool["numbers"][0]["phone_number"]
    await check("PhoneNumber", await api.request("POST", "/api/v1/phone-numbers", key=key,
                                                 json={"phone_number": number, "agent_id": aid}))
    await check("PhoneNumber", await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                                 json={"phone_number": number, "agent_id": None}))
    await check("PhoneNumberList", await api.request("GET", "/api/v1/phone-numbers", key=key))
    await check("LegacyNumberList", await api.request("GET", "/api/v1/numbers", key=key))
    await check("PhoneNumberReleased", await api.request("DELETE", "/api/v1/phone-numbers", key=key,
                                                         params={"phone_number": number}))
    assert len(checked) == 15
