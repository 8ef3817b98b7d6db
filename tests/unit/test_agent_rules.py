"""Agent and phone-number rules as plain functions."""
import pytest

from contracts import agents
from core.contact import NumberFacts, normalize_e164, number_facts
from core.errors import ServiceError
from core.tenant import Tenant, acting_for, pick_business
from providers.voice.port import AssistantSpec
from providers.voice.vapi import assistants
from providers.voice.vapi.simulator import validation
from services.agents import domain, numbers_domain
from services.agents.service import update_source


def spec(c: domain.AgentConfig) -> AssistantSpec:
    return domain.assistant_spec(c, "agent-1", "biz-1")


def config(**overrides) -> domain.AgentConfig:
    return domain.new_config(overrides.pop("name", "Front desk"), overrides.pop("prompt", "You answer calls."),
                             overrides.pop("first_message", None), overrides.pop("voice", {}),
                             overrides.pop("model", {}))


def test_new_agent_defaults():
    c = config()
    assert c.first_message == "Hello! How can I help you today?"
    assert c.model == {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7}
    assert c.voice == {}
    assert domain.new_config("A", "p", None, {}, {"temperature": 0.2}).model["temperature"] == 0.2


@pytest.mark.parametrize("model, message", [
    ({"temperature": 3}, "temperature"), ({"temperature": "hot"}, "temperature"), ({"model": ""}, "model.model"),
    ({"maxTokens": 5}, "maxTokens"),
])
def test_bad_models_are_refused_by_name(model, message):
    with pytest.raises(ServiceError) as err:
        domain.check_model(model)
    assert err.value.code == "invalid_request" and message in err.value.message


def test_voice_needs_a_provider_and_known_keys():
    assert domain.check_voice({"provider": "11labs", "voiceId": "rachel"}) == {"provider": "11labs", "voiceId": "rachel"}
    for bad in ({"voiceId": "x"}, {"provider": "11labs", "voice_id": "x"}, {"provider": "11labs"}):
        with pytest.raises(ServiceError):
            domain.check_voice(bad)


def test_assistant_body_has_lead_collection_and_a_provider_sized_name():
    c = domain.replace(config(name="A" * 60), provider_config={"analysisPlan": {"summaryPlan": {"enabled": False},
                                                                                "structuredDataPlan": {"enabled": False}}})
    body = assistants.create_body(domain.assistant_spec(c, "agent-1", "biz-1"))
    assert len(body["name"]) == 40
    assert body["model"]["messages"] == [{"role": "system", "content": "You answer calls."}]
    plan = body["analysisPlan"]
    assert plan["summaryPlan"] == {"enabled": False}
    assert plan["structuredDataPlan"]["enabled"] is True
    assert set(plan["structuredDataPlan"]["schema"]["properties"]) == {"name", "email", "phone", "intent",
                                                                       "quality_dimensions"}
    assert body["metadata"] == {"switchboard_agent_id": "agent-1", "business_id": "biz-1"}
    assert "voice" not in body


def test_provider_config_is_sanitized_against_the_allow_list():
    kept, dropped = domain.sanitize_provider_config({
        "endCallPhrases": ["goodbye now"], "maxDurationSeconds": 300, "server": {"url": "https://evil"},
        "credentials": [{"apiKey": "x"}], "transcriber": {"provider": "deepgram"}})
    assert kept == {"endCallPhrases": ["goodbye now"], "maxDurationSeconds": 300, "transcriber": {"provider": "deepgram"}}
    assert dropped == ["credentials", "server"]
    for bad in ({"maxDurationSeconds": 5}, {"endCallPhrases": "bye"}, {"transcriber": "deepgram"}):
        with pytest.raises(ServiceError):
            domain.sanitize_provider_config(bad)


