"""A communication run's touches in the fast tier: the scheduler (services/sdr/runs_scheduler.py) claiming the due
ones and placing them through the calls and messaging services, and the calls' outcomes (services/sdr/runs_outcomes.py),
on the in-memory database (tests/memory) with those services behind an in-memory port (tests/service/fakes.py's
SdrPlacing) and the accounts service's standings (accounts_saying). A run and its jobs are written as the create
use case writes them (tests/unit/test_leads_use_cases.py creates runs), due a minute ago. Two schedulers claiming at
once is PostgreSQL's (tests/service/test_storage_contracts.py); the workers with the services and simulators are
the stack's (tests/e2e/test_communication_runs.py)."""
import asyncio
import uuid
from datetime import UTC, timedelta

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from contracts import runs as runs_contract
from core.errors import ServiceError
from core.ids import new_id, rfc3339, utcnow
from services.sdr.ports import Neighbours
from services.sdr.runs_outcomes import CallOutcomes
from services.sdr.runs_scheduler import HELD_DELAY, TRANSIENT_DELAY, Scheduler
from services.sdr.schema import attempts, configs, jobs, runs, standings
from switchboard.v1 import common_pb2
from tests.memory import insert
from tests.memory.sdr import in_memory
from tests.service.fakes import SdrPlacing, accounts_saying

CALLEE, TEXTED = "+14155550123", "+14155550124"
AGENT = new_id()
RETRY = runs_contract.RetryPolicy(max_retries=1, backoff_seconds=(60,))


def scheduler(database, placing: SdrPlacing, good: tuple[str, ...] = (), paused: tuple[str, ...] = ()) -> Scheduler:
    """A scheduler on the database, placing through `placing`, the businesses `good` active and `paused` paused at
    the accounts service (any other: unknown)."""
    standing = {**{b: "active" for b in good}, **{b: "paused" for b in paused}}
    return Scheduler(in_memory(database), Neighbours(None, None, placing, placing), poll=0.01,
                     lease=timedelta(minutes=5), calls_in_flight=5, standings=accounts_saying(standing))


async def placed(worker: Scheduler) -> int:
    """Claim what is due and wait until each claimed touch is settled; how many were claimed."""
    claimed = await worker.claim(10)
    await asyncio.gather(*list(worker.executing))
    return claimed


async def new_run(database, business_id: str, *touches: tuple[str, str, str], external_ref: str | None = None):
    """A run of the business with these touches ((touch_id, channel, phone)), due a minute ago: the run, and its
    jobs' ids by touch."""
    now, run_id = utcnow(), new_id()
    rows = [{"id": new_id(), "run_id": run_id, "business_id": business_id, "touch_index": index, "touch_id": touch_id,
             "channel": channel, "phone": phone, "timezone": None, "agent_id": AGENT,
             "context": {"body": "Your quote is ready."} if channel == "sms" else {"first_message": "Hi Sam"},
             "scheduled_at": now - timedelta(minutes=1), "due_at": now - timedelta(minutes=1),
             "status": runs_contract.PENDING, "rule": None, "code": None, "reason": None, "created_at": now,
             "updated_at": now} for index, (touch_id, channel, phone) in enumerate(touches)]
    async with in_memory(database).transaction() as work:
        run = await work.runs.add_run(
            id=run_id, business_id=business_id, account_id=new_id(), external_ref=external_ref or f"crm-{run_id}",
            idempotency_key=f"key-{run_id}", request_hash="hash", status=runs_contract.SCHEDULED, agent_id=AGENT,
            retry=RETRY.to_json(), touches=len(rows), created_at=now, updated_at=now)
        await work.runs.add_jobs(rows)
    return run, {row["touch_id"]: row["id"] for row in rows}


async def seed(database, table, **values) -> None:
    async with database.transaction() as conn:
        insert(conn.rows(table), table, values)


def job(database, job_id: str) -> dict:
    return database.tables[jobs.fullname][(job_id,)]


def run_row(database, run_id: str) -> dict:
    return database.tables[runs.fullname][(run_id,)]


def attempts_of(database, job_id: str) -> list[dict]:
    return sorted((a for a in database.tables.get(attempts.fullname, {}).values() if a["job_id"] == job_id),
                  key=lambda a: a["attempt"])


