"""Outcomes of the calls communication runs placed: each call.completed or call.failed event of a touch (one whose
data carries a touch_id) ends its attempt, and its job succeeds, is retried by the run's policy (due at the retry
time; the compliance decision places it in the callee's legal window when it runs), or fails. A fetched batch is
applied in one transaction; an attempt ends once (only a `placed` attempt is taken), so a redelivered event changes
nothing. The touch and run events are emitted in the same transaction.
"""
from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from core.bus import PermanentError, subject_for
from core.events import Envelope
from core.ids import utcnow
from core.outbox import add_event
from services.sdr import runs_domain as rules
from services.sdr import runs_store as store
from services.sdr.runs_events import end_run, touch_completed, touch_failed
from services.sdr.store import outbox

CONSUMER = "sdr-run-calls"
CALLS_SUBJECT = subject_for("call.*")
ENDS = ("call.completed", "call.failed")


class CallOutcomes:
    def __init__(self, engine: AsyncEngine):
        self.engine = engine

    async def handle(self, messages: list[dict]) -> None:
        ended: dict[str, tuple[str, object]] = {}
        for message in messages:
            try:
                event = Envelope.from_json(message)
            except ValueError as exc:
                raise PermanentError(str(exc)) from None
            if event.type in ENDS and event.data.get("touch_id") and event.data.get("call_id"):
                ended[event.data["call_id"]] = (event.data.get("status") or "failed", event.occurred_at)
        if not ended:
            return
        async with self.engine.begin() as conn:
            finished_runs = set()
            for row in await store.attempts_of_calls(conn, list(ended)):
                outcome, at = ended[str(row.call_id)]
                end = rules.attempt_end(outcome, row.attempt, rules.RetryPolicy.of(row.retry),
                                        row.run_status == rules.CANCELED, at)
                await store.end_attempt(conn, str(row.attempt_id), {
                    "status": outcome, "retry_eligible": end.retry_eligible, "reason": end.reason,
                    "next_attempt_at": end.retry_at, "ended_at": at})
                values = {"reason": end.reason, "updated_at": utcnow()}
                if end.job_status == rules.RETRYING:
                    values.update(due_at=end.retry_at, status=rules.JOB_PAUSED if row.run_status == rules.PAUSED
                                  else rules.RETRYING)
                else:
                    values.update(status=end.job_status, ended_at=at,
                                  code=None if end.job_status == rules.SUCCEEDED else outcome)
                await store.update_job(conn, str(row.id), values)
                if end.job_status == rules.SUCCEEDED:
                    await add_event(conn, outbox, touch_completed(row, values, outcome), str(row.business_id))
                elif end.job_status == rules.FAILED:
                    await add_event(conn, outbox, touch_failed(row, values), str(row.business_id))
                if end.job_status in rules.JOB_ENDS:
                    finished_runs.add(str(row.run_id))
            for run_id in finished_runs:
                await end_run(conn, run_id, utcnow())
