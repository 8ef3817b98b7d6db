"""The events of communication runs (core.events: communication.touch_completed, touch_failed, touch_deferred and
run_ended), built from a job with its run's external_ref (the scheduler's claimed jobs and the outcomes' jobs
both are one: services.sdr.records.ListedJob) and the values just written to it."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from contracts import runs
from services.sdr.records import ListedJob, Run
from services.sdr.repository import SdrUnit
from switchboard.v1 import events_pb2


def touch_completed(job: ListedJob, values: dict[str, Any], outcome: str) -> events_pb2.CommunicationTouchCompleted:
    call_id, message_id = values.get("call_id", job.call_id), values.get("message_id", job.message_id)
    return events_pb2.CommunicationTouchCompleted(
        communication_run_id=str(job.run_id), job_id=str(job.id), external_ref=job.external_ref,
        touch_id=job.touch_id, channel=job.channel, to=job.phone, outcome=outcome,
        attempts=values.get("attempts", job.attempts), call_id=str(call_id) if call_id else None,
        message_id=str(message_id) if message_id else None)


def touch_failed(job: ListedJob, values: dict[str, Any]) -> events_pb2.CommunicationTouchFailed:
    call_id = values.get("call_id", job.call_id)
    return events_pb2.CommunicationTouchFailed(
        communication_run_id=str(job.run_id), job_id=str(job.id), external_ref=job.external_ref,
        touch_id=job.touch_id, channel=job.channel, to=job.phone, status=values["status"],
        code=values.get("code") or "", reason=values.get("reason") or "", attempts=values.get("attempts", job.attempts),
        call_id=str(call_id) if call_id else None)


def run_ended(row: Run, counts: dict[str, int]) -> events_pb2.CommunicationRunEnded:
    return events_pb2.CommunicationRunEnded(
        communication_run_id=str(row.id), external_ref=row.external_ref, status=row.status, touches=row.touches,
        succeeded=counts.get(runs.SUCCEEDED, 0), failed=counts.get(runs.FAILED, 0),
        refused=counts.get(runs.REFUSED, 0), canceled=counts.get(runs.JOB_CANCELED, 0))


async def end_run(work: SdrUnit, run_id: str, now: datetime) -> None:
    """Complete the run if its last job just ended, with its event."""
    ended = await work.touches.end_run_if_done(run_id, now)
    if ended is not None:
        counts = (await work.runs.job_counts([run_id])).get(run_id, {})
        work.emit(run_ended(ended, counts), str(ended.business_id))
