"""The sales pipeline's rules (services.sdr.pipeline_domain): each segment and its boundaries, the config's
defaults and checks, the cadence with its exact next allowed time, and the next action under each toggle and in the
lead's own business hours across a DST change."""
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts import pipeline
from core.compliance import decision as compliance
from core.errors import ServiceError
from services.sdr import pipeline_domain as rules
from services.sdr.pipeline_domain import DAY, Config, Facts, Signals

NOW = datetime(2027, 1, 13, 17, 0, tzinfo=UTC)  # a Wednesday: 12:00 in New York
H = timedelta(hours=1)
CONSENTING = compliance.Standing(consent="opted_in")


def lead(**signals) -> Signals:
    base = {"status": "contacted", "source": "web", "created_at": NOW - 60 * DAY, "updated_at": NOW - 60 * DAY,
            "phone": "+12125550142", "email": "dana@example.com"}
    return Signals(**{**base, **signals})


@pytest.mark.parametrize("name,signals,expected", [
    ("a brand-new lead", {"status": "new", "created_at": NOW - 2 * H}, "speed_to_lead"),
    ("new for exactly a day", {"status": "new", "created_at": NOW - DAY}, "speed_to_lead"),
    ("new for a day and a minute", {"status": "new", "created_at": NOW - DAY - timedelta(minutes=1)}, "cold"),
    ("new but touched", {"status": "new", "created_at": NOW - 2 * H, "touch_count": 1, "last_touch": NOW - H},
     "contacted_no_reply"),
    ("called an hour ago", {"last_inbound_call": NOW - H, "last_inbound": NOW - H}, "fresh_demo_caller"),
    ("called a new lead an hour ago", {"status": "new", "created_at": NOW - 2 * H, "last_inbound_call": NOW - H},
     "fresh_demo_caller"),
    ("called exactly a day ago", {"last_inbound_call": NOW - DAY}, "fresh_demo_caller"),
    ("called two days ago", {"last_inbound_call": NOW - 2 * DAY}, "warm_demo_caller"),
    ("called exactly 7 days ago", {"last_inbound_call": NOW - 7 * DAY}, "warm_demo_caller"),
    ("called 8 days ago", {"last_inbound_call": NOW - 8 * DAY}, "cooling_demo"),
    ("called 30 days ago", {"last_inbound_call": NOW - 30 * DAY}, "cooling_demo"),
    ("called 31 days ago", {"last_inbound_call": NOW - 31 * DAY}, "cold"),
    ("a trial started yesterday, silent", {"source": "trial", "created_at": NOW - DAY}, "new_trial_stuck"),
    ("a trial 3 days in, silent", {"source": "trial", "created_at": NOW - 3 * DAY}, "new_trial_stuck"),
    ("a trial 4 days in, silent", {"source": "trial", "created_at": NOW - 4 * DAY}, "cold"),
    ("a trial that answered 6 days ago", {"source": "trial", "created_at": NOW - 8 * DAY, "first_inbound": NOW - 7 * DAY,
                                          "last_inbound": NOW - 6 * DAY}, "trial_going_dark"),
    ("a trial that answered 5 days ago", {"source": "trial", "created_at": NOW - 8 * DAY,
                                          "first_inbound": NOW - 5 * DAY, "last_inbound": NOW - 5 * DAY}, "cold"),
    ("a trial ending in 3 days", {"source": "trial", "created_at": NOW - 11 * DAY}, "trial_ending"),
    ("a trial that ended", {"source": "trial", "created_at": NOW - 15 * DAY}, "cold"),
    ("touched, no reply", {"touch_count": 2, "last_touch": NOW - 3 * DAY, "last_inbound": NOW - 9 * DAY},
     "contacted_no_reply"),
    ("touched, replied since", {"touch_count": 2, "last_touch": NOW - 3 * DAY, "last_inbound": NOW - 2 * DAY},
     "cold"),
    ("at the cap", {"touch_count": 6, "last_touch": NOW - 3 * DAY}, "exhausted"),
    ("one below the cap", {"touch_count": 5, "last_touch": NOW - 3 * DAY}, "contacted_no_reply"),
    ("lost last week", {"status": "lost", "updated_at": NOW - 7 * DAY}, "churned_recent"),
    ("lost 31 days ago", {"status": "lost", "updated_at": NOW - 31 * DAY}, "cold"),
    ("converted at the cap is not exhausted", {"status": "converted", "touch_count": 6}, "cold"),
    ("a spam lead that called today", {"status": "spam", "last_inbound_call": NOW - H}, "cold"),
])
def test_segments(name, signals, expected):
    assert rules.segment(lead(**signals), Config(), NOW) == expected, name


def test_every_segment_has_a_rule_and_a_test_above():
    assert set(pipeline.SEGMENTS) == {*rules.PREFERRED, "exhausted", "churned_recent", "cold"}


