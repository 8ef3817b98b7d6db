"""The communication runs pages: a business's runs (newest first, cursor-paged) with their jobs counted by status,
and one run's page: its jobs (one per touch) with each one's call attempts and what last happened to it, and the
pause, resume or cancel its state allows. Every read and action is the RPC the `/api/v1/communication-runs` routes
make, as the signed-in owner."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import grpc
from aiohttp import web

from contracts.runs import RUN_MOVES
from core.errors import not_found
from core.grpc_errors import from_rpc_error
from core.rpc import AsCaller
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.messages_page import is_id, listed_page
from gateway.dashboard.pages import RUNS_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import common_pb2, sdr_pb2

RUNS_SHOWN, JOBS_SHOWN, ATTEMPTS_SHOWN = 20, 100, 100
CHANGE_PATH = f"{RUNS_PATH}/change"
# What each action's button says of itself.
ACTION_TEXTS = {"pause": "Pause", "resume": "Resume", "cancel": "Cancel (final)"}


def sdr(request: web.Request, principal: Principal) -> AsCaller:
    return deps(request).clients["sdr"].as_caller(principal.tenant)


def counted(run: sdr_pb2.CommunicationRun) -> str:
    """The run's jobs by status, those it has any of."""
    return ", ".join(f"{n} {status}" for status, n in sorted(run.jobs.items()) if n) or "no jobs"


async def runs(request: web.Request) -> web.StreamResponse:
    _, principal = await signed_in(request)
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(request.query.get("business_id", ""), businesses)
    status, error, listed, cursor = 200, None, [], ""
    try:
        reply = await sdr(request, principal).ListRuns(sdr_pb2.ListRunsRequest(
            business_id=business_id, page=listed_page(request, RUNS_SHOWN)))
        listed, cursor = [{"run": r, "counted": counted(r)} for r in reply.runs], reply.page.next_cursor
    except grpc.aio.AioRpcError as exc:  # a cursor of no list of this page's
        err = from_rpc_error(exc)
        status, error = err.http_status, err.message
    return page("runs.html", status, title="Communication runs", active="runs", businesses=businesses,
                business_id=business_id, runs=listed, cursor=cursor,
                query={**request.query, "business_id": business_id}, error=error, notice=None)


async def _render(request: web.Request, session: str, principal: Principal, run_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None) -> web.Response:
    shown: dict[str, Any] = {"title": "Communication run", "active": "runs", "form_token": form_token(session), "run": None,
             "counted": "", "jobs": [], "actions": [], "cursor": "", "query": dict(request.query), "notice": notice}
    if not is_id(run_id):
        return page("run.html", 404, **shown, error=not_found("communication run").message)
    client = sdr(request, principal)
    try:
        [run] = (await client.ListRuns(sdr_pb2.ListRunsRequest(id=run_id))).runs
        jobs = await client.ListJobs(sdr_pb2.ListJobsRequest(communication_run_id=run_id,
                                                             page=listed_page(request, JOBS_SHOWN)))
        attempts = await client.ListAttempts(sdr_pb2.ListAttemptsRequest(
            sequence_id=run_id, page=common_pb2.PageRequest(limit=ATTEMPTS_SHOWN)))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("run.html", err.http_status, **{**shown, "notice": None}, error=err.message)
    of_job = defaultdict(list)
    for attempt in sorted(attempts.attempts, key=lambda a: a.attempt):
        of_job[attempt.job_id].append(attempt)
    return page("run.html", status, **{
        **shown, "title": f"Run {run.external_ref}", "run": run, "counted": counted(run),
        "jobs": [{"job": j, "attempts": of_job.get(j.id, [])} for j in jobs.jobs],
        "actions": [(a, ACTION_TEXTS[a]) for a, (applies, _) in RUN_MOVES.items() if run.status in applies],
        "cursor": jobs.page.next_cursor}, error=error)


async def run_page(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.match_info["id"])


async def change(request: web.Request) -> web.StreamResponse:
    """Pause, resume or cancel a run: the RPC of PATCH /api/v1/communication-runs, as the signed-in owner."""
    async def act(principal: Principal, form: Form) -> dict[str, Any]:
        run = await sdr(request, principal).ChangeRun(sdr_pb2.ChangeRunRequest(id=str(form.get("id", "")),
                                                                               action=str(form.get("action", ""))))
        return {"notice": f"The run is {run.status} now."}
    return await pages.business_form(request, _render, "changed", act, field="id")


def add_routes(app: web.Application) -> None:
    app.router.add_get(RUNS_PATH, runs)
    app.router.add_post(CHANGE_PATH, same_site_form(change))
    app.router.add_get(f"{RUNS_PATH}/{{id}}", run_page)
