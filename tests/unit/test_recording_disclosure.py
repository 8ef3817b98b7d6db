"""The recording disclosure as rules: which states need every party's consent, where a callee may be, the agent's
setting and its validation, the provider's consent plan in a call's body, the answer an end-of-call report gives,
and the simulator's checks of the plan's shape."""
from datetime import UTC, datetime

import pytest

from core.compliance import recording_rules as recording
from core.compliance import zones
from core.compliance.decision import Callee, Standing, Touch, decide
from core.compliance.rules import CALL, SMS
from core.errors import ServiceError
from providers.voice.port import CallRef, OutboundCall
from providers.voice.vapi import assistants
from providers.voice.vapi import calls as vapi_calls
from providers.voice.vapi.simulator import validation
from services.agents import domain as agents
from services.calls import domain as calls

CA, NY, PA, TOLL_FREE = "+14155550123", "+12125550123", "+12155550123", "+18005550123"


@pytest.mark.parametrize("phone, lead_state, states", [
    (CA, None, ["CA"]), (NY, None, ["NY"]), (PA, None, ["PA"]), (NY, "Florida", ["NY", "FL"]),
    (CA, "ca", ["CA"]), (TOLL_FREE, None, []), (TOLL_FREE, "WA", ["WA"]), ("+442071838750", None, []),
])
def test_the_states_a_number_and_a_lead_place_the_other_party_in(phone, lead_state, states):
    assert zones.possible_states(phone, lead_state) == states


def test_a_state_that_needs_every_partys_consent_has_the_disclosure_spoken_with_its_statute():
    decided = recording.disclosure(["CA"])
    assert (decided.spoken, decided.reason) == (True, "all_party_consent")
    assert decided.record() == {"spoken": True, "reason": "all_party_consent", "states": ["CA"],
                                "rules": [{"state": "CA", "statute": "Cal. Penal Code §§ 632(a), 632.7(a)"}]}
    assert recording.disclosure(["PA"]).rules[0].statute == "18 Pa.C.S. §§ 5703, 5704(4)"


def test_a_one_party_state_has_none_and_the_leads_state_counts_too():
    assert recording.disclosure(["NY"]).record() == {"spoken": False, "reason": "one_party_consent", "states": ["NY"],
                                                     "rules": []}
    both = recording.disclosure(["NY", "FL"])
    assert both.spoken and [r.state for r in both.rules] == ["FL"]


def test_a_party_no_state_places_hears_it_and_the_agents_mode_decides_the_rest():
    assert recording.disclosure([]).reason == "unplaced" and recording.disclosure([]).spoken
    off = recording.disclosure(["CA"], recording.OFF)
    assert (off.spoken, off.reason, [r.state for r in off.rules]) == (False, "off", ["CA"])  # what it would need
    assert recording.disclosure([], recording.OFF).spoken is False
    assert recording.disclosure(["NY"], recording.ALWAYS).reason == "always"
    assert recording.disclosure(["CA"], recording.ALWAYS).reason == "all_party_consent"


def test_the_table_holds_the_all_party_states_once_each_with_a_statute():
    states = [r.state for r in recording.ALL_PARTY_CONSENT]
    assert sorted(states) == ["CA", "CT", "DE", "FL", "IL", "MA", "MD", "MT", "NH", "NV", "OR", "PA", "WA"]
    assert all(s in zones.US_STATE_ZONES for s in states)
    assert all(r.statute.strip() for r in recording.ALL_PARTY_CONSENT)


def test_the_call_decision_logs_what_the_law_asks_of_the_recording():
    at = datetime(2026, 3, 4, 18, 0, tzinfo=UTC)  # a Wednesday, 10:00 in California, 13:00 in New York
    to_ca = decide(Touch(CALL, at), Callee(CA), Standing(consent="opted_in"))
    assert to_ca.inputs["recording_disclosure"]["spoken"] is True
    assert to_ca.inputs["recording_disclosure"]["rules"][0]["state"] == "CA"
    to_ny = decide(Touch(CALL, at), Callee(NY, lead_state="PA"), Standing(consent="opted_in"))
    assert to_ny.inputs["recording_disclosure"]["states"] == ["NY", "PA"]
    assert "recording_disclosure" not in decide(Touch(SMS, at), Callee(CA), Standing(consent="opted_in")).inputs


