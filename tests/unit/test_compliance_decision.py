"""The outbound compliance decision (core.compliance.decision): who may never be contacted, consent bases, the
callee's zones (intersection, fallbacks, DST), the federal window, every state row, holidays, business hours and
the frequency cap."""
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.compliance import decision as d
from core.compliance import zones
from core.compliance.rules import CALL, SMS, StateRule, hours
from core.compliance.state_rules import STATE_RULES
from core.errors import ServiceError

OPTED_IN = d.Standing(consent="opted_in")
NY, LA, CHICAGO = ZoneInfo("America/New_York"), ZoneInfo("America/Los_Angeles"), ZoneInfo("America/Chicago")
NY_PHONE, LA_PHONE = "+12125550123", "+14155550123"
TOLL_FREE = "+18005550123"  # libphonenumber places it in every zone of +1: only other facts place the callee
NO_CAP = d.Policy(calls_per_24h=100)


def at(zone: ZoneInfo, y: int, mo: int, day: int, h: int, mi: int = 0) -> datetime:
    return datetime(y, mo, day, h, mi, tzinfo=zone).astimezone(UTC)


def call(when: datetime, phone: str = NY_PHONE, standing: d.Standing = OPTED_IN, policy: d.Policy = NO_CAP,
         channel: str = CALL, **callee) -> d.Decision:
    recent = tuple(t if isinstance(t, d.Counted) else d.Counted(CALL, t) for t in callee.pop("recent", ()))
    return d.decide(d.Touch(channel, when, sender=LA_PHONE, business_hours=callee.pop("business_hours", None),
                            recent=recent),
                    d.Callee(phone=phone, **callee), standing, policy)


# -- who may not be contacted ----------------------------------------------------------------------

def test_do_not_call_lists_and_a_do_not_contact_lead_refuse_before_anything_else():
    noon = at(NY, 2026, 6, 10, 12)
    platform = call(noon, standing=d.Standing(platform_dnc=True, consent="opted_in"))
    assert (platform.outcome, platform.code, platform.rule) == ("refuse", "number_on_dnc", "platform_dnc")
    listed = call(noon, standing=d.Standing(business_dnc_since=datetime(2026, 5, 1, tzinfo=UTC)))
    assert listed.code == "number_on_dnc" and "since 2026-05-01" in listed.message and "DELETE /api/v1/dnc" in \
        listed.message
    lead = call(noon, lead_id="L1", lead_status="do_not_contact")
    assert (lead.code, lead.rule) == ("number_on_dnc", "lead_do_not_contact") and "L1" in lead.message
    sms = call(noon, channel=SMS, lead_id="L1", lead_status="do_not_contact")
    assert sms.code == "number_on_dnc" and "cannot be texted" in sms.message
    # A refusal is the spec's error with the message.
    assert isinstance(lead.refusal(), ServiceError) and lead.refusal().code == "number_on_dnc"


def test_an_opt_out_blocks_calls_as_well_as_texts():
    out = call(at(NY, 2026, 6, 10, 12), standing=d.Standing(consent="opted_out"))
    assert (out.code, out.rule) == ("number_opted_out", "opted_out") and "START" in out.message


@pytest.mark.parametrize("consent, status, channel, basis", [
    ("opted_in", None, CALL, "opt_in"), ("conversational", None, CALL, "inbound_contact"),
    ("none", "converted", CALL, "existing_relationship"), ("opted_in", None, SMS, "opt_in"),
    ("conversational", None, SMS, "inbound_contact")])
def test_the_consent_basis_is_recorded(consent, status, channel, basis):
    allowed = call(at(NY, 2026, 6, 10, 12), standing=d.Standing(consent=consent), lead_status=status,
                   channel=channel)
    assert allowed.allowed and allowed.inputs["consent_basis"] == basis


def test_without_a_consent_basis_calls_and_texts_are_refused_saying_how_to_get_one():
    no_call = call(at(NY, 2026, 6, 10, 12), standing=d.Standing(), lead_status="qualified")
    assert (no_call.code, no_call.rule) == ("number_opted_out", "no_consent_call")
    assert "POST /api/v1/sms/consent" in no_call.message and "converted" in no_call.message
    no_text = call(at(NY, 2026, 6, 10, 12), standing=d.Standing(), lead_status="converted", channel=SMS)
    assert (no_text.code, no_text.rule) == ("number_opted_out", "no_consent_sms")


