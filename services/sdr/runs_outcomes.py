"""Outcomes of the calls communication runs placed: each call.completed or call.failed event of a touch (one whose
data carries a touch_id) ends its attempt, and its job succeeds, is retried by the run's policy (due at the retry
time; the compliance decision places it in the callee's legal window when it runs), or fails. A fetched batch is
applied in one transaction, with the touches' jobs locked; an attempt ends once (only a `placed` attempt is
taken), so a redelivered event changes nothing.

A call may end before its scheduler has recorded the attempt (a short call, or a scheduler that died after the
provider took the call and whose job waits for its lease to run out). The outcome then finds its job still
`executing`, or `pending` again (the next scheduler asked while the dead one's placement was still under way and
was told to come back): it records the attempt itself and ends the lease, so the scheduler's late write of the
placement finds the claim gone and changes nothing (the touches repository's settle), and a later execution
finds the job ended instead of waiting for an outcome that came already. The touch and run events are emitted
in the same transaction.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts import runs
from core.bus import PermanentError, subject_for
from core.events import Envelope
from core.ids import new_id, utcnow
from core.uow import UnitOfWork
from services.sdr import runs_domain as rules
from services.sdr.records import JobInRun
from services.sdr.repository import SdrUnit
from services.sdr.runs_events import end_run, touch_completed, touch_failed

CONSUMER = "sdr-run-calls"
CALLS_SUBJECT = subject_for("call.*")
ENDS = ("call.completed", "call.failed")
# A job whose placed call may end before any scheduler recorded it: being executed, or due again after a
# scheduler was told the placement was still under way (the touch's calls are placed by its jobs alone).
UNRECORDED = (runs.EXECUTING, runs.PENDING)


@dataclass(frozen=True)
class Ended:
    """A touch's call that ended: how, when, and the touch it was for."""

    call_id: str
    outcome: str  # the call's status
    at: datetime
    touch: tuple[str, str, str]  # (business_id, external_ref, touch_id)


def ended_calls(messages: list[dict[str, Any]]) -> dict[str, Ended]:
    """The ended calls of touches in a batch of call.* events, by call id."""
    ended: dict[str, Ended] = {}
    for message in messages:
        try:
            event = Envelope.from_json(message)
        except ValueError as exc:
            raise PermanentError(str(exc)) from None
        data = event.data
        if (event.type in ENDS and event.business_id and data.get("touch_id") and data.get("call_id")
                and data.get("external_ref")):  # a touch's call (of a business: no job is without one)
            ended[data["call_id"]] = Ended(data["call_id"], data.get("status") or "failed", event.occurred_at,
                                           (event.business_id, data["external_ref"], data["touch_id"]))
    return ended


class CallOutcomes:
    def __init__(self, uow: UnitOfWork[SdrUnit]):
        self.uow = uow

    async def handle(self, messages: list[dict[str, Any]]) -> None:
        ended = ended_calls(messages)
        if not ended:
            return
        async with self.uow.transaction() as work:
            jobs = {(str(j.business_id), j.external_ref, j.touch_id): j
                    for j in await work.touches.jobs_of_touches(sorted({e.touch for e in ended.values()}))}
            recorded = await work.touches.attempts_of_calls(list(ended))
            finished_runs: set[str] = set()
            for call in ended.values():
                job = jobs.get(call.touch)
                if job is None:
                    continue
                attempt = recorded.get(call.call_id)
                if attempt is not None and attempt.status == runs.PLACED:
                    values = await self._end_attempt(work, job, call, attempt.attempt, str(attempt.id))
                elif attempt is None and job.status in UNRECORDED:  # before a scheduler wrote the placement
                    values = await self._end_attempt(work, job, call, job.attempts + 1, None)
                else:
                    continue  # a redelivered event: its attempt has ended
                if values["status"] in runs.JOB_ENDS:
                    finished_runs.add(str(job.run_id))
            for run_id in finished_runs:
                await end_run(work, run_id, utcnow())

    @staticmethod
    async def _end_attempt(work: SdrUnit, job: JobInRun, call: Ended, attempt: int,
                           attempt_id: str | None) -> dict[str, Any]:
        """End the job's `attempt` (recording it when its scheduler has not yet: attempt_id None) and move the
        job on by the run's policy, with the touch's event; the job's new values."""
        end = rules.attempt_end(call.outcome, attempt, runs.RetryPolicy.of(job.retry),
                                job.run_status == runs.CANCELED, call.at)
        ending = {"status": call.outcome, "retry_eligible": end.retry_eligible, "reason": end.reason,
                  "next_attempt_at": end.retry_at, "ended_at": call.at}
        values: dict[str, Any] = {"reason": end.reason, "updated_at": utcnow()}
        if attempt_id is None:
            await work.touches.add_attempt(id=new_id(), job_id=job.id, run_id=job.run_id, business_id=job.business_id,
                                    attempt=attempt, phone=job.phone, call_id=call.call_id, created_at=call.at,
                                    **ending)
            values.update(attempts=attempt, call_id=call.call_id, code=None, lease_token=None, lease_until=None)
        else:
            await work.touches.end_attempt(attempt_id, ending)
        if end.job_status == runs.RETRYING:
            values.update(due_at=end.retry_at, status=runs.JOB_PAUSED if job.run_status == runs.PAUSED
                          else runs.RETRYING)
        else:
            values.update(status=end.job_status, ended_at=call.at,
                          code=None if end.job_status == runs.SUCCEEDED else call.outcome)
        await work.touches.change_job(str(job.id), values)
        if end.job_status == runs.SUCCEEDED:
            work.emit(touch_completed(job, values, call.outcome), str(job.business_id))
        elif end.job_status == runs.FAILED:
            work.emit(touch_failed(job, values), str(job.business_id))
        return values