# -- the agent's setting -------------------------------------------------------------------------

def test_the_setting_keeps_only_what_differs_from_the_defaults():
    assert agents.check_recording_disclosure({}) == {}
    assert agents.check_recording_disclosure({"mode": "auto", "consent": "stay-on-line"}) == {}
    kept = agents.check_recording_disclosure({"mode": "off", "message": "  We record calls.  "})
    assert kept == {"mode": "off", "message": "We record calls."}
    assert agents.check_recording_disclosure({"consent": "verbal"}, kept) == {**kept, "consent": "verbal"}
    assert agents.check_recording_disclosure({"message": None}, kept) == {"mode": "off"}  # back to the default words


def test_the_wording_in_force_is_the_agents_own_or_its_consent_types_default():
    assert agents.disclosure_setting({}) == recording.Setting(
        "auto", "This call is recorded for quality and training purposes. If you do not wish to be recorded, please "
        "hang up now.", "stay-on-line")
    assert agents.disclosure_setting({"consent": "verbal"}).message == recording.DEFAULT_MESSAGES["verbal"]
    assert agents.disclosure_setting({"message": "Recorded."}).message == "Recorded."


@pytest.mark.parametrize("given, said", [
    ([], "must be an object"),
    ({"tone": "warm"}, "accepts mode, message and consent only (got tone)"),
    ({"mode": "sometimes"}, "recording_disclosure.mode must be one of auto, always, off"),
    ({"consent": "implied"}, "recording_disclosure.consent must be one of stay-on-line, verbal"),
    ({"message": "   "}, "recording_disclosure.message must not be empty"),
    ({"message": "x" * 1001}, "recording_disclosure.message must be at most 1000 characters"),
    ({"message": 42}, "recording_disclosure.message must be a string"),
])
def test_a_bad_setting_is_refused_saying_what_to_fix(given, said):
    with pytest.raises(ServiceError) as refused:
        agents.check_recording_disclosure(given)
    assert refused.value.code == "invalid_request" and said in refused.value.message


def test_the_setting_is_versioned_configuration_that_never_reaches_the_assistant():
    config = agents.new_config("Front desk", "Answer.", None, {}, {}, {"mode": "off"})
    assert config.recording_disclosure == {"mode": "off"}
    change = agents.apply_update(config, texts={}, recording_disclosure={"mode": "auto"})
    assert change.changed == ["recording_disclosure"] and change.provider_changed == []
    assert "compliancePlan" not in assistants.create_body(agents.assistant_spec(config, "a", "b"))
    assert agents.initial_change(agents.new_config("A", "p", None, {}, {})).changed == ["name", "inbound_prompt",
                                                                                         "first_message", "model"]


# -- the provider's body -------------------------------------------------------------------------

def _body(spoken: recording.Setting | None):
    return vapi_calls.call_body(OutboundCall(
        call_id="c", assistant_id="as", number_id="pn", to=CA, name=None, prompt="p", first_message="Hi, it's Acme.",
        model={"provider": "openai", "model": "gpt-4.1"}, context=None, max_duration=600, variables={},
        disclosure=spoken), {"url": "https://x"})


def test_an_outbound_call_to_california_carries_the_consent_plan_before_its_first_message():
    kept, spoken = calls.recording_disclosure(["CA"], recording.Setting(), outbound=True)
    overrides = _body(spoken)["assistantOverrides"]
    assert overrides["compliancePlan"] == {"recordingConsentPlan": {
        "type": "stay-on-line", "message": recording.DEFAULT_MESSAGES["stay-on-line"],
        "firstMessageMode": "assistant-waits-for-user"}}
    assert overrides["firstMessage"] == "Hi, it's Acme."  # still the opening of the conversation
    assert kept["spoken"] and kept["consent_type"] == "stay-on-line" and kept["rules"][0]["state"] == "CA"
    assert validation.call(_body(spoken)) == []