# -- the federal window and DST --------------------------------------------------------------------

def test_the_federal_window_defers_to_the_exact_opening_and_allows_until_nine():
    # New York has no state row: the federal window alone.
    early = call(at(NY, 2026, 6, 10, 7, 59))
    assert (early.outcome, early.code, early.rule) == ("defer", "tcpa_violation", "federal_hours")
    assert early.not_before == at(NY, 2026, 6, 10, 8) and early.source == "47 CFR 64.1200(c)(1)"
    assert early.message.startswith("quiet hours: it is Wednesday 07:59 in America/New_York")
    assert "08:00-21:00" in early.message and "next at 2026-06-10T12:00Z" in early.message
    assert call(at(NY, 2026, 6, 10, 8)).allowed
    assert call(at(NY, 2026, 6, 10, 20, 59)).allowed
    late = call(at(NY, 2026, 6, 10, 21))
    assert late.not_before == at(NY, 2026, 6, 11, 8)


def test_spring_forward_opens_at_eight_daylight_time():
    # 2026-03-08 02:00 EST does not exist in New York; 08:00 that morning is EDT (12:00 UTC), not 13:00.
    night = call(datetime(2026, 3, 8, 6, 30, tzinfo=UTC))  # 01:30 EST
    assert night.not_before == datetime(2026, 3, 8, 12, 0, tzinfo=UTC)
    assert call(datetime(2026, 3, 8, 12, 0, tzinfo=UTC)).allowed
    # A business whose own hours start inside the missing hour: still at the federal opening.
    gap = call(datetime(2026, 3, 8, 6, 30, tzinfo=UTC), business_hours=hours(2, 22))
    assert gap.not_before == datetime(2026, 3, 8, 12, 0, tzinfo=UTC)


def test_fall_back_opens_at_eight_standard_time_and_the_repeated_hour_is_night():
    # 2026-11-01: 01:00-02:00 happens twice in New York; both are outside the window.
    repeated = call(datetime(2026, 11, 1, 6, 30, tzinfo=UTC))  # the second 01:30 (EST)
    assert repeated.not_before == datetime(2026, 11, 1, 13, 0, tzinfo=UTC)  # 08:00 EST
    evening = call(datetime(2026, 11, 1, 1, 30, tzinfo=UTC))  # 21:30 EDT on Oct 31
    assert evening.not_before == datetime(2026, 11, 1, 13, 0, tzinfo=UTC)


# -- where the callee may be -----------------------------------------------------------------------

def test_a_number_in_two_zones_takes_the_window_legal_in_both():
    alaska = "+19075550123"
    assert set(zones.number_zones(alaska)) == {"America/Adak", "America/Anchorage"}
    half_past_eight = datetime(2026, 11, 23, 17, 30, tzinfo=UTC)  # 08:30 Anchorage, 07:30 Adak
    assert call(half_past_eight, phone=alaska).not_before == datetime(2026, 11, 23, 18, 0, tzinfo=UTC)


def test_every_zone_the_callee_may_be_in_must_be_open():
    # A New York number whose lead lives in Arizona (no state row; UTC-7 all year): 08:00 in Phoenix is 11:00 in
    # New York in June.
    ten_thirty = call(at(NY, 2026, 6, 10, 10, 30), lead_state="Arizona")
    assert ten_thirty.outcome == "defer" and ten_thirty.not_before == at(NY, 2026, 6, 10, 11)
    assert {(z["zone"], z["why"]) for z in ten_thirty.inputs["zones"]} == {
        ("America/New_York", "area_code"), ("America/Phoenix", "lead_state")}
    assert "07:30 in America/Phoenix" in ten_thirty.message
    # ...and 21:00 in New York closes it while it is 18:00 in Arizona.
    assert call(at(NY, 2026, 6, 10, 20, 59), lead_state="AZ").allowed
    assert call(at(NY, 2026, 6, 10, 21), lead_state="AZ").not_before == at(NY, 2026, 6, 11, 11)


def test_a_stated_zone_counts_with_the_area_code():
    stated = call(at(NY, 2026, 6, 10, 8, 30), timezone="America/Chicago")
    assert stated.not_before == at(CHICAGO, 2026, 6, 10, 8)
    assert stated.inputs["zones"][0] == {"zone": "America/Chicago", "why": "stated",
                                         "local_time": "2026-06-10T07:30-05:00"}


