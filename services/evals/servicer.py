"""Evals gRPC servicer: requests into the scenario use cases (services.evals.service), results into replies."""
from __future__ import annotations

from google.protobuf import json_format

from core.grpc_server import Runtime
from core.messages import optional, set_timestamp, struct
from core.pagination import Page
from providers.voice.client import VapiClient
from services.evals.service import Scenarios
from switchboard.v1 import evals_pb2, evals_pb2_grpc

EVALS_PAGE = (50, 100)


def scenario_message(row, with_messages: bool = True) -> evals_pb2.EvalScenario:
    s = evals_pb2.EvalScenario(id=str(row.id), agent_id=str(row.agent_id), business_id=str(row.business_id),
                               provider_eval_id=row.provider_eval_id, name=row.name, description=row.description)
    if with_messages:
        s.messages.extend(struct(turn) for turn in row.messages)
    set_timestamp(s, "created_at", row.created_at)
    set_timestamp(s, "updated_at", row.updated_at)
    return s


def _turns(request) -> list[dict]:
    return [json_format.MessageToDict(turn) for turn in request.messages]


class EvalsServicer(evals_pb2_grpc.EvalsServicer):
    def __init__(self, scenarios: Scenarios):
        self.scenarios = scenarios

    async def CreateEval(self, request, context):
        return scenario_message(await self.scenarios.create(
            request.business_id, request.agent_id, request.name, optional(request, "description"), _turns(request)))

    async def ListEvals(self, request, context):
        paged = await self.scenarios.list(optional(request, "agent_id"), Page.of(request.page, *EVALS_PAGE))
        return evals_pb2.ListEvalsReply(evals=[scenario_message(r, with_messages=False) for r in paged.rows],
                                        page=paged.info())

    async def GetEval(self, request, context):
        return scenario_message(await self.scenarios.get(request.id))

    async def UpdateEval(self, request, context):
        return scenario_message(await self.scenarios.update(
            request.id, optional(request, "name"), optional(request, "description"),
            _turns(request) if request.messages_given else None))

    async def DeleteEval(self, request, context):
        return evals_pb2.DeleteEvalReply(success=True, id=await self.scenarios.delete(request.id))


def build(runtime: Runtime) -> EvalsServicer:
    s = runtime.settings
    voice = VapiClient(s.voice_api_url, s.voice_api_key.reveal(), timeout=s.voice_timeout_seconds)
    runtime.on_stop.append(voice.close)
    return EvalsServicer(Scenarios(runtime.engine, voice, runtime.client("agents")))
