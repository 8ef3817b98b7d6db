"""The communication runs' scheduler: `python -m services.sdr.runs_scheduler` (the worker `runs-scheduler` of
core.registry; any number of replicas).

It keeps up to RUNS_CONCURRENCY touches executing, claiming due jobs of active runs under leases
(the touches repository's claim) as slots free, at most RUNS_CALLS_IN_FLIGHT calls per business in flight, and
executes each as the account that created its run:
- a call through Calls.PlaceCall with compliance enforce (the decision is asked again now: a STOP, a do-not-call
  entry or the frequency cap since the run was created count, and the business's own calling hours when it saved
  an SDR config), actor run, the touch's external_ref and touch_id
  (on the call's events), and an idempotency key derived from the job and its attempt, so a scheduler that died
  after the provider took the call and before it wrote so cannot make a second call: the retry gets the first;
- a text through Messaging.PlaceSms the same way (its key makes a retried send return the first message).
A touch of a business not in good standing (or whose standing the accounts service cannot confirm: core.standings)
is not placed: it waits, looked at again every HELD_DELAY. A deferral moves the job to the instant the decision
names; a refusal ends it (refused, with the code); a provider refusal is a failed attempt (retried by the run's
policy for calls); a failure of our own services (unavailable, a deadline) leaves the job due again in a few seconds
with the same key, and a daily spend limit (services.messaging.spend) when it frees. The outcome of a placed call arrives as its
call.completed or call.failed event (services.sdr.runs_outcomes).
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.message import Message

from contracts import runs
from core import metrics, standings, tenant
from core.background import Background
from core.errors import ServiceError
from core.grpc_server import Runtime, main
from core.ids import new_id, rfc3339, utcnow
from core.standings import Standings
from core.tenant import Tenant
from core.uow import UnitOfWork
from services.sdr import runs_domain as rules
from services.sdr import runs_outcomes
from services.sdr.ports import Made, Neighbours, Touch, grpc_neighbours
from services.sdr.records import ClaimedJob
from services.sdr.repository import SdrUnit, sql_unit
from services.sdr.runs_events import end_run, touch_completed, touch_failed
from services.sdr.schema import outbox
from switchboard.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)
TRANSIENT_DELAY = timedelta(seconds=5)  # a failure of our own services: the job is due again after this
HELD_DELAY = timedelta(minutes=1)  # a touch of a held business: looked at again after this
TRANSIENT_CODES = ("unavailable", "timeout", "internal_error", "conflict", "rate_limited")
TEXT_FAILURES = ("failed", "undelivered")


@dataclass
class Result:
    """What executing a claimed job did: the job's new values, an attempt to record, events to emit."""

    values: dict[str, Any]
    attempt: dict[str, Any] | None = None
    events: list[Message] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return self.values.get("status") in runs.JOB_ENDS