def test_the_config_defaults_are_off_and_careful_and_changes_are_checked():
    config = Config()
    assert (config.enabled, config.auto_call, config.auto_sms, config.auto_email) == (False, False, False, False)
    assert (config.min_touch_gap_hours, config.max_touches, config.business_hours_start,
            config.business_hours_end) == (48, 6, 9, 17)
    changed = rules.changed_config(config, {"enabled": True, "max_touches": 3, "auto_sms": None})
    assert changed.enabled and changed.max_touches == 3 and changed.auto_sms is False
    for bad, field in (({"max_touches": 0}, "max_touches"), ({"business_hours_start": 24}, "business_hours_start"),
                       ({"business_hours_start": 17}, "business_hours_start"), ({"enabled": "yes"}, "enabled"),
                       ({"min_touch_gap_hours": 1.5}, "min_touch_gap_hours"), ({"colour": "red"}, "colour")):
        with pytest.raises(ServiceError) as refused:
            rules.changed_config(config, bad)
        assert refused.value.code == "invalid_request" and field in refused.value.message


def test_cadence_names_the_exact_instant_of_the_next_touch():
    touched = NOW - 5 * H
    stop = rules.cadence_stop(lead(touch_count=1, last_touch=touched), Config(), NOW)
    assert stop.next_allowed_at == touched + 48 * H and "48 hours apart" in stop.reason
    assert rules.cadence_stop(lead(touch_count=1, last_touch=NOW - 48 * H), Config(), NOW) is None
    capped = rules.cadence_stop(lead(touch_count=6, last_touch=NOW - 9 * DAY), Config(), NOW)
    assert capped.next_allowed_at is None and "cap is 6" in capped.reason


ALL_AUTO = Config(enabled=True, auto_call=True, auto_sms=True, auto_email=True)


def facts(phone: str = "+12125550142", **callee) -> Facts:
    return Facts(CONSENTING, compliance.Callee(phone, **callee))


@pytest.mark.parametrize("config,expected", [
    (ALL_AUTO, "call"),
    (replace(ALL_AUTO, auto_call=False), "sms"),
    (replace(ALL_AUTO, auto_call=False, auto_sms=False), "email"),
    (Config(enabled=True), "escalate"),
])
def test_the_next_action_follows_the_auto_toggles(config, expected):
    fresh = lead(status="new", created_at=NOW - H)
    action = rules.next_action(fresh, "speed_to_lead", config, facts(), NOW)
    assert action.action == expected, action
    if expected == "escalate":
        assert "auto_call is off" in action.reason


def test_a_lead_without_a_phone_is_emailed_or_escalated():
    phoneless = lead(status="new", created_at=NOW - H, phone=None)
    assert rules.next_action(phoneless, "speed_to_lead", ALL_AUTO, Facts(), NOW).action == "email"
    nothing = replace(phoneless, email=None)
    action = rules.next_action(nothing, "speed_to_lead", ALL_AUTO, Facts(), NOW)
    assert action.action == "escalate" and "neither the phone nor the email" in action.reason


def test_closed_paused_exhausted_and_cooling_cadence():
    assert rules.next_action(lead(status="spam"), "cold", ALL_AUTO, facts(), NOW).action == "skip"
    assert "paused" in rules.next_action(lead(paused=True), "cold", ALL_AUTO, facts(), NOW).reason
    assert rules.next_action(lead(touch_count=6), "exhausted", ALL_AUTO, facts(), NOW).action == "escalate"
    waiting = rules.next_action(lead(touch_count=1, last_touch=NOW - H, last_inbound_call=NOW - 2 * DAY),
                                "warm_demo_caller", ALL_AUTO, facts(), NOW)
    assert waiting.action == "skip" and waiting.not_before == NOW + 47 * H


def test_the_next_action_counts_the_ledgers_touches_under_the_configured_caps():
    fresh = lead(status="new", created_at=NOW - H)
    texted = (compliance.Counted("sms", NOW - 2 * H),)
    one_each = compliance.Policy(calls_per_24h=1, texts_per_24h=1)
    # Under the platform's configured caps (not the defaults): a call is still free, a text is not.
    calls = replace(facts(), recent=texted, policy=one_each)
    assert rules.next_action(fresh, "speed_to_lead", ALL_AUTO, calls, NOW).action == "call"
    texts = rules.next_action(fresh, "speed_to_lead", replace(ALL_AUTO, auto_call=False), calls, NOW)
    assert texts.action == "email" and "frequency" in texts.reason, texts
    assert rules.next_action(fresh, "speed_to_lead", replace(ALL_AUTO, auto_call=False),
                             replace(calls, policy=compliance.Policy()), NOW).action == "sms"


def test_a_do_not_call_entry_is_never_proposed():
    listed = Facts(compliance.Standing(consent="opted_in", business_dnc_since=NOW - DAY),
                   compliance.Callee("+12125550142"))
    action = rules.next_action(lead(touch_count=1, last_touch=NOW - 3 * DAY), "contacted_no_reply", ALL_AUTO,
                               listed, NOW)
    assert action.action == "email", action  # the text is refused; the email is the fallback


