"""Erasure jobs (services/accounts/privacy/service.py) on the real database: the orchestration alone. The four
services' ErasePerson are the port here (a scripted `PersonalData` that records what each step is asked, answers,
fails or hangs as the test says), so the claim, the order of the steps, the resumption after a crash, the backoff
and the end of a job are checked against PostgreSQL; the steps themselves are the services' own tests, and the
whole erasure is tests/e2e/test_erasure.py.

The stack's own accounts process claims due erasures too (its erasure-runner): every job here is either held by
one of the test's replicas (a new job is leased to the replica that made it), or not due for a minute (a failed
step's retry), or claimed in a transaction nobody else sees."""
import asyncio
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_as
from services.accounts.privacy import domain
from services.accounts.privacy.domain import StepReport, StepRequest
from services.accounts.privacy.service import Erasures
from services.accounts.privacy_repository import SqlErasures
from services.accounts.repository import accounts_units
from services.accounts.schema import erasures, outbox
from services.accounts.secret_keys import SecretKeys
from tests.service.conftest import new_business
from tests.waiting import wait_until

RETRY_SECONDS = 60.0  # a failed step is not due again while a test runs: nobody else takes its job
LEASE = timedelta(seconds=1)
PHONE = "+14155550123"


class ScriptedPersonalData:
    """The services' ErasePerson as a script: `answers[service]` is a StepReport, an exception to raise, or an
    asyncio.Event to wait for (a step that hangs until the test ends it). Every request is recorded."""

    def __init__(self, **answers):
        self.answers = answers
        self.asked: list[tuple[str, StepRequest]] = []

    async def erase(self, service: str, request: StepRequest) -> StepReport:
        self.asked.append((service, request))
        answer = self.answers.get(service) or StepReport(({"what": f"{service}.records", "action": "deleted",
                                                           "count": 0},))
        if isinstance(answer, asyncio.Event):
            await answer.wait()
            return StepReport(())
        if isinstance(answer, Exception):
            raise answer
        return answer

    def services(self) -> list[str]:
        return [service for service, _ in self.asked]

    def steps_of(self, erasure_id: str) -> list[str]:
        return [service for service, request in self.asked if request.erasure_id == erasure_id]


FOUND = {
    "sdr": StepReport(({"what": "sdr.lead", "action": "deleted", "count": 1},), lead_ids=("lead-1",)),
    "calls": StepReport(({"what": "calls.transcript", "action": "redacted", "count": 2},), call_ids=("call-1",)),
    "messaging": StepReport(({"what": "messaging.dnc", "action": "suppressed", "count": 1},),
                            message_ids=("msg-1",)),
}


@pytest.fixture
async def business_id(database) -> str:
    async with database.transaction() as conn:
        return await new_business(conn)


@pytest.fixture
def business(business_id):
    """A business of its own, its owner the caller."""
    with acting_as(Tenant(account_id=str(uuid.uuid4()), business_ids=(business_id,))):
        yield business_id


def replica(database, personal_data, **options) -> Erasures:
    return Erasures(accounts_units(database), personal_data, SecretKeys("test-secret"), **{
        "retry_seconds": RETRY_SECONDS, "max_attempts": 3, "lease": LEASE, **options})


async def row(database, erasure_id: str):
    async with database.read() as conn:
        return (await conn.execute(sa.select(erasures).where(erasures.c.id == erasure_id))).one()


async def completed_events(database, erasure_id: str) -> list[dict]:
    async with database.read() as conn:
        found = await conn.execute(sa.select(outbox.c.data).where(outbox.c.type == "erasure.completed"))
        return [data for (data,) in found if data["erasure_id"] == erasure_id]


