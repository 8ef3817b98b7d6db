"""The national do-not-call registry: its files read line by line (services.messaging.national_registry.Reader), what
the platform's copy says of a number (the subscription, never loaded), and the decision's rules on it
(core.compliance.decision): a listed number refused unless an exemption holds, stale data refusing every touch, an
area code not consulted when not subscribed or never loaded. The clock is fixed."""
from datetime import UTC, datetime, timedelta

import pytest

from core.compliance import decision as d
from core.compliance.rules import CALL, SMS
from core.errors import CODES
from services.messaging.national_registry import (
    CHANGE,
    EVERY,
    FULL,
    NONE,
    REPORTED,
    Reader,
    Subscription,
    standing_fields,
)
from services.messaging.records import National
from services.messaging.store import registry_number

# A Tuesday, 11:00 in New York: every window is open for a consenting callee.
NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)
PHONE = "+12125550123"
REFRESHED = NOW - timedelta(days=3)


def registry(listed: bool = True, refreshed: datetime = REFRESHED, **standing) -> d.Standing:
    return d.Standing(national=d.CHECKED, national_listed=listed, national_refreshed_at=refreshed, **standing)


def decide(standing: d.Standing, channel: str = CALL, at: datetime = NOW, **callee) -> d.Decision:
    return d.decide(d.Touch(channel, at), d.Callee(PHONE, **callee), standing)


# -- the decision ------------------------------------------------------------------------------------

@pytest.mark.parametrize("channel", [CALL, SMS])
def test_a_listed_number_is_refused_naming_the_national_registry(channel):
    refused = decide(registry(), channel)
    assert (refused.outcome, refused.code, refused.rule) == ("refuse", "number_on_dnc", "national_dnc")
    assert "national" in refused.source and "16 CFR 310.4(b)(1)(iii)(B)" in refused.source
    assert refused.message.startswith(f"{PHONE} is on the national do-not-call registry (area code 212, refreshed "
                                      "2026-03-07)")
    assert refused.inputs["national_registry"] == {"status": "checked", "listed": True,
                                                   "refreshed_at": "2026-03-07T15:00Z", "exemption": None}
    assert refused.refusal().code == "number_on_dnc"


def test_an_opt_in_or_an_established_business_relationship_exempts_a_listed_number():
    opted_in = decide(registry(consent="opted_in"))
    assert opted_in.allowed and opted_in.inputs["national_registry"]["exemption"] == "opt_in"
    # a purchase within 18 months: a converted lead (its status is the call's consent basis too)
    bought = NOW - timedelta(days=30 * 17)
    customer = decide(registry(), lead_status="converted", converted_at=bought)
    assert customer.allowed and customer.inputs["national_registry"]["exemption"] == "purchase"
    assert customer.inputs["consent_basis"] == "existing_relationship"
    lapsed = decide(registry(), lead_status="converted", converted_at=datetime(2024, 9, 9, 15, tzinfo=UTC))
    assert (lapsed.code, lapsed.rule) == ("number_on_dnc", "national_dnc")
    # an inquiry within 3 months: they texted the business (conversational consent), or the lead's latest inbound
    texted = decide(registry(consent="conversational"), SMS)
    assert texted.allowed and texted.inputs["national_registry"]["exemption"] == "inquiry"
    inquired = decide(registry(), last_inbound_at=NOW - timedelta(days=80))
    assert inquired.rule == "no_consent_call"  # past the registry; an AI call still needs a consent basis
    stale_inquiry = decide(registry(), last_inbound_at=datetime(2025, 12, 9, 15, tzinfo=UTC))
    assert stale_inquiry.rule == "national_dnc"


def test_the_exemptions_count_calendar_months():
    end_of_month = datetime(2026, 8, 31, 15, tzinfo=UTC)
    assert d.national_exemption(end_of_month, d.Callee(PHONE, converted_at=datetime(2025, 2, 28, 15, 1, tzinfo=UTC)),
                                "none") == "purchase"
    assert d.national_exemption(end_of_month, d.Callee(PHONE, converted_at=datetime(2025, 2, 28, 15, tzinfo=UTC)),
                                "none") is None
    assert d.national_exemption(end_of_month, d.Callee(PHONE, last_inbound_at=datetime(2026, 5, 31, 16, tzinfo=UTC)),
                                "none") == "inquiry"


def test_data_older_than_31_days_refuses_every_touch_to_its_area_code():
    for standing in (registry(refreshed=NOW - timedelta(days=31, minutes=1)),
                     registry(listed=False, refreshed=NOW - timedelta(days=40), consent="opted_in")):
        stale = decide(standing)
        assert (stale.outcome, stale.code, stale.rule) == ("refuse", "dnc_registry_stale", "national_dnc_stale")
        assert "area code 212" in stale.message and "operator imports" in stale.message
        assert "31 days" in stale.source
    assert CODES["dnc_registry_stale"][1] == 400
    fresh = decide(registry(listed=False, refreshed=NOW - timedelta(days=31), consent="opted_in"))
    assert fresh.allowed and fresh.inputs["national_registry"]["listed"] is False


