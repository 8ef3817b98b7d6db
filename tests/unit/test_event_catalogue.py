"""The event catalogue: types, payload messages, and the JSON partners receive."""
from datetime import UTC

import pytest

from core import events
from switchboard.v1 import events_pb2


def test_partners_are_offered_the_specs_events_and_the_communication_runs_own():
    assert events.PARTNER_EVENT_TYPES == (
        "lead.created", "lead.scored", "call.received", "call.started", "call.completed", "call.failed",
        "sms.received", "sms.sent", "sms.delivered", "sms.failed", "voicemail.received",
        "dispatcher.briefing_created", "phone_number.assigned", "phone_number.released", "workspace.paused",
        "workspace.canceled", "workspace.teardown_completed", "communication.touch_completed",
        "communication.touch_failed", "communication.touch_deferred", "communication.run_ended", "booking.created",
        "booking.rescheduled", "booking.canceled", "webhook.test", "erasure.completed")
    assert "agent.prompt_changed" not in events.PARTNER_EVENT_TYPES
    payloads = [e.payload for e in events.CATALOGUE if e.payload is not None]
    assert len(set(payloads)) == len(payloads), "one payload message per event type"
    assert len({e.type for e in events.CATALOGUE}) == len(events.CATALOGUE)


def test_data_keeps_every_key_and_null_for_unset_optionals():
    lead = events_pb2.LeadCreated(id="l1", name="Ann", phone=None, source="web")
    assert events.type_of(lead) == "lead.created"
    assert events.to_data(lead) == {"id": "l1", "name": "Ann", "email": None, "phone": None, "source": "web"}
    scored = events_pb2.LeadScored(lead_id="l1", score=0, confidence="low", explanation="", factors=[])
    assert events.to_data(scored) == {"lead_id": "l1", "score": 0, "confidence": "low", "explanation": "",
                                      "factors": []}
    assert isinstance(events.to_data(events_pb2.AgentPromptChanged(version=3))["version"], int)


def test_consumers_parse_data_into_the_message():
    vm = events.parse("voicemail.received", {"from_number": "+14155550123", "lead_id": None, "extra": 1})
    assert vm.from_number == "+14155550123" and not vm.HasField("lead_id")
    with pytest.raises(ValueError, match="VoicemailReceived"):
        events.parse("voicemail.received", {"from_number": 14155550123, "transcript": ["not", "text"]})
    with pytest.raises(LookupError):
        events.type_of(events_pb2.Event())


def test_one_envelope_for_the_bus_and_the_webhook_body():
    from datetime import datetime

    from core.events import Envelope

    event = Envelope("e-1", "lead.created", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "b-1", {"score": 45})
    assert Envelope.from_json(event.to_json()) == event
    assert event.webhook_body() == (b'{"event_id":"e-1","event":"lead.created","timestamp":"2026-01-02T03:04:05Z",'
                                    b'"occurred_at":"2026-01-02T03:04:05Z","business_id":"b-1","data":{"score":45}}')
    with pytest.raises(ValueError):
        Envelope.from_json({"event_id": "e-1", "type": "lead.created"})