def test_zones_no_moment_is_legal_in_together_are_refused_naming_them():
    tokyo = call(at(NY, 2026, 6, 10, 12), timezone="Asia/Tokyo")
    # 08:00-21:00 in Tokyo is 19:00-08:00 in New York in June: they share 19:00-21:00, so it is deferred ...
    assert tokyo.outcome == "defer" and tokyo.not_before == at(NY, 2026, 6, 10, 19)
    # The federal window (13 hours) always overlaps itself in any two zones; a 12-hour state window does not:
    # 08:00-20:00 in Miami and in Manila (12 hours ahead in June) never share a minute.
    apart = call(at(NY, 2026, 6, 10, 12), phone="+13055550100", timezone="Asia/Manila")
    assert (apart.outcome, apart.code, apart.rule) == ("refuse", "tcpa_violation", "zones")
    assert "Asia/Manila (stated)" in apart.message and "America/New_York (area code)" in apart.message
    # Nor do a business's own 09:00-17:00 in New York and in Tokyo.
    assert call(at(NY, 2026, 6, 10, 12), timezone="Asia/Tokyo", business_hours=hours(9, 17)).rule == "zones"


def test_a_number_libphonenumber_cannot_place_falls_back_to_the_sender_then_its_plan_then_utc():
    assert d.callee_zones(d.Callee(TOLL_FREE), LA_PHONE, at(NY, 2026, 6, 10, 12)) == (
        ("America/Los_Angeles",), ("sender",))
    assert d.callee_zones(d.Callee(TOLL_FREE, lead_state="TX"), LA_PHONE, at(NY, 2026, 6, 10, 12))[1] == (
        "lead_state", "lead_state")
    aussie = d.callee_zones(d.Callee("+61412345678"), "+61412345679", at(NY, 2026, 6, 10, 12))
    assert {"Australia/Perth", "Australia/Sydney"} <= set(aussie[0]) and set(aussie[1]) == {"country"}
    assert d.callee_zones(d.Callee("+447700900123"), "+447700900456", at(NY, 2026, 6, 10, 12)) == (
        ("UTC",), ("unknown",))


def test_numbers_outside_the_us_get_the_federal_window_in_their_own_zones():
    london = call(at(ZoneInfo("Europe/London"), 2026, 6, 10, 7, 30), phone="+442079460000")
    assert london.rule == "federal_hours" and london.not_before == at(ZoneInfo("Europe/London"), 2026, 6, 10, 8)
    assert london.source.startswith("platform policy") and london.inputs["states"] == []


def test_an_unknown_time_zone_is_a_clear_400_naming_the_field():
    with pytest.raises(ServiceError) as refused:
        zones.check_zone("Mars/Olympus_Mons", "target.timezone")
    assert refused.value.code == "invalid_request" and refused.value.message.startswith("target.timezone:")
    for bad in ("EST5EDT/../etc", "", "america/new_york"):
        with pytest.raises(ServiceError):
            zones.check_zone(bad, "timezone")
    assert zones.check_zone("America/Indiana/Indianapolis", "timezone") == "America/Indiana/Indianapolis"


@pytest.mark.parametrize("phone, state", [("+13055550100", "FL"), ("+14155550100", "CA"), ("+12065550100", "WA"),
                                          ("+12125550100", "NY"), ("+12025550100", "DC"), ("+18005550100", None),
                                          ("+16045550100", None), ("+442079460000", None)])
def test_the_area_codes_state(phone, state):
    assert zones.area_code_state(phone) == state


def test_stated_states_by_code_or_name():
    assert [zones.state_code(s) for s in ("fl", " Florida ", "WASHINGTON", "Ontario", None)] == [
        "FL", "FL", "WA", None, None]


# -- the state rows --------------------------------------------------------------------------------

WEDNESDAY, SATURDAY, SUNDAY = date(2026, 6, 10), date(2026, 6, 13), date(2026, 6, 14)


def _row_zones(row: StateRule) -> list[ZoneInfo]:
    return [ZoneInfo(z) for z in zones.US_STATE_ZONES[row.state]]


def _opens(row: StateRule, day: date) -> datetime:
    """When both the row's and the federal window are open in every zone of the state on that local day."""
    start = max(row.window(day.weekday()).start, time(8))
    return max(datetime.combine(day, start, z) for z in _row_zones(row)).astimezone(UTC)


