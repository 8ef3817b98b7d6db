"""The sdr erasure's rules as plain functions (services.sdr.erasure): who the person is, what of an outbox row and
of a briefing names them, and the report's lines."""
from types import SimpleNamespace

from services.sdr import erasure

LEAD = "0b8e4c1e-8d3c-4c57-9a51-2f6f0d2d6a11"
OTHER = "7d1f3a52-1c0e-4b7e-8f0a-5e2a9c4b3d22"
PHONE = "+14155550123"
PERSON = erasure.Person((PHONE,), ("ann@example.com",), ())


def test_person_is_normalized_and_deduplicated():
    person = erasure.person_of([PHONE, "+1 415-555-0123", " "], ["Ann@Example.COM ", "ann@example.com", ""],
                               [LEAD, LEAD.upper()])
    assert person == erasure.Person((PHONE,), ("ann@example.com",), (LEAD,))
    assert not person.empty and erasure.person_of([], [], []).empty


def test_lead_names_are_the_name_or_first_and_last():
    rows = [SimpleNamespace(name="Ann Lee", first_name="Ann", last_name="Lee"),
            SimpleNamespace(name=None, first_name="Bo", last_name=None),
            SimpleNamespace(name=None, first_name=None, last_name=None)]
    assert erasure.lead_names(rows) == ("Ann Lee", "Bo")


def test_lead_created_of_the_person_loses_its_contact_fields():
    data = {"id": LEAD, "name": "Ann", "email": "ann@example.com", "phone": PHONE, "source": "api"}
    redacted = erasure.redacted_event("lead.created", data, PERSON, [LEAD])
    assert redacted == {"id": LEAD, "name": None, "email": None, "phone": None, "source": "api"}
    assert erasure.redacted_event("lead.created", redacted, PERSON, [LEAD]) is None  # again: nothing left
    # found by the phone alone, or the email alone
    assert erasure.redacted_event("lead.created", {**data, "id": OTHER}, PERSON, []) is not None
    stranger = {"id": OTHER, "name": "Bo", "email": "bo@example.com", "phone": "+14155550999", "source": "api"}
    assert erasure.redacted_event("lead.created", stranger, PERSON, [LEAD]) is None


def test_booking_events_and_touches_lose_the_person_and_keep_the_rest():
    booking = {"id": OTHER, "starts_at": "2026-12-01T09:00:00-05:00", "status": "confirmed", "name": "Ann",
               "phone_number": PHONE, "email": None, "notes": "gate code 1234", "lead_id": None, "call_id": None}
    for kind in ("created", "rescheduled", "canceled"):
        redacted = erasure.redacted_event(f"booking.{kind}", booking, PERSON, [])
        assert redacted == {**booking, "name": "", "phone_number": "", "notes": None}
    by_lead = {**booking, "phone_number": "+14155550999", "lead_id": LEAD}
    assert erasure.redacted_event("booking.created", by_lead, PERSON, [LEAD])["phone_number"] == ""
    failed = {"job_id": OTHER, "to": PHONE, "status": "refused", "code": "number_on_dnc",
              "reason": f"{PHONE} is on this business's do-not-call list", "attempts": 0}
    assert erasure.redacted_event("communication.touch_failed", failed, PERSON, []) == {
        **failed, "to": "", "reason": ""}
    assert erasure.redacted_event("communication.touch_failed", {**failed, "to": "+14155550999"}, PERSON,
                                  []) is None
    assert erasure.redacted_event("lead.scored", {"lead_id": LEAD, "score": 40}, PERSON, [LEAD]) is None


def test_a_briefing_event_loses_the_escalation_of_the_lead():
    data = {"briefing_id": OTHER, "escalated": 2, "needs_owner": [
        {"lead_id": LEAD, "name": "Ann", "reason": "asked for a callback at 555-0123"},
        {"lead_id": OTHER, "name": "Bo", "reason": "wants a quote"}]}
    redacted = erasure.redacted_event("dispatcher.briefing_created", data, PERSON, [LEAD])
    assert redacted["escalated"] == 2 and redacted["needs_owner"] == [
        {"lead_id": LEAD, "name": "", "reason": ""}, {"lead_id": OTHER, "name": "Bo", "reason": "wants a quote"}]
    assert erasure.redacted_event("dispatcher.briefing_created", redacted, PERSON, [LEAD]) is None


def test_a_briefing_loses_the_lines_naming_the_lead():
    text = "\n".join(["Your sales pipeline at Acme, 2026-11-29 10:00 UTC:", "", "- calls placed: 2", "",
                      "2 lead(s) need you:", "- Ann Lee: asked for a callback", "- Bo: wants a quote", "",
                      "Touches that failed:", f"- {LEAD} (call): {PHONE} is on the do-not-call list"])
    needs_owner = [{"lead_id": LEAD, "name": "Ann Lee", "reason": "asked"}, {"lead_id": OTHER, "name": "Bo",
                                                                          "reason": "quote"}]
    redacted = erasure.redacted_briefing(needs_owner, text, [LEAD], ["Ann Lee"])
    assert redacted is not None
    escalations, lines = redacted[0], redacted[1].split("\n")
    assert escalations[0] == {"lead_id": LEAD, "name": "", "reason": ""} and escalations[1] == needs_owner[1]
    assert lines[5] == erasure.ERASED_LINE and lines[6] == "- Bo: wants a quote" and lines[9] == erasure.ERASED_LINE
    assert "Ann" not in redacted[1] and PHONE not in redacted[1] and "- calls placed: 2" in lines
    assert erasure.redacted_briefing(*redacted, [LEAD], ["Ann Lee"]) is None
    assert erasure.redacted_briefing(needs_owner[1:], "- Bo: wants a quote", [LEAD], ["Ann Lee"]) is None


def test_briefing_needles_name_the_ids_and_the_lines():
    assert erasure.briefing_needles([LEAD], ["Ann"]) == (LEAD, "- Ann: ", "- Ann (")


def test_the_report_has_every_line_zeros_too_and_keeps_only_uuids():
    erased = erasure.Erased()
    assert [n for _, _, n in erased.items()] == [0] * len(erasure.ITEMS)
    erased.add("sdr.lead", "deleted", 2)
    erased.add("sdr.lead", "deleted", 1)
    erased.calls([LEAD, None, "SM123", LEAD])
    assert ("sdr.lead", "deleted", 3) in erased.items() and list(erased.call_ids) == [LEAD]
    assert {what for what, _, _ in erased.items()} >= {"sdr.lead", "sdr.interaction", "sdr.booking", "sdr.run_touch",
                                                      "sdr.outbox"}