async def test_a_job_runs_its_steps_in_order_passing_on_what_each_found_and_forgets_the_subject(database, business):
    port = ScriptedPersonalData(**FOUND)
    job, existing = await replica(database, port).create(None, "(415) 555-0123", "Dana@Example.com", True, None)
    assert not existing and job.status == domain.QUEUED and job.lease_token  # leased to its maker, started at once
    done = await wait_until(lambda: row(database, job.id), "the job to complete",
                            lambda r: r.status == domain.COMPLETED)
    assert port.services() == ["sdr", "calls", "messaging", "webhooks"]
    asked = dict(port.asked)
    assert asked["sdr"].phones == (PHONE,) and asked["sdr"].emails == ("dana@example.com",)
    assert asked["sdr"].suppress and asked["sdr"].erasure_id == job.id and asked["sdr"].business_id == business
    assert (asked["calls"].lead_ids, asked["calls"].call_ids) == (("lead-1",), ())
    assert (asked["webhooks"].lead_ids, asked["webhooks"].call_ids, asked["webhooks"].message_ids) == (
        ("lead-1",), ("call-1",), ("msg-1",))
    assert (done.phones, done.emails, done.subject_key, done.request_hash, done.lease_token) == (None,) * 5
    assert (done.phone_masked, done.email_masked) == ("+*******0123", "***@example.com")
    assert done.completed_at is not None and done.attempts == 0 and done.error is None
    [event] = await wait_until(lambda: completed_events(database, job.id), "erasure.completed in the outbox")
    assert event["business_id"] == business
    assert event["report"][:2] == [{"service": "sdr", "what": "sdr.lead", "action": "deleted", "count": 1},
                                   {"service": "calls", "what": "calls.transcript", "action": "redacted",
                                    "count": 2}]
    assert "0123" not in str(event) and "dana" not in str(event)


async def test_an_unknown_person_completes_with_zero_counts(database, business):
    port = ScriptedPersonalData()
    job, _ = await replica(database, port).create(business, None, "nobody@example.com", False, None)
    done = await wait_until(lambda: row(database, job.id), "the job to complete",
                            lambda r: r.status == domain.COMPLETED)
    assert [line["count"] for line in domain.report_lines(done.reports)] == [0, 0, 0, 0]
    assert not dict(port.asked)["messaging"].suppress


async def test_a_failed_step_leaves_the_job_queued_with_its_error_and_it_resumes_at_that_step(database, business):
    unimplemented = ServiceError("internal_error", "internal error")
    port = ScriptedPersonalData(**{**FOUND, "calls": unimplemented})
    erasures_ = replica(database, port)
    job, _ = await erasures_.create(business, PHONE, None, True, None)
    waiting = await wait_until(lambda: row(database, job.id), "the step's failure to be stored",
                               lambda r: r.attempts == 1)
    assert waiting.status == domain.QUEUED and waiting.lease_token is None
    assert waiting.error == "calls step failed: internal_error: internal error"
    assert list(waiting.reports) == ["sdr"] and waiting.found["lead_ids"] == ["lead-1"]
    delay = waiting.next_attempt_at - waiting.updated_at
    assert timedelta(seconds=RETRY_SECONDS - 1) < delay <= timedelta(seconds=RETRY_SECONDS)
    assert waiting.phones == [PHONE]  # kept while the job is not over
    # Its retry's time: a runner takes the lease (the claim's, done here by hand so that nobody else runs it).
    token = new_id()
    async with database.transaction() as conn:
        await conn.execute(erasures.update().where(erasures.c.id == job.id).values(
            lease_token=token, lease_until=utcnow() + timedelta(seconds=30)))
    port.answers["calls"] = FOUND["calls"]
    async with accounts_units(database).read() as work:
        claimed = await work.erasures.get(job.id, [business])
    done = await erasures_.run(claimed, token)
    assert done is not None and done.status == domain.COMPLETED and done.attempts == 1 and done.error is None
    assert port.services() == ["sdr", "calls", "calls", "messaging", "webhooks"]  # sdr once
    assert port.asked[2][1].lead_ids == ("lead-1",)


async def test_after_the_last_attempt_the_job_is_failed_and_forgets_the_subject(database, business):
    port = ScriptedPersonalData(sdr=ServiceError("unavailable", "a backing service is unavailable; retry shortly"))
    job, _ = await replica(database, port, max_attempts=1).create(business, PHONE, None, True, None)
    failed = await wait_until(lambda: row(database, job.id), "the job to fail", lambda r: r.status == domain.FAILED)
    assert failed.attempts == 1 and failed.error.startswith("sdr step failed: unavailable")
    assert (failed.phones, failed.subject_key, failed.lease_token) == (None, None, None)
    assert failed.phone_masked == "+*******0123" and failed.completed_at is not None
    assert await completed_events(database, job.id) == []