def test_update_lists_only_fields_whose_value_changed():
    current = config()
    change = domain.apply_update(current, texts={"inbound_prompt": "You answer calls.", "sms_prompt": "Be brief."},
                                 model={"temperature": 0.7}, voice=None)
    assert change.changed == ["sms_prompt"]
    assert change.provider_changed == [] and change.prompts_changed == ["sms_prompt"]
    change = domain.apply_update(current, texts={"name": "Desk", "first_message": "Hi!"}, model={"model": "gpt-4o"})
    assert change.changed == ["name", "first_message", "model"]
    assert change.config.model == {"provider": "openai", "model": "gpt-4o", "temperature": 0.7}
    patch = assistants.update_body(spec(change.config), spec(current))
    assert patch == {"name": "Desk", "firstMessage": "Hi!", "model": {**change.config.model, "messages": [
        {"role": "system", "content": "You answer calls."}]}}
    assert domain.apply_update(current, texts={"outbound_prompt": ""}).changed == []  # empty clears; already clear


def test_a_patch_never_sends_null():
    """The provider's UpdateAssistantDTO has no nullable property: a dropped setting group goes back to its
    documented default; a voice or a group without one is not sent (changes cannot remove them)."""
    current = config()
    tuned = domain.replace(current, voice={"provider": "11labs", "voiceId": "burt"}, provider_config={
        "transcriber": {"provider": "deepgram"}, "voicemailDetection": {"provider": "vapi"}, "maxDurationSeconds": 300,
        "startSpeakingPlan": {"waitSeconds": 1}, "endCallMessage": "Bye"})
    back = domain.change_to(tuned, current)
    assert back.changed == ["voice", "provider_config"]
    patch = assistants.update_body(spec(back.config), spec(tuned))
    assert None not in patch.values()
    assert {k: patch[k] for k in ("voicemailDetection", "maxDurationSeconds", "startSpeakingPlan")} == {
        "voicemailDetection": "off", "maxDurationSeconds": 600, "startSpeakingPlan": {}}
    assert not {"voice", "transcriber", "endCallMessage"} & set(patch)
    assert "structuredDataPlan" in patch["analysisPlan"]
    assert set(assistants.SETTING_DEFAULTS) | assistants.KEPT | {"analysisPlan"} == set(
        agents.PROVIDER_CONFIG_GROUPS)


def test_a_voice_cannot_be_unset_and_a_rollback_keeps_what_the_provider_cannot_remove():
    tuned = domain.replace(config(), voice={"provider": "11labs", "voiceId": "burt"},
                           provider_config={"transcriber": {"provider": "deepgram"}, "maxDurationSeconds": 300})
    with pytest.raises(ServiceError) as err:
        domain.apply_update(tuned, texts={}, voice={})
    assert err.value.code == "invalid_request" and "cannot go back" in err.value.message
    restored = domain.restore_snapshot(domain.snapshot(config()), tuned, assistants.KEPT)
    assert restored.voice == tuned.voice and restored.provider_config == {"transcriber": {"provider": "deepgram"}}
    assert domain.change_to(tuned, restored).changed == ["provider_config"]


@pytest.mark.parametrize("voice, message", [
    ({"provider": "11labs"}, "voice.voiceId is required"), ({"provider": "elevenlabs", "voiceId": "x"}, "one of"),
    ({"provider": "custom-voice", "voiceId": "x"}, "one of"),  # needs a server our voice object does not carry
])
def test_voices_are_the_providers(voice, message):
    with pytest.raises(ServiceError) as err:
        domain.check_voice(voice)
    assert message in err.value.message


def test_model_providers_are_the_providers():
    assert domain.check_model({"provider": "anthropic", "model": "claude-sonnet-4-6"})["provider"] == "anthropic"
    for provider in ("gpt", "custom-llm"):  # custom-llm needs a url our model object does not carry
        with pytest.raises(ServiceError) as err:
            domain.check_model({"provider": provider})
        assert "model.provider must be one of" in err.value.message


def test_voicemail_detection_may_be_off_or_a_providers_plan():
    kept, _ = domain.sanitize_provider_config({"voicemailDetection": "off"})
    assert kept == {"voicemailDetection": "off"}
    assert domain.sanitize_provider_config({"voicemailDetection": {"provider": "twilio"}})[0]
    for bad in ("on", {"provider": "acme"}):
        with pytest.raises(ServiceError):
            domain.sanitize_provider_config({"voicemailDetection": bad})


