"""The erasure of a person's rules (services/accounts/privacy/domain.py): the subject's validation and normalization,
the order of the steps and what each is given, the report, and the retries."""
from datetime import timedelta

import pytest

from core.errors import ServiceError
from services.accounts.privacy import domain


def test_a_phone_is_taken_in_e164_or_the_national_format_of_the_business_country():
    assert domain.subject_of("+14155550123", None, "US").phones == ("+14155550123",)
    assert domain.subject_of("(415) 555-0123", None, "US").phones == ("+14155550123",)
    assert domain.subject_of(" 415.555.0123 ", None, "US").phones == ("+14155550123",)
    assert domain.subject_of("+1 415-555-0123", None, "GB").phones == ("+14155550123",)
    assert domain.subject_of("020 7946 0958", None, "GB").phones == ("+442079460958",)


def test_the_business_country_is_that_of_its_forwarding_phone_else_the_us():
    assert domain.region_of("+442079460958") == "GB"
    assert domain.region_of(None) == domain.region_of("") == "US"


@pytest.mark.parametrize("phone, email, says", [
    (None, None, "give phone"), ("", "  ", "give phone"),
    ("12", None, "E.164"), ("not a number", None, "E.164"), ("+1 555 000", None, "not a valid"),
    (None, "not-an-email", "email is invalid"), (None, "a@" + "b" * 260 + ".com", "at most"),
])
def test_a_bad_subject_is_a_validation_error_saying_what_to_send(phone, email, says):
    with pytest.raises(ServiceError) as refused:
        domain.subject_of(phone, email, "US")
    assert refused.value.code == "validation_error" and says in refused.value.message


def test_a_number_refused_is_not_echoed_in_full():
    with pytest.raises(ServiceError) as refused:
        domain.subject_of("+1 999 555 0123", None, "US")
    assert "0123" in refused.value.message and "999 555" not in refused.value.message


def test_an_email_is_lower_cased_and_the_subject_masked():
    subject = domain.subject_of("+14155550123", "Dana.Reyes@Example.COM", "US")
    assert subject.emails == ("dana.reyes@example.com",)
    assert subject.masked() == ("+*******0123", "***@example.com")
    assert domain.subject_of(None, "a@example.com", "US").masked() == (None, "***@example.com")
    assert subject.key == "+14155550123|dana.reyes@example.com"


def test_the_fingerprint_is_the_request_however_written():
    a = domain.subject_of("(415) 555-0123", "A@example.com", "US")
    b = domain.subject_of("+14155550123", "a@example.com", "US")
    assert domain.request_hash("b1", a, True) == domain.request_hash("b1", b, True)
    assert domain.request_hash("b1", a, True) != domain.request_hash("b1", a, False)
    assert domain.request_hash("b1", a, True) != domain.request_hash("b2", a, True)


def test_the_steps_run_in_order_each_given_the_ids_the_steps_before_found():
    reports: dict = {}
    found: dict = {}
    seen = []
    answers = {
        "sdr": domain.StepReport(({"what": "sdr.lead", "action": "deleted", "count": 1},), lead_ids=("l1",)),
        "calls": domain.StepReport(({"what": "calls.transcript", "action": "redacted", "count": 2},),
                                   call_ids=("c1", "c2")),
        "messaging": domain.StepReport(({"what": "messaging.dnc", "action": "suppressed", "count": 1},),
                                       message_ids=("m1",), lead_ids=("l1",)),
        "webhooks": domain.StepReport(({"what": "webhooks.event", "action": "redacted", "count": 0},)),
    }
    while (step := domain.next_step(reports)) is not None:
        request = domain.step_request("e1", "b1", ["+14155550123"], [], True, found)
        seen.append((step, request.lead_ids, request.call_ids, request.message_ids))
        reports, found = domain.with_step(reports, found, step, answers[step])
    assert seen == [("sdr", (), (), ()), ("calls", ("l1",), (), ()), ("messaging", ("l1",), ("c1", "c2"), ()),
                    ("webhooks", ("l1",), ("c1", "c2"), ("m1",))]
    assert domain.steps_done(reports) == list(domain.STEPS) == ["sdr", "calls", "messaging", "webhooks"]
    assert domain.report_lines(reports)[:2] == [
        {"service": "sdr", "what": "sdr.lead", "action": "deleted", "count": 1},
        {"service": "calls", "what": "calls.transcript", "action": "redacted", "count": 2}]


def test_a_job_taken_over_resumes_at_the_first_step_not_done():
    assert domain.next_step({"sdr": []}) == "calls"
    assert domain.next_step({"sdr": [], "calls": [], "messaging": [], "webhooks": []}) is None
    assert domain.steps_done({"calls": [], "sdr": []}) == ["sdr", "calls"]


def test_an_unknown_person_reports_zero_counts_not_an_error():
    reports: dict = {}
    found: dict = {}
    for step in domain.STEPS:
        reports, found = domain.with_step(reports, found, step, domain.StepReport(
            ({"what": f"{step}.records", "action": "deleted", "count": 0},)))
    assert [line["count"] for line in domain.report_lines(reports)] == [0, 0, 0, 0]
    assert found == {"lead_ids": [], "call_ids": [], "message_ids": []}


def test_retries_double_up_to_an_hour_and_give_up_at_the_limit():
    assert [domain.retry_delay(n, 10) for n in (1, 2, 3)] == [timedelta(seconds=s) for s in (10, 20, 40)]
    assert domain.retry_delay(50, 10) == domain.MAX_RETRY_DELAY == timedelta(hours=1)
    assert not domain.gives_up(19, 20) and domain.gives_up(20, 20)


def test_an_erasure_is_answered_masked_with_its_report_in_step_order():
    from datetime import UTC, datetime

    from services.accounts.privacy.servicer import erasure_message
    from services.accounts.records import ErasureRecord

    at = datetime(2026, 11, 29, 19, 0, tzinfo=UTC)
    job = ErasureRecord(
        id="e1", business_id="b1", status=domain.COMPLETED, phones=None, emails=None, subject_key=None,
        phone_masked="+*******0123", email_masked=None, suppress=True,
        reports={"calls": [{"what": "calls.call", "action": "deleted", "count": 1}],
                 "sdr": [{"what": "sdr.lead", "action": "deleted", "count": 1}]},
        found={}, idempotency_key=None, request_hash=None, attempts=1, error=None, next_attempt_at=at,
        lease_token=None, created_at=at, completed_at=at)
    answered = erasure_message(job)
    assert [(s.service, s.what) for s in answered.report] == [("sdr", "sdr.lead"), ("calls", "calls.call")]
    assert list(answered.steps_done) == ["sdr", "calls"]
    assert answered.phone_masked == "+*******0123" and not answered.HasField("email_masked")
    assert not answered.HasField("next_attempt_at") and answered.HasField("completed_at")
    queued = erasure_message(ErasureRecord(**{**job.__dict__, "status": domain.QUEUED, "completed_at": None,
                                              "error": "calls step failed: unavailable: down"}))
    assert queued.HasField("next_attempt_at") and queued.error.startswith("calls step failed")