async def test_a_job_whose_runner_died_is_taken_over_when_its_lease_ends_and_resumes_at_the_step_not_done(
        database, business):
    hang = asyncio.Event()
    first_port = ScriptedPersonalData(**{**FOUND, "calls": hang})
    first = replica(database, first_port)
    job, _ = await first.create(business, PHONE, None, True, None)
    await wait_until(lambda: first_port.services(), "the first runner to reach the calls step",
                     lambda s: s == ["sdr", "calls"])
    await first.started.stop()  # it dies: its lease stays until it runs out
    stored = await row(database, job.id)
    assert stored.status == domain.RUNNING and list(stored.reports) == ["sdr"] and stored.lease_token is not None
    second_port = ScriptedPersonalData(**FOUND)
    second = replica(database, second_port)
    await second.run_due()  # while the lease holds, nobody takes the job
    assert (await row(database, job.id)).lease_token == stored.lease_token and second_port.steps_of(job.id) == []
    await wait_until(lambda: row(database, job.id), "the lease to run out",
                     lambda r: r.lease_until is None or r.lease_until < utcnow(), interval=0.02)

    async def taken_over():
        await second.run_due()  # (it may claim other due jobs too: it runs them all before it answers)
        return await row(database, job.id)
    done = await wait_until(taken_over, "the second runner to finish the job", lambda r: r.status == domain.COMPLETED,
                            interval=0.02)
    assert second_port.steps_of(job.id) == ["calls", "messaging", "webhooks"]
    assert [line["service"] for line in domain.report_lines(done.reports)] == ["sdr", "calls", "messaging",
                                                                               "webhooks"]


async def test_two_requests_for_the_same_person_at_once_make_one_job(database, business):
    hang = asyncio.Event()
    port = ScriptedPersonalData(sdr=hang)
    erasures_ = replica(database, port)
    try:
        (a, a_existing), (b, b_existing) = await asyncio.gather(
            erasures_.create(business, PHONE, None, True, None), erasures_.create(business, "415-555-0123", None,
                                                                                   True, None))
        assert a.id == b.id and sorted([a_existing, b_existing]) == [False, True]
        # another person, or the same one with an email too, is another job
        other, existing = await erasures_.create(business, PHONE, "dana@example.com", True, None)
        assert other.id != a.id and not existing
    finally:
        hang.set()
        await erasures_.started.stop()


async def test_an_idempotency_key_answers_its_erasure_and_refuses_another_body(database, business):
    port = ScriptedPersonalData(sdr=asyncio.Event())
    erasures_ = replica(database, port)
    try:
        first, _ = await erasures_.create(business, PHONE, None, True, "key-1")
        again, existing = await erasures_.create(business, "(415) 555-0123", None, True, "key-1")
        assert again.id == first.id and not existing
        with pytest.raises(ServiceError) as refused:
            await erasures_.create(business, PHONE, None, False, "key-1")
        assert refused.value.code == "conflict"
    finally:
        await erasures_.started.stop()


async def test_the_claim_takes_due_free_jobs_only(database, business):
    now = utcnow()

    def job(**values):
        return {"id": new_id(), "business_id": business, "status": domain.QUEUED, "phones": [PHONE], "emails": [],
                "subject_key": new_id(), "suppress": True, "next_attempt_at": now - timedelta(seconds=1),
                "created_at": now, "updated_at": now, **values}

    rows = {"due": job(), "crashed": job(status=domain.RUNNING, lease_token=new_id(),
                                         lease_until=now - timedelta(seconds=1)),
            "held": job(status=domain.RUNNING, lease_token=new_id(), lease_until=now + timedelta(minutes=1)),
            "later": job(next_attempt_at=now + timedelta(minutes=1)),
            "over": job(status=domain.COMPLETED, subject_key=None)}

    class Rollback(Exception):
        pass

    with pytest.raises(Rollback):  # claimed in a transaction no other runner sees, then undone
        async with database.transaction() as conn:
            repository = SqlErasures(conn)
            for values in rows.values():
                assert await repository.add(**values) is not None
            claimed = {j.id for j in await repository.claim_due(100, timedelta(minutes=5))}
            assert {name for name, values in rows.items() if values["id"] in claimed} == {"due", "crashed"}
            raise Rollback