def _closes(row: StateRule, day: date) -> datetime:
    end = min(row.window(day.weekday()).end, time(21))
    return min(datetime.combine(day, end, z) for z in _row_zones(row)).astimezone(UTC)


def _for_row(row: StateRule, when: datetime, channel: str = CALL, **extra) -> d.Decision:
    # A toll-free number: only the lead's stated state places the callee, so only this row's state applies.
    return call(when, phone=TOLL_FREE, lead_state=row.state, channel=channel, **extra)


@pytest.mark.parametrize("row", STATE_RULES, ids=lambda r: r.state)
def test_each_state_row_holds_its_weekday_window(row):
    opens, closes = _opens(row, WEDNESDAY), _closes(row, WEDNESDAY)
    before = _for_row(row, opens - timedelta(minutes=1))
    assert before.outcome == "defer" and before.not_before == opens, before
    assert _for_row(row, opens).allowed and _for_row(row, closes - timedelta(minutes=1)).allowed
    after = _for_row(row, closes)
    assert after.outcome == "defer" and after.not_before > closes
    if row.weekdays.start > time(8) or row.weekdays.end < time(21):
        stricter = before if row.weekdays.start > time(8) else after
        assert stricter.rule == "state_hours" and stricter.source == row.statute and row.state in stricter.message
    assert row.state in before.inputs["rules"] and before.inputs["states"] == [row.state]


@pytest.mark.parametrize("row", STATE_RULES, ids=lambda r: r.state)
def test_each_state_row_holds_its_weekend(row):
    for day in (SATURDAY, SUNDAY):
        noon = max(datetime.combine(day, time(12), z) for z in _row_zones(row)).astimezone(UTC)
        decided = _for_row(row, noon)
        window = row.window(day.weekday())
        if window is None:
            assert decided.outcome == "defer" and decided.rule == "state_hours", decided
            assert f"no calls on {day:%A}s" in decided.message
            assert decided.not_before.astimezone(_row_zones(row)[0]).date() > day
            assert _for_row(row, decided.not_before).allowed
        else:
            assert decided.allowed == (window.start <= time(12) < window.end), decided
            assert _for_row(row, _opens(row, day)).allowed
            assert not _for_row(row, _opens(row, day) - timedelta(minutes=1)).allowed


@pytest.mark.parametrize("row", [r for r in STATE_RULES if r.holidays_closed], ids=lambda r: r.state)
def test_each_state_row_that_forbids_holidays_skips_them(row):
    thanksgiving = date(2026, 11, 26)
    noon = max(datetime.combine(thanksgiving, time(12), z) for z in _row_zones(row)).astimezone(UTC)
    decided = _for_row(row, noon)
    assert decided.outcome == "defer" and decided.rule == "state_hours" and "legal holidays" in decided.message
    assert decided.not_before.astimezone(_row_zones(row)[0]).date() > thanksgiving
    assert _for_row(row, decided.not_before).allowed


@pytest.mark.parametrize("row", [r for r in STATE_RULES if r.max_calls_per_24h], ids=lambda r: r.state)
def test_each_state_cap_counts_calls_over_24_hours(row):
    opens = _opens(row, WEDNESDAY) + timedelta(hours=2)
    cap = row.max_calls_per_24h
    recent = tuple(opens - timedelta(minutes=10 * (i + 1)) for i in range(cap))
    capped = _for_row(row, opens, recent=recent)
    assert (capped.outcome, capped.rule, capped.source) == ("defer", "frequency", row.statute)
    assert capped.inputs["touches_24h"] == {CALL: cap, SMS: 0} and f"at most {cap}" in capped.message
    assert {"limit": cap, "channels": sorted(row.channels), "counted": cap, "source": row.statute} in \
        capped.inputs["caps"]
    assert capped.not_before >= min(recent) + d.DAY
    assert _for_row(row, opens, recent=recent[1:]).allowed  # one fewer call: allowed


@pytest.mark.parametrize("row", [r for r in STATE_RULES if SMS not in r.channels], ids=lambda r: r.state)
def test_a_row_for_calls_only_leaves_texts_to_the_federal_window(row):
    closes = _closes(row, WEDNESDAY)
    if closes < min(datetime.combine(WEDNESDAY, time(21), z) for z in _row_zones(row)).astimezone(UTC):
        assert _for_row(row, closes, channel=SMS).allowed


