"""Call rules: the status order, what the provider's end reasons mean, the enrichment variables, the
provider's call body and what its status updates and reports change on a call (read by the Vapi adapter)."""
from datetime import UTC, datetime, timedelta

import pytest

from contracts import calls
from contracts.agent_tools import provider_tools
from core.errors import ServiceError
from core.text import optional_text
from providers.voice.port import CallRef, CallReport, OutboundCall, StatusUpdate
from providers.voice.vapi import calls as vapi_calls
from services.calls import domain


def test_a_call_only_moves_forward_and_an_outcome_is_final():
    assert domain.moves_forward("queued", "ringing") and domain.moves_forward("ringing", "in-progress")
    assert domain.moves_forward("queued", "ended") and domain.moves_forward("in-progress", "completed")
    assert domain.moves_forward("ended", "voicemail")
    assert not domain.moves_forward("in-progress", "ringing")  # a late status-update
    assert not domain.moves_forward("completed", "ended") and not domain.moves_forward("completed", "failed")
    assert all(domain.is_final(s) for s in calls.OUTCOMES) and not domain.is_final("ended")
    assert set(calls.STATUSES) >= {"queued", "completed", "ended", "no-answer"}  # the spec's values


@pytest.mark.parametrize("reason, reached, outcome", [
    ("customer-did-not-answer", "ringing", "no-answer"),
    ("customer-busy", "queued", "busy"),
    ("voicemail", "in-progress", "voicemail"),
    ("customer-ended-call", "in-progress", "completed"),
    ("exceeded-max-duration", "in-progress", "completed"),
    ("manually-canceled", "queued", "canceled"),
    ("pipeline-error-openai-llm-failed", "in-progress", "failed"),
    ("call.start.error-get-org", "queued", "failed"),
    ("twilio-failed-to-connect-call", "queued", "failed"),
    ("something-new", "in-progress", "completed"),
    ("something-new", "ringing", "failed"),
    (None, "queued", "failed"),
])
def test_the_providers_end_reasons_map_to_outcomes(reason, reached, outcome):
    assert domain.outcome(vapi_calls.outcome_of(reason), reached) == outcome


def test_time_of_day_is_the_callees_local_time():
    noon_utc = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert domain.time_of_day("+14155550100", noon_utc) == "evening"  # 04:00 in San Francisco: the night is evening
    assert domain.time_of_day("+14155550100", noon_utc + timedelta(hours=5)) == "morning"
    assert domain.time_of_day("+442079460000", noon_utc) == "afternoon"  # London
    assert domain.time_of_day("+61291234567", noon_utc) == "evening"  # 23:00 in Sydney
    assert domain.time_of_day("+14155550100", noon_utc + timedelta(hours=8)) == "afternoon"


def test_enrichment_prefers_the_request_name_and_counts_days_since_the_lead_was_made():
    now = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    lead = {"name": "Dana Reyes", "first_name": None, "score": 62, "status": "contacted", "interaction_count": 2,
            "source": "referral", "created_at": now - timedelta(days=3, hours=1)}
    variables = domain.enrichment(to="+14155550100", now=now, name=None, lead=lead, business_name="Acme",
                                  business_phone="+15125550100")
    assert variables == {"name": "Dana", "lead_score": 62, "lead_status": "contacted", "interaction_count": 2,
                         "lead_source": "referral", "days_since_first_contact": 3, "business_name": "Acme",
                         "business_phone": "+15125550100", "time_of_day": "morning"}
    assert domain.enrichment(to="+14155550100", now=now, name="Sam Ortiz", lead=lead, business_name=None,
                             business_phone=None)["name"] == "Sam"
    assert "lead_score" not in domain.enrichment(to="+14155550100", now=now, name=None, lead=None,
                                                 business_name="Acme", business_phone=None)


def test_new_call_checks():
    assert domain.check_max_duration(None) == 600 and domain.check_max_duration(10) == 10
    for bad in (9, 43201):
        with pytest.raises(ServiceError, match="max_duration"):
            domain.check_max_duration(bad)
    assert optional_text("  ", "name", 10) is None
    with pytest.raises(ServiceError, match="Idempotency-Key"):
        domain.check_idempotency_key("bad\nkey")
    assert domain.request_hash({"a": 1, "b": None}) == domain.request_hash({"b": None, "a": 1})