def test_the_lead_collection_schema_is_the_providers_json_schema():
    schema = domain.COLLECTED
    assert validation.json_schema(schema, "schema") == []
    dimension = schema["properties"]["quality_dimensions"]["properties"]["empathy"]
    assert validation.json_schema({**dimension, "minimum": 1}, "s") == ["s.property minimum should not exist"]


def test_system_prompt_alias():
    assert domain.resolve_inbound_alias(None, "a") == "a"
    with pytest.raises(ServiceError):
        domain.resolve_inbound_alias("a", "b")


def test_metadata_is_merged():
    assert domain.merge_metadata({"a": 1, "b": 2}, {"b": 3}) == ({"a": 1, "b": 3}, True)
    assert domain.merge_metadata({"a": 1}, {"a": 1}) == ({"a": 1}, False)


def test_owner_edit_guard():
    domain.check_owner_edit_guard(current_version=3, expected_version=3, source="update", inbound_prompt_source="create")
    with pytest.raises(ServiceError) as err:
        domain.check_owner_edit_guard(current_version=4, expected_version=3, source="update",
                                      inbound_prompt_source="create")
    assert err.value.code == "conflict" and "version 3" in err.value.message
    with pytest.raises(ServiceError) as err:
        domain.check_owner_edit_guard(current_version=1, expected_version=None, source="persona",
                                      inbound_prompt_source="dashboard")
    assert err.value.code == "conflict" and "force" in err.value.message
    domain.check_owner_edit_guard(current_version=1, expected_version=None, source="persona",
                                  inbound_prompt_source="dashboard", force=True)
    # Prompts written through the API are not owner edits: a persona replaces them without force.
    for api_source in ("create", "update", "rollback", "persona"):
        domain.check_owner_edit_guard(current_version=1, expected_version=None, source="persona",
                                      inbound_prompt_source=api_source)
    domain.check_owner_edit_guard(current_version=1, expected_version=None, source="update",
                                  inbound_prompt_source="dashboard")


def test_an_update_in_the_dashboard_is_the_owners_edit():
    """A dashboard session (an account, no API key) writes the owner's edit; a key, or a service acting for a
    business, writes an API update."""
    assert update_source(Tenant(account_id="acct", business_ids=("b",))) == "dashboard"
    assert update_source(Tenant(account_id="acct", business_ids=("b",), api_key_id="key")) == "update"
    assert update_source(acting_for("b", "sdr")) == "update"
    assert update_source(Tenant()) == "update"


def test_snapshots_are_redacted_and_hashed_canonically():
    c = domain.replace(config(), provider_config={"transcriber": {"provider": "deepgram", "apiKey": "sk-123"},
                                                  "monitorPlan": {"listenAuthorization": "Bearer x", "n": 1}})
    snap = domain.snapshot(c)
    assert snap["provider_config"]["transcriber"] == {"provider": "deepgram", "apiKey": "[redacted]"}
    assert snap["provider_config"]["monitorPlan"] == {"listenAuthorization": "[redacted]", "n": 1}
    assert "sk-123" not in str(snap)
    assert domain.content_hash(snap) == domain.content_hash(dict(reversed(list(snap.items()))))
    assert domain.content_hash(snap) != domain.content_hash(domain.snapshot(config()))
    # A rollback keeps the current value where the snapshot holds a redaction.
    restored = domain.restore_snapshot(snap, c, assistants.KEPT)
    assert restored.provider_config["transcriber"]["apiKey"] == "sk-123"


def test_persona_compiles_to_a_role_play_prompt_and_opener():
    p = domain.Persona(lead_name="Dana Reyes", scenario="Her water heater leaks.", objective="Book a visit today",
                       callback_number="+14155550123", facts_to_reveal=("Lives in Oakland",),
                       facts_to_withhold=("Has a competing quote",))
    prompt, opening = domain.compile_persona(domain.check_persona(p))
    assert "Dana Reyes" in prompt and "Her water heater leaks." in prompt and "Book a visit today" in prompt
    reveal, withhold = prompt.index("Lives in Oakland"), prompt.index("Has a competing quote")
    assert "only when" in prompt[:reveal] and "never volunteer" in prompt[reveal:withhold]
    assert opening == "Hi, this is Dana Reyes."
    with pytest.raises(ServiceError):
        domain.check_persona(domain.Persona(lead_name=" ", scenario="x"))