@pytest.mark.parametrize("now,expected,not_before", [
    # 08:30 EDT on Monday 2027-03-15 (12:30Z): legal, but before the 9:00 business hours; 9:00 EDT is 13:00Z.
    (datetime(2027, 3, 15, 12, 30, tzinfo=UTC), "skip", datetime(2027, 3, 15, 13, 0, tzinfo=UTC)),
    # The same instant a week earlier is 07:30 EST: 9:00 EST is 14:00Z.
    (datetime(2027, 3, 8, 12, 30, tzinfo=UTC), "skip", datetime(2027, 3, 8, 14, 0, tzinfo=UTC)),
    # 13:30Z on the Monday after the change is 09:30 EDT: inside the business hours.
    (datetime(2027, 3, 15, 13, 30, tzinfo=UTC), "call", None),
])
def test_business_hours_are_the_leads_own_across_a_dst_change(now, expected, not_before):
    fresh = lead(status="new", created_at=now - H)
    action = rules.next_action(fresh, "speed_to_lead", replace(ALL_AUTO, auto_sms=False, auto_email=False),
                               facts(), now)
    assert (action.action, action.not_before) == (expected, not_before), action
    if expected == "skip":
        assert action.reason.startswith("a call waits: ")


def test_the_pipeline_reads_the_columns_in_the_order_of_the_signals():
    from dataclasses import fields

    from services.sdr.schema import SIGNAL_COLUMNS
    assert [c.removesuffix("_at") for c in SIGNAL_COLUMNS] == [f.name.removesuffix("_at") for f in fields(Signals)]


# -- what the pipeline stores: a lead's segment and next action hold until steady_until ---------------------------

@st.composite
def signals(draw) -> Signals:
    """A consistent lead whose times lie within the 40 days before NOW, where every boundary of the segment table
    falls: touched when it has touches, its inbound times from its inbound calls and texts."""
    ago = st.one_of(st.integers(min_value=0, max_value=40 * 24), st.integers(min_value=0, max_value=4 * 24)).map(
        lambda h: NOW - timedelta(hours=h))  # often within the last four days, where most boundaries fall
    touches = draw(st.integers(min_value=0, max_value=7))
    calls, texts = draw(st.lists(ago, max_size=2)), draw(st.lists(ago, max_size=2))
    inbound = calls + texts
    return Signals(status=draw(st.sampled_from(("new", "contacted", "qualified", "lost", "converted"))),
                   source=draw(st.sampled_from(("web", "trial"))), created_at=draw(ago), updated_at=draw(ago),
                   touch_count=touches, last_touch=draw(ago) if touches else None, paused=draw(st.booleans()),
                   phone=draw(st.sampled_from((None, "+12125550142"))), email=draw(st.sampled_from((None, "a@b.co"))),
                   last_inbound_call=max(calls, default=None), last_inbound=max(inbound, default=None),
                   first_inbound=min(inbound, default=None))


def _stored(lead_: Signals, config: Config, at: datetime) -> tuple[str, str]:
    segment = rules.segment(lead_, config, at)
    return segment, rules.next_action(lead_, segment, config, None, at).action


@settings(max_examples=300, deadline=None)
@given(signals(), st.sampled_from((Config(), ALL_AUTO, replace(ALL_AUTO, auto_call=False, max_touches=3))),
       st.floats(min_value=0, max_value=1))
def test_the_stored_segment_and_next_action_hold_until_steady_until(lead_, config, share):
    # Walk the instants steady_until gives, from NOW until none is left: the stored values hold just before each
    # (where a boundary missing from steady_until would show) and at a point inside.
    at, µs = NOW, timedelta(microseconds=1)
    for _ in range(30):
        until = rules.steady_until(lead_, config, at)
        held = _stored(lead_, config, at)
        end = until if until is not None else at + 45 * DAY
        if end > at:  # (an instant equal to `at` leaves nothing to hold)
            assert _stored(lead_, config, min(at + (end - at) * share, end - µs)) == held
            assert _stored(lead_, config, end - µs) == held
        if until is None:
            return
        at = until + µs
    pytest.fail("steady_until never settles")


def test_steady_until_is_the_next_boundary():
    fresh = lead(status="new", created_at=NOW - 2 * H)
    assert rules.steady_until(fresh, Config(), NOW) == NOW + 22 * H  # speed_to_lead ends a day after creation
    touched = lead(touch_count=1, last_touch=NOW - H)
    assert rules.steady_until(touched, Config(), NOW) == NOW + 47 * H  # the cadence's 48-hour gap
    assert rules.steady_until(lead(), Config(), NOW) is None  # 60 days old, never touched nor heard from
    assert rules.changes_next_actions(Config(), replace(Config(), auto_sms=True))
    assert not rules.changes_next_actions(Config(), replace(Config(), business_hours_start=8, enabled=True))