def outbound_call(**fields) -> OutboundCall:
    return OutboundCall(**{"call_id": "c-1", "assistant_id": "as", "number_id": "pn", "to": "+14155550100",
                           "name": None, "prompt": "Call back.", "first_message": "Hi!",
                           "model": {"provider": "openai", "model": "m"}, "context": None, "max_duration": 300,
                           "variables": {"name": "Dana"}, **fields})


def test_the_provider_call_body():
    body = vapi_calls.call_body(outbound_call(), {"url": "https://x/messages", "credentialId": "cr"})
    assert body == {"assistantId": "as", "phoneNumberId": "pn", "customer": {"number": "+14155550100"},
                    "assistantOverrides": {
                        "firstMessage": "Hi!", "maxDurationSeconds": 300,
                        "model": {"provider": "openai", "model": "m",
                                  "messages": [{"role": "system", "content": "Call back."}]},
                        "variableValues": {"name": "Dana"}, "metadata": {"switchboard_call_id": "c-1"},
                        "server": {"url": "https://x/messages", "credentialId": "cr"},
                        "voicemailDetection": {"provider": "vapi"}}}


def test_a_call_s_model_carries_the_agents_tools_which_the_override_would_otherwise_drop():
    """An override's model replaces the assistant's whole model: without its tools the call could not use them."""
    server = {"url": "https://x/messages", "credentialId": "cr"}
    saved = [{"type": "send_sms"}, {"type": "end_call"}]
    body = vapi_calls.call_body(outbound_call(tools=provider_tools(saved)), server)
    sms, end = body["assistantOverrides"]["model"]["tools"]
    assert (sms["type"], sms["function"]["name"], sms["server"]) == ("function", "send_sms", server)
    assert end == {"type": "endCall"}
    assert body["assistantOverrides"]["model"]["messages"] == [{"role": "system", "content": "Call back."}]
    assert "tools" not in vapi_calls.call_body(outbound_call(), server)["assistantOverrides"]["model"]


def test_an_agent_that_chose_its_own_voicemail_detection_keeps_it_on_its_calls():
    body = vapi_calls.call_body(outbound_call(model={}, variables={}, detect_voicemail=False), {})
    assert "voicemailDetection" not in body["assistantOverrides"]


def test_the_customer_name_is_cut_to_the_providers_40_characters():
    name = "Dana " + "Q" * 60
    body = vapi_calls.call_body(outbound_call(name=name, prompt="p"), {})
    assert body["customer"] == {"number": "+14155550100", "name": name[:40]}


def _update(status: str, at_ms: int | None = None, **extra) -> StatusUpdate:
    """A Vapi status update, as the adapter reads it."""
    update = vapi_calls.read_message({"message": {"type": "status-update", "call": {"id": "pc-1"}, "status": status,
                                                  **({"timestamp": at_ms} if at_ms else {}), **extra}})
    assert isinstance(update, StatusUpdate)
    return update


def _report(fields: dict) -> CallReport:
    """A Vapi end-of-call report's fields, as the adapter reads them."""
    return vapi_calls.report(CallRef("pc-1"), fields)


T0 = 1_780_000_000_000  # ms
AT = {ms: datetime.fromtimestamp(ms / 1000, UTC) for ms in (T0, T0 + 5000)}


def test_status_updates_move_forward_only_and_stop_after_the_report():
    assert domain.after_status("queued", False, False, None, _update("ringing")) == {
        "status": "ringing", "answered": False, "status_at": None}
    assert domain.after_status("ringing", False, False, None, _update("in-progress", T0)) == {
        "status": "in-progress", "answered": True, "status_at": AT[T0]}
    assert domain.after_status("in-progress", True, False, None, _update("ringing", T0)) == {}  # late
    assert domain.after_status("completed", True, True, None, _update("ended", T0)) == {}  # the report came first
    assert domain.after_status("queued", False, False, None, _update("no-such-status", T0)) == {}


def test_in_progress_and_forwarding_follow_each_other_by_the_providers_clock():
    offered = _update("forwarding", T0, destination={"type": "number", "number": "+14155550111"})
    assert domain.after_status("ringing", False, False, None, offered) == {
        "status": "forwarding", "answered": False, "status_at": AT[T0], "forwarded_to": "+14155550111"}
    # Nobody picked up at the forward-to phone: the agent answers later.
    assert domain.after_status("forwarding", False, False, AT[T0], _update("in-progress", T0 + 5000))["status"] == \
        "in-progress"
    # The offer delivered again after the agent answered changes nothing; so does an in-progress older than a
    # mid-call transfer, or one without a time.
    assert domain.after_status("in-progress", True, False, AT[T0 + 5000], offered) == {}
    assert domain.after_status("forwarding", True, False, AT[T0 + 5000], _update("in-progress", T0)) == {}
    assert domain.after_status("forwarding", True, False, AT[T0], _update("in-progress")) == {}
    # A transfer in the middle of a conversation.
    assert domain.after_status("in-progress", True, False, AT[T0], _update("forwarding", T0 + 5000))["status"] == \
        "forwarding"