def events(database, type_: str) -> list[dict]:
    return [e for e in database.events if e["type"] == type_]


def call_ended(business_id: str, external_ref: str, touch_id: str, call_id: str, status: str = "completed",
               at=None) -> dict:
    """The call.completed (or call.failed) event of a touch's call, as the calls service publishes it."""
    return {"event_id": str(uuid.uuid4()), "type": "call.failed" if status == "failed" else "call.completed",
            "occurred_at": rfc3339(at or utcnow()), "business_id": business_id,
            "data": {"call_id": call_id, "status": status, "touch_id": touch_id, "external_ref": external_ref}}


async def test_a_runs_due_touches_are_placed_once_as_the_account_that_created_it(database, business_id):
    await seed(database, configs, business_id=business_id, enabled=False, min_touch_gap_hours=24, max_touches=5,
               auto_call=False, auto_email=False, auto_sms=False, business_hours_start=10, business_hours_end=16,
               updated_at=utcnow())
    run, ids = await new_run(database, business_id, ("call-1", "call", CALLEE), ("sms-1", "sms", TEXTED))
    placing = SdrPlacing(text_status="sent")
    worker = scheduler(database, placing, good=(business_id,))
    assert await placed(worker) == 2
    assert await placed(worker) == 0  # the call awaits its outcome; the text has ended
    call_key, text_key = (f"communication-job:{ids[t]}:1" for t in ("call-1", "sms-1"))
    assert set(placing.placed) == {call_key, text_key}
    touch, body, account_id, call = placing.placed[call_key]
    assert (touch.to, touch.agent_id, touch.actor, touch.reference, touch.external_ref, touch.touch_id,
            touch.first_message, touch.hours, body, account_id) == (
        CALLEE, AGENT, "run", ids["call-1"], run.external_ref, "call-1", "Hi Sam", (10, 16), None, run.account_id)
    _, body, _, text = placing.placed[text_key]
    assert body == "Your quote is ready."
    calling, texted = job(database, ids["call-1"]), job(database, ids["sms-1"])
    assert (calling["status"], calling["attempts"], calling["call_id"], calling["lease_token"], calling["ended_at"]) == (
        runs_contract.IN_PROGRESS, 1, call.id, None, None)
    assert (texted["status"], texted["message_id"], texted["reason"]) == (
        runs_contract.SUCCEEDED, text.id, "the text was accepted (sent)")
    [attempt] = attempts_of(database, ids["call-1"])
    assert (attempt["attempt"], attempt["call_id"], attempt["status"], attempt["run_id"]) == (
        1, call.id, runs_contract.PLACED, run.id)
    started = run_row(database, run.id)
    assert started["status"] == runs_contract.RUNNING and started["started_at"] is not None
    [completed] = events(database, "communication.touch_completed")
    assert (completed["business_id"], completed["data"]["touch_id"], completed["data"]["external_ref"],
            completed["data"]["message_id"]) == (business_id, "sms-1", run.external_ref, text.id)
    assert events(database, "communication.run_ended") == []


async def test_a_refused_touch_ends_with_its_reason_and_completes_its_run(database, business_id):
    run, ids = await new_run(database, business_id, ("t1", "call", CALLEE))
    why = f"{CALLEE} is on the business's do-not-call list"
    placing = SdrPlacing({CALLEE: ServiceError("number_on_dnc", why)})
    assert await placed(scheduler(database, placing, good=(business_id,))) == 1
    refused = job(database, ids["t1"])
    assert (refused["status"], refused["code"], refused["reason"], refused["attempts"], refused["lease_token"]) == (
        runs_contract.REFUSED, "number_on_dnc", why, 0, None)
    assert refused["ended_at"] is not None and placing.placed == {} and attempts_of(database, ids["t1"]) == []
    [failed] = events(database, "communication.touch_failed")
    assert (failed["data"]["status"], failed["data"]["code"], failed["data"]["reason"], failed["data"]["touch_id"]) == (
        runs_contract.REFUSED, "number_on_dnc", why, "t1")
    [ended] = events(database, "communication.run_ended")
    assert (ended["data"]["status"], ended["data"]["refused"]) == (runs_contract.COMPLETED, 1)
    assert run_row(database, run.id)["status"] == runs_contract.COMPLETED