def test_the_required_rows_are_there():
    rows = {r.state: r for r in STATE_RULES}
    for state in ("FL", "OK", "MD", "WA"):  # 08:00-20:00 or stricter
        assert rows[state].weekdays.start >= time(8) and rows[state].weekdays.end <= time(20), state
    for state in ("FL", "OK", "MD"):
        assert rows[state].max_calls_per_24h == 3 and SMS in rows[state].channels, state
    assert all(r.statute and r.state in zones.US_STATE_ZONES for r in STATE_RULES)


def test_the_area_codes_state_and_the_leads_state_both_apply():
    # A Florida number (8-20, at most 3 calls) whose lead says Washington (8-20 Pacific): both windows.
    fl_wa = call(at(NY, 2026, 6, 10, 22), phone="+13055550100", lead_state="WA")
    assert set(fl_wa.inputs["states"]) == {"FL", "WA"} and fl_wa.not_before == at(LA, 2026, 6, 11, 8)
    assert call(at(LA, 2026, 6, 11, 16, 59), phone="+13055550100", lead_state="WA").allowed  # 19:59 in Miami
    assert call(at(LA, 2026, 6, 11, 17), phone="+13055550100", lead_state="WA").rule == "state_hours"  # 20:00 Miami


# -- the business's hours and the frequency cap -----------------------------------------------------

def test_the_business_hours_are_stricter_never_looser():
    nine = call(at(NY, 2026, 6, 10, 9), business_hours=hours(10, 17))
    assert (nine.rule, nine.not_before) == ("business_hours", at(NY, 2026, 6, 10, 10))
    assert "10:00-17:00" in nine.message
    assert call(at(NY, 2026, 6, 10, 16, 59), business_hours=hours(10, 17)).allowed
    # Hours wider than the law do not widen it.
    assert call(at(NY, 2026, 6, 10, 7), business_hours=hours(6, 23)).not_before == at(NY, 2026, 6, 10, 8)
    assert call(at(NY, 2026, 6, 10, 21), business_hours=hours(6, 23)).outcome == "defer"


def test_the_platform_cap_defers_until_the_oldest_counted_call_is_a_day_old():
    noon = at(NY, 2026, 6, 10, 12)
    recent = (noon - timedelta(hours=23), noon - timedelta(hours=2), noon - timedelta(hours=1))
    capped = call(noon, recent=recent, policy=d.Policy(calls_per_24h=3))
    assert (capped.outcome, capped.code, capped.rule) == ("defer", "tcpa_violation", "frequency")
    assert capped.not_before == noon + timedelta(hours=1) and capped.source == d.PLATFORM_CAP_SOURCES[CALL]
    assert capped.message.startswith(f"frequency: 3 calls to {NY_PHONE} in the last 24 hours; the platform allows")
    older = (noon - timedelta(hours=25), *recent[1:])
    assert call(noon, recent=older, policy=d.Policy(calls_per_24h=3)).allowed
    # A release that falls at night waits for the morning.
    evening = at(NY, 2026, 6, 10, 20, 30)
    late = call(evening, recent=(evening - timedelta(hours=23, minutes=30),), policy=d.Policy(calls_per_24h=1))
    assert late.rule == "frequency" and late.not_before == at(NY, 2026, 6, 11, 8)


def test_a_call_stamped_a_moment_later_still_counts():
    # Another replica's clock may run ahead: its slot must not escape the count.
    noon = at(NY, 2026, 6, 10, 12)
    ahead = (noon - timedelta(hours=1), noon - timedelta(minutes=5), noon + timedelta(milliseconds=3))
    assert call(noon, recent=ahead, policy=d.Policy(calls_per_24h=3)).rule == "frequency"


def calls_and_texts(noon: datetime, calls: int, texts: int) -> tuple[d.Counted, ...]:
    """`calls` calls then `texts` texts in the hours before `noon`, oldest first."""
    channels = [CALL] * calls + [SMS] * texts
    return tuple(d.Counted(c, noon - timedelta(hours=len(channels) - i)) for i, c in enumerate(channels))


@pytest.mark.parametrize("row", [r for r in STATE_RULES if r.max_calls_per_24h and SMS in r.channels],
                         ids=lambda r: r.state)