def test_a_verbal_plan_ends_the_call_on_a_no_and_an_inbound_one_speaks_at_once():
    _, spoken = calls.recording_disclosure(["PA"], recording.Setting(consent="verbal", message="OK to record?"),
                                           outbound=False)
    assert spoken is not None
    plan = vapi_calls.compliance_plan(spoken, outbound=False)
    assert plan == {"recordingConsentPlan": {"type": "verbal", "message": "OK to record?",
                                             "declineTool": {"type": "endCall"}}}
    assert validation.compliance_plan(plan) == []


def test_no_plan_where_the_law_asks_none_or_the_agent_turned_it_off():
    kept, spoken = calls.recording_disclosure(["NY"], recording.Setting(), outbound=True)
    assert spoken is None and kept == {"spoken": False, "reason": "one_party_consent", "states": ["NY"], "rules": [],
                                     "consent_type": None}
    assert "compliancePlan" not in _body(spoken)["assistantOverrides"]
    kept, spoken = calls.recording_disclosure(["CA"], recording.Setting(mode="off"), outbound=True)
    assert spoken is None and kept["reason"] == "off"


@pytest.mark.parametrize("report, consent", [
    ({"compliance": {"recordingConsent": {"type": "verbal", "grantedAt": "2026-03-04T18:00:05.000Z"}}},
     {"type": "verbal", "granted_at": "2026-03-04T18:00:05+00:00"}),
    ({"compliance": {"recordingConsent": {"type": "stay-on-line"}}}, {"type": "stay-on-line", "granted_at": None}),
    ({"compliance": {}}, None), ({}, None), ({"compliance": "yes"}, None),
])
def test_the_report_says_whether_consent_was_granted(report, consent):
    read = vapi_calls.report(CallRef("pc-1"), report)
    assert calls.recording_consent(read.recording_consent) == consent
    assert calls.after_report("in-progress", True, False, read)["recording_consent"] == consent


# -- the simulator checks the plan as the provider does -----------------------------------------------

@pytest.mark.parametrize("plan, error", [
    ("on", "compliancePlan must be an object"),
    ({"recordingConsent": {}}, "property compliancePlan.recordingConsent should not exist"),
    ({"recordingConsentPlan": {"type": "implied", "message": "m"}},
     "compliancePlan.recordingConsentPlan.type must be one of the following values: stay-on-line, verbal"),
    ({"recordingConsentPlan": {"type": "stay-on-line"}}, "compliancePlan.recordingConsentPlan.message must be a string"),
    ({"recordingConsentPlan": {"type": "stay-on-line", "message": "m" * 1001}},
     "compliancePlan.recordingConsentPlan.message must be shorter than or equal to 1000 characters"),
    ({"recordingConsentPlan": {"type": "stay-on-line", "message": "m", "declineTool": {"type": "endCall"}}},
     "property compliancePlan.recordingConsentPlan.declineTool should not exist"),
    ({"recordingConsentPlan": {"type": "stay-on-line", "message": "m", "waitSeconds": 7}},
     "compliancePlan.recordingConsentPlan.waitSeconds must be a number from 1 to 6"),
    ({"recordingConsentPlan": {"type": "verbal", "message": "m", "firstMessageMode": "later"}},
     "compliancePlan.recordingConsentPlan.firstMessageMode must be one of the following values"),
])
def test_the_simulator_refuses_a_plan_of_the_wrong_shape(plan, error):
    errors = validation.compliance_plan(plan)
    assert any(e.startswith(error) for e in errors), errors
    assert validation.assistant({"compliancePlan": plan}) == errors