async def test_a_deferred_touch_waits_for_the_decisions_instant_and_a_failure_of_ours_for_a_moment(database,
                                                                                                  business_id):
    run, ids = await new_run(database, business_id, ("night", "call", CALLEE), ("down", "sms", TEXTED))
    morning = Timestamp()
    morning.FromDatetime((utcnow() + timedelta(hours=8)).replace(microsecond=0))
    placing = SdrPlacing({CALLEE: common_pb2.ComplianceDecision(outcome="defer", rule="federal_hours",
                                                                code="tcpa_violation", message="quiet hours",
                                                                not_before=morning),
                          TEXTED: ServiceError("unavailable", "messaging is away")})
    before = utcnow()
    assert await placed(scheduler(database, placing, good=(business_id,))) == 2
    deferred, again = job(database, ids["night"]), job(database, ids["down"])
    assert (deferred["status"], deferred["due_at"], deferred["rule"], deferred["code"], deferred["lease_token"]) == (
        runs_contract.DEFERRED, morning.ToDatetime(tzinfo=UTC), "federal_hours",
        "tcpa_violation", None)
    assert (again["status"], again["reason"], again["attempts"]) == (runs_contract.PENDING, "messaging is away", 0)
    assert before + TRANSIENT_DELAY <= again["due_at"] <= utcnow() + TRANSIENT_DELAY
    [moved] = events(database, "communication.touch_deferred")
    assert (moved["data"]["touch_id"], moved["data"]["rule"]) == ("night", "federal_hours")
    assert run_row(database, run.id)["status"] == runs_contract.RUNNING


async def test_a_calls_outcome_ends_its_attempt_once_and_the_run_with_its_last_touch(database, business_id):
    run, ids = await new_run(database, business_id, ("t1", "call", CALLEE))
    placing = SdrPlacing()
    await placed(scheduler(database, placing, good=(business_id,)))
    [(_, _, _, call)] = placing.placed.values()
    at = utcnow().replace(microsecond=0)
    outcomes = CallOutcomes(in_memory(database))
    await outcomes.handle([call_ended(business_id, run.external_ref, "t1", call.id, at=at)])
    done = job(database, ids["t1"])
    assert (done["status"], done["attempts"], done["code"], done["ended_at"]) == (runs_contract.SUCCEEDED, 1, None, at)
    [attempt] = attempts_of(database, ids["t1"])
    assert (attempt["status"], attempt["ended_at"], attempt["retry_eligible"]) == ("completed", at, False)
    [completed] = events(database, "communication.touch_completed")
    assert (completed["data"]["outcome"], completed["data"]["call_id"]) == ("completed", call.id)
    [ended] = events(database, "communication.run_ended")
    assert (ended["data"]["status"], ended["data"]["succeeded"]) == (runs_contract.COMPLETED, 1)
    seen = list(database.events)
    await outcomes.handle([call_ended(business_id, run.external_ref, "t1", call.id, at=at)])  # redelivered
    assert database.events == seen and attempts_of(database, ids["t1"]) == [attempt]


async def test_a_call_nobody_answers_is_retried_by_the_policy_then_fails(database, business_id):
    run, ids = await new_run(database, business_id, ("ring", "call", CALLEE))
    placing = SdrPlacing()
    worker, outcomes = scheduler(database, placing, good=(business_id,)), CallOutcomes(in_memory(database))
    long_ago = utcnow().replace(microsecond=0) - timedelta(minutes=5)  # the retry after it is due already
    for attempt in (1, 2):
        assert await placed(worker) == 1
        call = placing.placed[f"communication-job:{ids['ring']}:{attempt}"][3]
        await outcomes.handle([call_ended(business_id, run.external_ref, "ring", call.id, "no-answer", at=long_ago)])
    failed = job(database, ids["ring"])
    assert (failed["status"], failed["attempts"], failed["code"]) == (runs_contract.FAILED, 2, "no-answer")
    assert "no retry left" in failed["reason"]
    first, second = attempts_of(database, ids["ring"])
    assert (first["status"], first["retry_eligible"], first["next_attempt_at"]) == (
        "no-answer", True, long_ago + timedelta(seconds=60))
    assert (second["status"], second["retry_eligible"], second["next_attempt_at"]) == ("no-answer", False, None)
    [touch_failed] = events(database, "communication.touch_failed")
    assert (touch_failed["data"]["attempts"], touch_failed["data"]["touch_id"]) == (2, "ring")
    assert run_row(database, run.id)["status"] == runs_contract.COMPLETED