def test_an_area_code_not_subscribed_or_never_loaded_is_not_consulted():
    for status in (d.NOT_SUBSCRIBED, d.NOT_LOADED):
        allowed = decide(d.Standing(consent="opted_in", national=status))
        assert allowed.allowed and allowed.inputs["national_registry"] == {"status": status}
    assert d.Standing().national == d.NOT_SUBSCRIBED


def test_the_lists_and_an_opt_out_come_before_the_registry():
    listed = decide(registry(business_dnc_since=NOW - timedelta(days=1)))
    assert listed.rule == "business_dnc"
    opted_out = decide(registry(consent="opted_out"))
    assert opted_out.rule == "opted_out"


def test_a_deferral_records_the_registry_too():
    night = datetime(2026, 3, 11, 3, 0, tzinfo=UTC)  # 23:00 in New York
    deferred = decide(registry(listed=False, consent="opted_in"), at=night)
    assert deferred.outcome == "defer" and deferred.inputs["national_registry"]["status"] == "checked"


# -- what the platform's copy says -------------------------------------------------------------------

def test_the_subscription_and_the_loaded_data_make_the_standing():
    some = Subscription.of(("212", "415"))
    found = National(REFRESHED, True)
    assert standing_fields(PHONE, found, some) == {"national": "checked", "national_listed": True,
                                                   "national_refreshed_at": REFRESHED}
    assert standing_fields(PHONE, None, some) == {"national": "not_loaded"}
    assert standing_fields("+13055550123", found, some) == {"national": "not_subscribed"}
    assert standing_fields(PHONE, found, NONE) == {"national": "not_subscribed"}
    assert standing_fields("+13055550123", None, Subscription.of((EVERY,))) == {"national": "not_loaded"}
    assert standing_fields("+442079460123", None, Subscription.of((EVERY,))) == {"national": "not_subscribed"}
    assert registry_number(PHONE) == 2125550123 and registry_number("+442079460123") is None


# -- the files ---------------------------------------------------------------------------------------

def read(lines: list[str], subscribed=(EVERY,), loaded=frozenset({212})) -> tuple[Reader, list]:
    reader = Reader(Subscription.of(subscribed), frozenset(loaded))
    return reader, list(reader.records(lines))


def test_a_full_file_takes_both_forms_and_reports_malformed_lines_by_number():
    reader, records = read(["2125550123\n", "\n", '"212","5550124"\n', "212,5550125\r\n", "abc\n", "212555012\n",
                            "1125550123\n", "2121550123\n", "2125550126,A\n", "4155550123\n"])
    assert reader.kind == FULL
    assert records == [(2125550123, True, 1), (2125550124, True, 3), (2125550125, True, 4), (4155550123, True, 10)]
    assert reader.areas == {212: 3, 415: 1} and reader.malformed == 5 and reader.problems == 5
    assert reader.report() == [
        "line 5: 'abc' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
        "line 6: '212555012' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
        "line 7: '1125550123' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
        "line 8: '2121550123' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
        "line 9: '2125550126,A' is a change line in a full file"]


def test_a_change_file_adds_and_deletes_and_skips_area_codes_never_loaded():
    reader, records = read(["2125550123,A,20260101\n", "212,5550124,D\n", "2125550125,added\n", "2125550126,X\n",
                            "4155550123,A\n", "4155550124,D\n", "2125550127\n"])
    assert reader.kind == CHANGE
    assert records == [(2125550123, True, 1), (2125550124, False, 2), (2125550125, True, 3)]
    assert reader.not_loaded == {415: 2} and reader.malformed == 2 and reader.problems == 4
    assert reader.report() == [
        "line 4: 'X' is not a change (A for added, D for deleted)",
        "line 7: '2125550127' is a full line in a change file",
        "area code 415: no full file imported yet: 2 changes skipped (import its full file first)"]


def test_area_codes_not_subscribed_are_counted_not_loaded_and_the_report_is_bounded():
    reader, records = read(["2125550123\n", "4155550123\n", "4155550124\n"], subscribed=("212",))
    assert [r[0] for r in records] == [2125550123] and reader.not_subscribed == {415: 2}
    assert reader.report() == ["area code 415: not subscribed (NATIONAL_DNC_AREA_CODES): 2 numbers skipped"]
    many, _ = read(["x\n"] * (REPORTED + 5))
    assert many.malformed == REPORTED + 5 and len(many.report()) == REPORTED + 1
    assert many.report()[-1] == "... 5 more malformed lines" and many.kind is None
