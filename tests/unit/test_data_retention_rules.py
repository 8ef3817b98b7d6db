"""The retention a business sets (services.accounts.data_retention_rules): defaults, limits, resets, cutoffs and
when a business is due again; and the calls service's rules of what a call past retention loses
(services.calls.data_retention)."""
from datetime import UTC, datetime, timedelta

import pytest

from contracts.accounts import RETENTION_DAYS
from core.errors import ServiceError
from services.accounts import data_retention_rules as rules
from services.calls import data_retention as calls_retention

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
DEFAULTS = {"recordings_days": 365, "transcripts_days": 365, "message_bodies_days": 365, "webhook_events_days": 30,
            "evidence_days": 1461}


def test_every_kind_is_answered_with_the_default_unless_set():
    assert rules.effective({}) == rules.effective(None) == DEFAULTS
    assert rules.effective({"recordings_days": 1}) == {**DEFAULTS, "recordings_days": 1}


def test_an_update_changes_the_kinds_named_and_zero_sets_one_back_to_its_default():
    stored = rules.changed({}, {"recordings_days": 30, "evidence_days": 3650})
    assert stored == {"recordings_days": 30, "evidence_days": 3650}
    assert rules.changed(stored, {"transcripts_days": 90}) == {**stored, "transcripts_days": 90}
    assert rules.changed(stored, {"recordings_days": 0}) == {"evidence_days": 3650}
    assert rules.changed(stored, {"webhook_events_days": 0}) == stored  # a default reset again: nothing stored


@pytest.mark.parametrize("kind, days", [
    ("recordings_days", -1), ("recordings_days", 3651), ("webhook_events_days", 10**9),
    ("evidence_days", 1460), ("evidence_days", 1), ("transcripts_days", 1.5), ("transcripts_days", "30"),
    ("message_bodies_days", True), ("message_bodies_days", None)])
def test_a_value_out_of_range_or_not_whole_is_refused_naming_the_kind_and_its_range(kind, days):
    with pytest.raises(ServiceError) as refused:
        rules.changed({}, {kind: days})
    default, least, most = RETENTION_DAYS[kind]
    assert refused.value.code == "validation_error"
    assert f"retention.{kind}" in refused.value.message
    assert f"{least} to {most} days" in refused.value.message and f"default, {default}" in refused.value.message


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(ServiceError) as refused:
        rules.changed({}, {"voicemails_days": 3})
    assert refused.value.code == "validation_error" and "recordings_days" in refused.value.message


def test_the_limits_hold_at_their_edges():
    for kind, (_, least, most) in RETENTION_DAYS.items():
        assert rules.changed({}, {kind: least}) == {kind: least}
        assert rules.changed({}, {kind: most}) == {kind: most}


def test_cutoffs_are_each_kinds_days_before_now():
    cutoffs = rules.cutoffs_of({"recordings_days": 1}, NOW)
    assert cutoffs.recordings_before == NOW - timedelta(days=1)
    assert cutoffs.transcripts_before == NOW - timedelta(days=365)
    assert cutoffs.webhook_events_before == NOW - timedelta(days=30)
    assert cutoffs.evidence_before == NOW - timedelta(days=1461)


def test_a_business_is_due_a_day_later_at_once_with_more_left_and_after_the_retry_when_a_service_failed():
    retry = timedelta(minutes=10)
    assert rules.next_run(NOW, more=False, failed=False, retry=retry) == NOW + timedelta(days=1)
    assert rules.next_run(NOW, more=True, failed=False, retry=retry) == NOW
    assert rules.next_run(NOW, more=True, failed=True, retry=retry) == NOW
    assert rules.next_run(NOW, more=False, failed=True, retry=retry) == NOW + retry


def call(created_days_ago: float, **columns) -> dict:
    return {"created_at": NOW - timedelta(days=created_days_ago), "recording_url": None, "transcript": None,
            "summary": None, "structured_data": None, **columns}


def test_a_call_past_its_recordings_cutoff_loses_its_recording_and_keeps_its_transcript():
    old = call(2, recording_url="https://rec/1.wav", transcript="AI: hi", summary="s")
    kinds = calls_retention.kinds_past(old, NOW - timedelta(days=1), NOW - timedelta(days=365))
    assert kinds == {"recording"}
    changes = calls_retention.clearing(old, kinds)
    assert set(changes) == {"recording_url", "updated_at"} and changes["recording_url"] is None


def test_a_call_past_its_transcripts_cutoff_loses_its_transcript_and_its_recording_with_the_providers_call():
    old = call(40, recording_url="https://rec/1.wav", transcript="AI: hi", summary="s", structured_data={"a": 1})
    kinds = calls_retention.kinds_past(old, NOW - timedelta(days=365), NOW - timedelta(days=30))
    assert kinds == {"transcript"}
    changes = calls_retention.clearing(old, kinds)
    assert {k for k, v in changes.items() if v is None} == {"recording_url", "transcript", "summary",
                                                            "structured_data"}


def test_a_recent_call_or_one_already_cleared_changes_nothing():
    assert calls_retention.kinds_past(call(0.5, recording_url="u"), NOW - timedelta(days=1), None) == set()
    assert calls_retention.clearing(call(2), {"recording", "transcript"}) == {}