@pytest.mark.parametrize("status", [runs_contract.EXECUTING, runs_contract.PENDING])
async def test_an_outcome_before_the_placement_was_recorded_ends_the_job(database, business_id, status):
    """The job still executing (its scheduler died mid-placement) or due again (the next one was told to come back):
    the outcome records the attempt itself, once."""
    run, ids = await new_run(database, business_id, ("t", "call", CALLEE))
    uow = in_memory(database)
    async with uow.transaction() as work:
        await work.touches.change_job(ids["t"], {"status": status})
    call_id = new_id()
    await CallOutcomes(uow).handle([call_ended(business_id, run.external_ref, "t", call_id)])
    after = job(database, ids["t"])
    assert (after["status"], after["attempts"], after["call_id"]) == (runs_contract.SUCCEEDED, 1, call_id)
    await CallOutcomes(uow).handle([call_ended(business_id, run.external_ref, "t", call_id)])  # nothing more
    assert job(database, ids["t"])["attempts"] == 1 and len(attempts_of(database, ids["t"])) == 1


async def test_a_call_that_ended_while_its_scheduler_placed_it_is_not_placed_again(database, business_id):
    """The outcome comes before the scheduler wrote the placement: the scheduler's late write finds its claim gone
    and changes nothing, and the run completes once."""
    run, ids = await new_run(database, business_id, ("t", "call", CALLEE))
    outcomes = CallOutcomes(in_memory(database))

    async def ended_at_once(touch) -> None:
        call = placing.placed[touch.key][3]
        await outcomes.handle([call_ended(business_id, run.external_ref, "t", call.id)])

    placing = SdrPlacing(before_answer=ended_at_once)
    worker = scheduler(database, placing, good=(business_id,))
    assert await placed(worker) == 1
    assert await placed(worker) == 0
    [(_, _, _, call)] = placing.placed.values()
    done = job(database, ids["t"])
    assert (done["status"], done["attempts"], done["call_id"], done["lease_token"]) == (
        runs_contract.SUCCEEDED, 1, call.id, None)
    [attempt] = attempts_of(database, ids["t"])
    assert (attempt["call_id"], attempt["status"]) == (call.id, "completed")
    assert len(events(database, "communication.touch_completed")) == len(events(database, "communication.run_ended")) == 1


async def test_another_businesses_run_is_untouched(database, business_id):
    """A business held at the accounts service waits (claimed, placed nothing), one whose standing sdr recorded as
    held is not claimed at all, and an outcome of one business's touch changes no other's of the same reference."""
    paused, stopped = new_id(), new_id()
    await seed(database, standings, business_id=stopped, standing="canceled", changed_at=utcnow())
    run, ids = await new_run(database, business_id, ("t1", "call", CALLEE))
    _, waiting = await new_run(database, paused, ("t1", "call", CALLEE), external_ref=run.external_ref)
    _, untouched = await new_run(database, stopped, ("t1", "call", CALLEE))
    stored = dict(job(database, untouched["t1"]))
    placing = SdrPlacing()
    before = utcnow()
    assert await placed(scheduler(database, placing, good=(business_id, stopped), paused=(paused,))) == 2
    assert [touch.reference for touch, *_ in placing.placed.values()] == [ids["t1"]]
    held = job(database, waiting["t1"])
    assert (held["status"], held["attempts"], held["lease_token"]) == (runs_contract.PENDING, 0, None)
    assert held["due_at"] >= before + HELD_DELAY and held["reason"].startswith("waiting: the workspace is not in good")
    assert job(database, untouched["t1"]) == stored
    [(_, _, _, call)] = placing.placed.values()
    await CallOutcomes(in_memory(database)).handle([call_ended(business_id, run.external_ref, "t1", call.id)])
    assert job(database, ids["t1"])["status"] == runs_contract.SUCCEEDED
    assert job(database, waiting["t1"]) == held and job(database, untouched["t1"]) == stored
    assert {e["business_id"] for e in database.events} == {business_id}
