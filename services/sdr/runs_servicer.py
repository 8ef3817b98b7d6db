"""The communication runs' RPCs of the Sdr gRPC service: requests into services.sdr.runs_service, records into
replies."""
from __future__ import annotations

from contracts import runs as runs_contract
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page
from services.sdr import runs_domain as rules
from services.sdr.records import ListedAttempt, ListedJob
from services.sdr.runs_service import ATTEMPTS_PAGE, JOBS_PAGE, RUNS_PAGE, Runs, RunView, parse_body
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc

JOB_TEXT = ("timezone", "rule", "code", "reason", "call_id", "message_id")


def run_message(view: RunView) -> sdr_pb2.CommunicationRun:
    row = view.row
    msg = sdr_pb2.CommunicationRun(
        id=str(row.id), business_id=str(row.business_id), external_ref=row.external_ref, status=row.status,
        agent_id=str(row.agent_id), touches=row.touches, retry=struct(row.retry), replayed=view.replayed,
        jobs={s: view.jobs.get(s, 0) for s in runs_contract.JOB_STATES})
    for name in ("created_at", "updated_at", "started_at", "ended_at"):
        set_timestamp(msg, name, getattr(row, name))
    return msg


def job_message(row: ListedJob) -> sdr_pb2.CommunicationJob:
    msg = sdr_pb2.CommunicationJob(
        id=str(row.id), communication_run_id=str(row.run_id), business_id=str(row.business_id),
        external_ref=row.external_ref, touch_id=row.touch_id, touch_index=row.touch_index, channel=row.channel,
        phone=row.phone, agent_id=str(row.agent_id), context=struct(row.context), status=row.status,
        attempts=row.attempts)
    for name in JOB_TEXT:
        if getattr(row, name) is not None:
            setattr(msg, name, str(getattr(row, name)))
    set_timestamp(msg, "scheduled_at", row.scheduled_at)
    if row.status not in runs_contract.JOB_ENDS:
        set_timestamp(msg, "planned_at", row.due_at)
    for name in ("created_at", "updated_at", "ended_at"):
        set_timestamp(msg, name, getattr(row, name))
    return msg


def attempt_message(row: ListedAttempt) -> sdr_pb2.CommunicationAttempt:
    msg = sdr_pb2.CommunicationAttempt(
        id=str(row.id), sequence_id=str(row.run_id), job_id=str(row.job_id), touch_id=row.touch_id,
        external_ref=row.external_ref, attempt=row.attempt, call_id=str(row.call_id) if row.call_id else None,
        phone=row.phone, status=row.status, retry_eligible=row.retry_eligible, reason=row.reason)
    for name in ("next_attempt_at", "created_at", "ended_at"):
        set_timestamp(msg, name, getattr(row, name))
    return msg


def planned_message(planned: rules.Planned) -> sdr_pb2.PlannedTouch:
    d = planned.decision
    msg = sdr_pb2.PlannedTouch(index=planned.touch.index, touch_id=planned.touch.touch_id,
                               channel=planned.touch.channel, phone=planned.touch.phone, outcome=d.outcome,
                               rule=d.rule, code=d.code, message=d.message)
    set_timestamp(msg, "requested_at", planned.touch.scheduled_at)
    set_timestamp(msg, "planned_at", planned.planned_at)
    return msg


def problem_message(p: rules.Problem) -> sdr_pb2.RunProblem:
    return sdr_pb2.RunProblem(index=p.index, touch_id=p.touch_id, field=p.field, message=p.message)


class RunsServicer(sdr_pb2_grpc.SdrServicer):
    """Validating, previewing, creating and following communication runs, over `runs`."""

    def __init__(self, runs: Runs):
        self.runs = runs

    async def ValidateRun(self, request: sdr_pb2.RunRequest, context: Context) -> sdr_pb2.RunValidation:
        checked, problems, count = await self.runs.check(parse_body(request.run_json))
        return sdr_pb2.RunValidation(valid=checked is not None, touches=count,
                                     problems=[problem_message(p) for p in problems])

    async def PreviewRun(self, request: sdr_pb2.RunRequest, context: Context) -> sdr_pb2.RunPreview:
        planned = await self.runs.preview(parse_body(request.run_json))
        summary = rules.plan_summary(planned)
        reply = sdr_pb2.RunPreview(touches=summary["touches"], by_channel=summary["by_channel"],
                                   by_outcome=summary["by_outcome"], planned=[planned_message(p) for p in planned])
        set_timestamp(reply, "first_planned_at", summary["first_planned_at"])
        set_timestamp(reply, "last_planned_at", summary["last_planned_at"])
        return reply

    async def CreateRun(self, request: sdr_pb2.RunRequest, context: Context) -> sdr_pb2.CommunicationRun:
        return run_message(await self.runs.create(parse_body(request.run_json), optional(request, "idempotency_key")))

    async def ListRuns(self, request: sdr_pb2.ListRunsRequest, context: Context) -> sdr_pb2.ListRunsReply:
        paged, counts = await self.runs.list(optional(request, "id"), optional(request, "external_ref"),
                                             optional(request, "business_id"), Page.of(request.page, *RUNS_PAGE))
        return sdr_pb2.ListRunsReply(runs=[run_message(RunView(r, counts.get(str(r.id), {}))) for r in paged.rows],
                                     page=paged.info())

    async def ChangeRun(self, request: sdr_pb2.ChangeRunRequest, context: Context) -> sdr_pb2.CommunicationRun:
        return run_message(await self.runs.change(request.id, request.action))

    async def ListJobs(self, request: sdr_pb2.ListJobsRequest, context: Context) -> sdr_pb2.ListJobsReply:
        paged = await self.runs.jobs(optional(request, "communication_run_id"), optional(request, "channel"),
                                     optional(request, "status"), optional(request, "id"),
                                     Page.of(request.page, *JOBS_PAGE))
        return sdr_pb2.ListJobsReply(jobs=[job_message(r) for r in paged.rows], page=paged.info())

    async def ListAttempts(self, request: sdr_pb2.ListAttemptsRequest, context: Context) -> sdr_pb2.ListAttemptsReply:
        paged = await self.runs.attempts(optional(request, "sequence_id"), optional(request, "status"),
                                         Page.of(request.page, *ATTEMPTS_PAGE))
        return sdr_pb2.ListAttemptsReply(attempts=[attempt_message(r) for r in paged.rows], page=paged.info())
