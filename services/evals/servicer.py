"""Evals gRPC servicer: requests into the scenario use cases (services.evals.service), results into replies."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from google.protobuf import json_format

from core import standings
from core.errors import invalid
from core.grpc_server import Runtime
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page
from core.uow import UnitOfWork
from providers import configured
from providers.voice.port import Conversation
from services.evals.agents_port import GrpcAgents
from services.evals.export_pages import EvalsExport
from services.evals.records import ListedScenario, Run, Scenario
from services.evals.repository import EvalsUnit
from services.evals.run_service import RunClaims, Runs
from services.evals.service import Scenarios
from switchboard.v1 import common_pb2, evals_pb2, evals_pb2_grpc

EVALS_PAGE = (50, 100)


def scenario_message(row: ListedScenario) -> evals_pb2.EvalScenario:
    """A scenario; with its turns when it has them (a listed one has not)."""
    s = evals_pb2.EvalScenario(id=row.id, agent_id=row.agent_id, business_id=row.business_id,
                               provider_eval_id=row.provider_eval_id, name=row.name, description=row.description)
    if isinstance(row, Scenario):
        s.messages.extend(struct(turn) for turn in row.messages)
    set_timestamp(s, "created_at", row.created_at)
    set_timestamp(s, "updated_at", row.updated_at)
    return s


def run_message(row: Run) -> evals_pb2.EvalRun:
    run = evals_pb2.EvalRun(run_id=row.id, provider_run_id=row.provider_run_id, status=row.status,
                            passed=row.passed, eval_id=row.eval_id, name=row.eval_name,
                            agent_id=row.agent_id, ended_reason=row.ended_reason, trigger=row.trigger,
                            channel=row.channel)
    run.results.extend(struct(result) for result in row.results)
    # A run recorded before its calls carried the stub they got shows result null, as a call given none does.
    run.stubbed_tool_calls.extend(struct({"result": None, **call}) for call in row.stubbed_tool_calls)
    set_timestamp(run, "created_at", row.created_at)
    set_timestamp(run, "ended_at", row.ended_at)
    return run


def _turns(request: evals_pb2.CreateEvalRequest | evals_pb2.UpdateEvalRequest) -> list[dict[str, Any]]:
    return [json_format.MessageToDict(turn) for turn in request.messages]


class EvalsServicer(evals_pb2_grpc.EvalsServicer):
    def __init__(self, scenarios: Scenarios, runs: Runs, export: EvalsExport):
        self.scenarios = scenarios
        self.runs = runs
        self.export = export

    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)

    async def CreateEval(self, request: evals_pb2.CreateEvalRequest, context: Context) -> evals_pb2.EvalScenario:
        return scenario_message(await self.scenarios.create(
            request.business_id, request.agent_id, request.name, optional(request, "description"), _turns(request)))

    async def ListEvals(self, request: evals_pb2.ListEvalsRequest, context: Context) -> evals_pb2.ListEvalsReply:
        paged = await self.scenarios.list(optional(request, "agent_id"), Page.of(request.page, *EVALS_PAGE))
        return evals_pb2.ListEvalsReply(evals=[scenario_message(r) for r in paged.rows],
                                        page=paged.info())

    async def GetEval(self, request: evals_pb2.GetEvalRequest, context: Context) -> evals_pb2.EvalScenario:
        return scenario_message(await self.scenarios.get(request.id))

    async def UpdateEval(self, request: evals_pb2.UpdateEvalRequest, context: Context) -> evals_pb2.EvalScenario:
        return scenario_message(await self.scenarios.update(
            request.id, optional(request, "name"), optional(request, "description"),
            _turns(request) if request.messages_given else None))

    async def DeleteEval(self, request: evals_pb2.DeleteEvalRequest, context: Context) -> evals_pb2.DeleteEvalReply:
        return evals_pb2.DeleteEvalReply(success=True, id=await self.scenarios.delete(request.id))

    async def RunEval(self, request: evals_pb2.RunEvalRequest, context: Context) -> evals_pb2.RunEvalReply:
        wait = request.wait if request.HasField("wait") else True
        max_wait = optional(request, "max_wait_ms")
        if request.HasField("eval_id") == request.HasField("agent_id"):
            raise invalid("send exactly one of eval_id (one scenario) and agent_id (every scenario of the agent)")
        if request.HasField("eval_id"):
            return evals_pb2.RunEvalReply(run=run_message(await self.runs.run_scenario(request.eval_id, wait,
                                                                                        max_wait)))
        fan = await self.runs.run_agent(request.agent_id, wait, max_wait)
        return evals_pb2.RunEvalReply(fan_out=evals_pb2.EvalFanOut(
            total=fan.total, completed=fan.completed, passed=fan.passed, failed=fan.failed,
            results=[run_message(r) for r in fan.runs]))

    async def GetEvalRuns(self, request: evals_pb2.GetEvalRunsRequest, context: Context) -> evals_pb2.EvalRuns:
        given = [f for f in ("run_id", "provider_run_id", "agent_id") if request.HasField(f)]
        if len(given) != 1:
            raise invalid("send exactly one of run_id, provider_run_id and agent_id")
        if request.HasField("agent_id"):
            rows = await self.runs.of_agent(request.agent_id)
        else:
            rows = [await self.runs.get(optional(request, "run_id"), optional(request, "provider_run_id"))]
        return evals_pb2.EvalRuns(runs=[run_message(r) for r in rows])

    async def GateEval(self, request: evals_pb2.GateEvalRequest, context: Context) -> evals_pb2.EvalGateOutcome:
        targets = [(t.channel, Conversation(**json_format.MessageToDict(t.overrides))) for t in request.targets]
        batch_id, verdict = await self.runs.gate(request.agent_id, request.provider_assistant_id, targets,
                                                 request.max_wait_ms)
        return evals_pb2.EvalGateOutcome(
            status=verdict.status, batch_id=batch_id, total=verdict.total, completed=verdict.completed,
            passed=verdict.passed, failed=verdict.failed, runs=[run_message(r) for r in verdict.shown])


def build(runtime: Runtime) -> EvalsServicer:
    s = runtime.settings
    voice = runtime.closing(configured.voice(s, server_messages=False))  # runs evals: no calls, no numbers
    agents = GrpcAgents(runtime.client("agents"))
    uow = UnitOfWork(runtime.db, EvalsUnit)
    lease = timedelta(seconds=s.eval_run_lease_seconds)
    runs = Runs(uow, voice, agents, s.eval_run_concurrency, s.eval_poll_seconds, lease=lease,
                standings=standings.heard_by(runtime))
    runtime.on_stop.append(runs.stop)  # stop hooks run last added first: before the voice client closes
    runtime.run(RunClaims(runs, lease.total_seconds() / 3))  # stopped before `runs`: it claims nothing released
    return EvalsServicer(Scenarios(uow, voice, agents), runs, EvalsExport(uow, scenario_message, run_message))