class Scheduler(Background):
    """Keeps up to `concurrency` touches executing at once: it claims more as soon as one ends (not once a whole
    round has), so a slow call does not hold back the touches due after it."""

    task_name = "runs-scheduler"

    def __init__(self, uow: UnitOfWork[SdrUnit], others: Neighbours, *, poll: float, lease: timedelta,
                 calls_in_flight: int, standings: Standings, concurrency: int = 20, batch: int = 50,
                 businesses: int = 20):
        self.uow, self.others = uow, others  # the calls and messaging services, through services.sdr.ports
        self.standings = standings  # may the run's business spend (core.standings)
        self.poll, self.lease, self.calls_in_flight = poll, lease, calls_in_flight
        self.concurrency, self.batch, self.businesses = concurrency, batch, businesses
        self.executing: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        try:
            while True:
                room = self.concurrency - len(self.executing)
                if room < max(1, self.concurrency // 4) and self.executing:  # claim in batches, not one by one
                    await asyncio.wait(self.executing, timeout=self.poll, return_when=asyncio.FIRST_COMPLETED)
                    continue
                try:
                    claimed = await self.claim(room)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the database may be away; try again shortly
                    log.warning("runs scheduler: %s", exc)
                    claimed = 0
                if claimed < room:  # nothing more is due now
                    await asyncio.sleep(self.poll)
        finally:
            for task in self.executing:
                task.cancel()  # their claims are leases: due again once they run out, with the same keys

    async def claim(self, room: int) -> int:
        """Claim up to `room` due jobs and start executing them; how many."""
        token = new_id()
        async with self.uow.read() as work:
            businesses = await work.touches.due_businesses(self.businesses)
        claimed = 0
        for business_id in businesses:
            if claimed >= room:
                break
            limit = min(room - claimed, self.batch)
            async with self.uow.transaction() as work:
                await work.touches.lock_business(business_id)
                calls_room = self.calls_in_flight - await work.touches.calls_in_flight(business_id)
                jobs = await work.touches.claim(business_id, "call", min(calls_room, limit), token, self.lease)
                jobs += await work.touches.claim(business_id, "sms", limit - len(jobs), token, self.lease)
                starting = {str(j.run_id) for j in jobs if j.run_status == runs.SCHEDULED}
                if starting:
                    await work.touches.start_runs(starting, utcnow())
            if (instruments := metrics.current()) is not None:
                claimed_at = utcnow()
                for job in jobs:
                    instruments.scheduler_lateness.record(max(0.0, (claimed_at - job.due_at).total_seconds()),
                                                          {"channel": job.channel})
            for job in jobs:
                task = asyncio.create_task(self.execute(job, token))
                self.executing.add(task)
                task.add_done_callback(self.executing.discard)
            claimed += len(jobs)
        return claimed

    async def execute(self, job: ClaimedJob, token: str) -> None:
        try:
            with tenant.acting_as(Tenant(account_id=str(job.account_id), business_ids=(str(job.business_id),))):
                if not await self.standings.is_good(str(job.business_id)):
                    result = _held(job)
                else:
                    result = await (self._call(job) if job.channel == "call" else self._text(job))
        except ServiceError as err:
            result = self._refused(job, err)
        except Exception as exc:  # noqa: BLE001 - a failure of ours: due again shortly, the same key
            log.warning("runs scheduler: job %s: %r", job.id, exc)
            result = _again(job, f"could not reach a service ({type(exc).__name__}); trying again")
        try:
            await self._settle(job, token, result)
        except Exception:  # noqa: BLE001 - the lease runs out and another round takes it again
            log.warning("runs scheduler: could not record job %s", job.id, exc_info=True)

    @staticmethod
    def _key(job: ClaimedJob) -> str:
        """The idempotency key of the job's next attempt: a retried execution of it places nothing new."""
        return f"communication-job:{job.id}:{job.attempts + 1}"

    def _touch(self, job: ClaimedJob, **extra: str | None) -> Touch:
        """The job's touch as the calls or messaging service places it: this attempt's key, the run as actor."""
        return Touch(str(job.agent_id), job.phone, self._key(job), "run", str(job.id),
                     _hours(job), lead_id=job.context.get("lead_id") or None,
                     timezone=job.timezone or None, external_ref=job.external_ref, touch_id=job.touch_id, **extra)

    async def _call(self, job: ClaimedJob) -> Result:
        context = dict(job.context)
        placed = await self.others.calls.place_call(self._touch(
            job, first_message=context.get("first_message") or None,
            context=json.dumps(context, separators=(",", ":"))))
        if not isinstance(placed, Made):
            return _deferred(job, placed)
        now, attempt = utcnow(), job.attempts + 1
        return Result({"status": runs.IN_PROGRESS, "attempts": attempt, "call_id": placed.id, "code": None,
                       "reason": f"call {attempt} placed", "updated_at": now},
                      attempt=_attempt(job, attempt, now, call_id=placed.id, status=runs.PLACED))

    async def _text(self, job: ClaimedJob) -> Result:
        placed = await self.others.messaging.place_text(self._touch(job), job.context["body"])
        if not isinstance(placed, Made):
            return _deferred(job, placed)
        sent, now = placed, utcnow()
        if sent.status in TEXT_FAILURES:  # a replayed key whose first send the provider refused
            values = {"status": runs.FAILED, "attempts": 1, "message_id": sent.id, "code": "sms_send_failed",
                      "reason": f"the text was not delivered ({sent.status})", "updated_at": now, "ended_at": now}
            return Result(values, events=[touch_failed(job, values)])
        values = {"status": runs.SUCCEEDED, "attempts": 1, "message_id": sent.id, "code": None,
                  "reason": f"the text was accepted ({sent.status})", "updated_at": now, "ended_at": now}
        return Result(values, events=[touch_completed(job, values, sent.status)])

    def _refused(self, job: ClaimedJob, err: ServiceError) -> Result:
        now = utcnow()
        if err.code in TRANSIENT_CODES:  # a daily spend limit says when it frees (Retry-After): due again then
            wait = int(err.details.get("retry_after") or 0)
            return _again(job, err.message, timedelta(seconds=wait) if wait else TRANSIENT_DELAY)
        if err.code in rules.REFUSAL_CODES:
            values = {"status": runs.REFUSED, "code": err.code, "reason": err.message, "updated_at": now,
                      "ended_at": now}
            return Result(values, events=[touch_failed(job, values)])
        if err.code == "call_failed":  # the provider refused the call: a failed attempt, retried by the policy
            attempt = job.attempts + 1
            end = rules.attempt_end("failed", attempt, runs.RetryPolicy.of(job.retry), False, now)
            values = {"status": end.job_status, "attempts": attempt, "code": err.code, "reason": err.message,
                      "updated_at": now}
            if end.retry_at:
                values["due_at"] = end.retry_at
            else:
                values["ended_at"] = now
            result = Result(values, attempt=_attempt(job, attempt, now, status="failed",
                                                     retry_eligible=end.retry_eligible, reason=err.message,
                                                     next_attempt_at=end.retry_at, ended_at=now))
            if result.ended:
                result.events.append(touch_failed(job, values))
            return result
        values = {"status": runs.FAILED, "code": err.code, "reason": err.message, "updated_at": now, "ended_at": now}
        return Result(values, events=[touch_failed(job, values)])

    async def _settle(self, job: ClaimedJob, token: str, result: Result) -> None:
        now = utcnow()
        async with self.uow.transaction() as work:
            if await work.touches.settle(str(job.id), token, result.values) is None:
                return  # the lease ran out and another scheduler took the job over
            if result.attempt:
                await work.touches.add_attempt(**result.attempt)
            for payload in result.events:
                work.emit(payload, str(job.business_id))
            if result.ended:
                await end_run(work, str(job.run_id), now)


def _hours(job: ClaimedJob) -> tuple[int, int] | None:
    """The business's own calling hours the job carries, or None when it saved no SDR config."""
    start, end = job.business_hours_start, job.business_hours_end
    return None if start is None or end is None else (start, end)


def _deferred(job: ClaimedJob, decision: common_pb2.ComplianceDecision) -> Result:
    not_before = decision.not_before.ToDatetime(tzinfo=UTC)
    values = {"status": runs.DEFERRED, "due_at": not_before, "rule": decision.rule, "code": decision.code or None,
              "reason": decision.message, "updated_at": utcnow()}
    return Result(values, events=[events_pb2.CommunicationTouchDeferred(
        communication_run_id=str(job.run_id), job_id=str(job.id), external_ref=job.external_ref,
        touch_id=job.touch_id, channel=job.channel, to=job.phone, rule=decision.rule, message=decision.message,
        not_before=rfc3339(not_before))])


def _attempt(job: ClaimedJob, attempt: int, now: datetime, **fields: Any) -> dict[str, Any]:
    """A call attempt of the job to record (schema.attempts' columns)."""
    return {"id": new_id(), "job_id": job.id, "run_id": job.run_id, "business_id": job.business_id,
            "attempt": attempt, "phone": job.phone, "created_at": now, **fields}


def _held(job: ClaimedJob) -> Result:
    """A touch of a business not in good standing (or whose standing is unknown) waits, placed once it is back."""
    return Result({"status": runs.PENDING, "due_at": utcnow() + HELD_DELAY, "updated_at": utcnow(),
                   "reason": "waiting: the workspace is not in good standing (paused, canceled or unpaid), or its "
                             "standing could not be confirmed"})


def _again(job: ClaimedJob, reason: str, delay: timedelta = TRANSIENT_DELAY) -> Result:
    return Result({"status": runs.PENDING, "due_at": utcnow() + delay, "reason": reason,
                   "updated_at": utcnow()})


def build(runtime: Runtime) -> None:
    s = runtime.settings
    uow = UnitOfWork(runtime.db, sql_unit(runtime.db), events=outbox)
    runtime.run(Scheduler(uow, grpc_neighbours(runtime.client),
                          poll=s.runs_poll_seconds, lease=timedelta(seconds=s.runs_lease_seconds),
                          standings=standings.heard_by(runtime),
                          calls_in_flight=s.runs_calls_in_flight, concurrency=s.runs_concurrency))
    runtime.consume(runs_outcomes.CONSUMER, runs_outcomes.CallOutcomes(uow).handle,
                    filter_subject=runs_outcomes.CALLS_SUBJECT, batch=250, batched=True)


if __name__ == "__main__":
    main("runs-scheduler")