def test_e164_is_checked_by_libphonenumber():
    assert normalize_e164("+14152014100") == "+14152014100"
    for bad in ("4152014100", "+1 415 201 4100", "+1415", "+99912345678", "+1415201410012"):
        with pytest.raises(ServiceError) as err:
            normalize_e164(bad)
        assert "phone_number" in err.value.message, bad


def test_number_facts_and_compliance_defaults():
    assert number_facts("+14152014100") == NumberFacts("US", "415")
    assert number_facts("+442079460000") == NumberFacts("GB", "20")
    sms = numbers_domain.check_capabilities(["voice_inbound", "sms_outbound"])
    assert numbers_domain.initial_a2p_status("US", sms) == "not_started"
    assert numbers_domain.initial_a2p_status("GB", sms) == "not_required"
    assert numbers_domain.initial_emergency_status("CA", sms) == "not_set"
    assert numbers_domain.capability_filter("sms") == ("sms_inbound", "sms_outbound")
    with pytest.raises(ServiceError):
        numbers_domain.capability_filter("fax")
    with pytest.raises(ServiceError):
        numbers_domain.check_capabilities(["fax"])


def test_which_business_a_number_request_is_about():
    one = Tenant(account_id="a", business_ids=("b1",))
    two = Tenant(account_id="a", business_ids=("11111111-1111-1111-1111-111111111111",
                                               "22222222-2222-2222-2222-222222222222"))
    assert pick_business(one, None) == "b1"
    with pytest.raises(ServiceError) as err:
        pick_business(two, None)
    assert err.value.code == "bad_request"
    assert pick_business(two, "22222222-2222-2222-2222-222222222222").startswith("2222")
    with pytest.raises(ServiceError) as err:
        pick_business(two, "33333333-3333-3333-3333-333333333333")
    assert err.value.code == "forbidden"


@pytest.mark.parametrize("change, channels", [
    # Outbound falls back to the inbound prompt, greeting and model, and SMS to the inbound prompt and model.
    ({"inbound_prompt": "Answer briefly."}, ["inbound,outbound", "sms"]),
    ({"model": {**agents.DEFAULT_MODEL, "temperature": 0.2}}, ["inbound,outbound", "sms"]),
    ({"first_message": "Hi there!"}, ["inbound,outbound"]),
    ({"outbound_llm": "gpt-4o"}, ["outbound"]),
    ({"sms_prompt": "Text briefly."}, ["sms"]),
    ({"name": "Reception", "voice": {"provider": "11labs", "voiceId": "burt"}}, []),
])
def test_the_gate_tests_each_channel_a_change_alters_once(change, channels):
    before = config()
    targets = domain.gate_targets(before, domain.replace(before, **change))
    assert [name for name, _ in targets] == channels


def test_each_channels_overrides_are_its_own_configuration():
    by_channel = {channel: assistants.overrides(conversation) for channel, conversation in domain.conversations(
        domain.replace(config(), outbound_prompt="Call to confirm.", sms_prompt="Text briefly.",
                       sms_llm="gpt-4o-mini")).items()}
    assert by_channel["inbound"]["model"]["messages"] == [{"role": "system", "content": "You answer calls."}]
    assert by_channel["outbound"]["model"]["messages"][0]["content"] == "Call to confirm."
    assert by_channel["sms"]["model"]["model"] == "gpt-4o-mini"
    assert by_channel["sms"]["firstMessageMode"] == "assistant-waits-for-user" and "firstMessage" not in by_channel["sms"]


def test_the_gate_keeps_the_live_assistants_tools():
    inbound = domain.conversations(config())["inbound"]
    live = assistants.live({"model": {"tools": [{"type": "sms"}], "toolIds": ["t1"], "messages": []}})
    kept = assistants.overrides(domain.replace(inbound, tools=live.tools))
    assert kept["model"]["tools"] == [{"type": "sms"}] and kept["model"]["toolIds"] == ["t1"]
    assert kept["model"]["messages"] == assistants.overrides(inbound)["model"]["messages"]
    assert assistants.overrides(domain.replace(inbound, tools=assistants.live({"model": {}}).tools)) == (
        assistants.overrides(inbound))