def test_a_cap_of_a_row_that_covers_texts_counts_calls_and_texts_together(row):
    opens = _opens(row, WEDNESDAY) + timedelta(hours=4)
    cap = row.max_calls_per_24h
    recent = calls_and_texts(opens, 1, cap - 1)
    for channel in (CALL, SMS):
        capped = _for_row(row, opens, channel=channel, recent=recent)
        assert (capped.outcome, capped.rule, capped.source) == ("defer", "frequency", row.statute), channel
        assert capped.inputs["touches_24h"] == {CALL: 1, SMS: cap - 1}
        assert f"1 call and {cap - 1} text" in capped.message and "calls and texts per 24 hours" in capped.message
        assert capped.not_before >= recent[0].at + d.DAY
        assert _for_row(row, opens, channel=channel, recent=recent[1:]).allowed


@pytest.mark.parametrize("row", [r for r in STATE_RULES if r.max_calls_per_24h and SMS not in r.channels],
                         ids=lambda r: r.state)
def test_a_cap_of_a_row_for_calls_only_counts_calls_only(row):
    opens = _opens(row, WEDNESDAY) + timedelta(hours=1)
    cap = row.max_calls_per_24h
    texts = calls_and_texts(opens, 0, cap + 2)
    assert _for_row(row, opens, recent=texts).allowed  # the texts do not count against the row's call cap
    assert _for_row(row, opens, recent=texts + calls_and_texts(opens, cap, 0)).rule == "frequency"


def test_the_platform_caps_each_channel_on_its_own():
    noon = at(NY, 2026, 6, 10, 12)
    policy = d.Policy(calls_per_24h=2, texts_per_24h=3)
    # NY has no state cap: two calls cap calls, not texts; three texts cap texts, not calls.
    assert call(noon, recent=calls_and_texts(noon, 2, 0), policy=policy).rule == "frequency"
    assert call(noon, channel=SMS, recent=calls_and_texts(noon, 2, 0), policy=policy).allowed
    texted = call(noon, channel=SMS, recent=calls_and_texts(noon, 1, 3), policy=policy)
    assert (texted.rule, texted.source) == ("frequency", d.PLATFORM_CAP_SOURCES[SMS])
    assert texted.message.startswith(f"frequency: 3 texts to {NY_PHONE}") and "at most 3 texts" in texted.message
    assert call(noon, recent=calls_and_texts(noon, 1, 3), policy=policy).allowed


def test_the_cap_that_frees_last_decides():
    # Florida's 3 calls and texts free at 16:00, the platform's 1 call at 10:00 the next day: the later wins.
    noon = at(NY, 2026, 6, 10, 12)
    recent = (d.Counted(CALL, noon - timedelta(hours=20)), d.Counted(SMS, noon - timedelta(hours=10)),
              d.Counted(CALL, noon - timedelta(hours=2)))
    capped = call(noon, phone="+13055550100", recent=recent, policy=d.Policy(calls_per_24h=1))
    assert capped.rule == "frequency" and capped.not_before == noon + timedelta(hours=22)
    assert capped.source == d.PLATFORM_CAP_SOURCES[CALL]
    florida = call(noon, phone="+13055550100", recent=recent, policy=d.Policy(calls_per_24h=3))
    assert florida.not_before == noon + timedelta(hours=4) and "Fla. Stat." in florida.source


def test_a_call_placed_with_compliance_skip_is_allowed_and_says_what_the_checks_said():
    refused = call(at(NY, 2026, 6, 10, 12), standing=d.Standing(consent="opted_out"))
    logged = d.counted_only(refused)
    assert (logged.outcome, logged.rule, logged.code) == ("allow", "not_checked", None)
    assert logged.inputs["checks"] == {"outcome": "refuse", "rule": "opted_out", "code": "number_opted_out",
                                       "not_before": None}
    assert "compliance skip" in logged.source and "the checks said refuse: +12125550123 opted out" in logged.message
    deferred = d.counted_only(call(at(NY, 2026, 6, 10, 22)))
    assert deferred.allowed and deferred.inputs["checks"]["not_before"] == "2026-06-11T12:00Z"


def test_a_split_area_code_is_placed_by_its_exchange():
    # Idaho's 208 spans Mountain and Pacific time; libphonenumber tells them apart by the exchange.
    assert zones.number_zones("+12082010123") == ("America/Denver",)
    assert zones.number_zones("+12082150123") == ("America/Los_Angeles",)
    assert zones.area_code_state("+12082010123") == zones.area_code_state("+12082150123") == "ID"