def test_forwarding_end_reasons():
    assert vapi_calls.outcome_of("call.ringing.hook-executed-transfer") == "completed"
    assert vapi_calls.outcome_of("call.forwarding.no-answer") == "no-answer"
    assert vapi_calls.outcome_of("call.forwarding.operator-busy") == "busy"


def test_a_report_ends_the_call_once_with_what_was_said():
    report = _report({"endedReason": "customer-ended-call", "startedAt": "2026-03-02T10:00:00.000Z",
              "endedAt": "2026-03-02T10:01:30.000Z", "cost": 0.123,
              "artifact": {"transcript": "AI: Hi\nUser: Hello", "recordingUrl": "https://r/1.wav"},
              "analysis": {"summary": "Said hello.", "structuredData": {"name": "Dana"}}})
    changes = domain.after_report("in-progress", True, False, report)
    assert changes["status"] == "completed" and changes["duration"] == 90 and changes["cost_cents"] == 12
    assert changes["summary"] == "Said hello." and changes["structured_data"] == {"name": "Dana"}
    assert domain.after_report("completed", True, True, report) == {}  # a duplicate
    assert "status" not in domain.after_report("canceled", False, False, report)  # an outcome is final
    unanswered = domain.after_report("ringing", False, False, _report({"endedReason": "customer-did-not-answer"}))
    assert unanswered["status"] == "no-answer" and "duration" not in unanswered
    assert domain.after_report("queued", False, False, _report({"cost": "free", "artifact": []}))["cost_cents"] == 0


@pytest.mark.parametrize("artifact, url", [
    ({"recording": {"mono": {"combinedUrl": "https://r/mono.wav"}, "stereoUrl": "https://r/stereo.wav"},
      "recordingUrl": "https://r/old.wav"}, "https://r/mono.wav"),
    ({"recording": {"mono": {"assistantUrl": "https://r/a.wav"}, "stereoUrl": "https://r/stereo.wav"},
      "recordingUrl": "https://r/old.wav"}, "https://r/stereo.wav"),
    ({"recording": {}, "recordingUrl": "https://r/old.wav"}, "https://r/old.wav"),  # the deprecated field
    ({"recording": "https://r/odd.wav", "recordingUrl": " "}, None),
    ({}, None),
])
def test_a_reports_recording_is_its_mono_then_stereo_then_deprecated_url(artifact, url):
    assert vapi_calls.recording_url(artifact) == url
    assert domain.after_report("in-progress", True, False, _report({"artifact": artifact}))["recording_url"] == url


def test_the_events_of_a_move():
    assert domain.events_of_move("ringing", "in-progress", False, True) == ["call.started"]
    assert domain.events_of_move("in-progress", "completed", True, True) == ["call.completed"]
    assert domain.events_of_move("ended", "voicemail", True, True) == ["call.completed"]
    assert domain.events_of_move("ringing", "busy", False, False) == ["call.failed"]
    assert domain.events_of_move("completed", "completed", True, True) == []


def test_transcripts_name_the_agent_and_the_caller():
    assert domain.agent_caller_lines("AI: Hi there\nUser: Hello: it's me\nnoise") == (
        "Agent: Hi there\nCaller: Hello: it's me\nnoise")
    assert domain.check_days(None) == 30 and domain.check_days(90) == 90
    with pytest.raises(ServiceError, match="days"):
        domain.check_days(91)


def test_quality_scores_need_all_four_dimensions_in_range():
    good = {"professionalism": 9, "empathy": 8, "information_gathering": 10, "resolution": 1}
    assert domain.quality({"quality_dimensions": good}) == good
    assert domain.quality({"quality_dimensions": {**good, "resolution": 11}}) is None
    assert domain.quality({"quality_dimensions": {**good, "empathy": True}}) is None
    assert domain.quality({"quality_dimensions": {"professionalism": 9}}) is None
    assert domain.quality(None) is None
