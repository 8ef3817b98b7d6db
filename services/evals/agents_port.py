"""What the evals service needs of the agents service, as a port: an agent's business and provider assistant
(asked as the caller, so an agent of another business reads as not found). `GrpcAgents` is the adapter over the
agents service's GetAgent."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core.rpc import Client
from switchboard.v1 import agents_pb2


@dataclass(frozen=True)
class EvaluatedAgent:
    business_id: str
    provider_assistant_id: str


class AgentsPort(Protocol):
    async def agent(self, agent_id: str) -> EvaluatedAgent: ...


class GrpcAgents:
    def __init__(self, client: Client):
        self.client = client

    async def agent(self, agent_id: str) -> EvaluatedAgent:
        found = await self.client.GetAgent(agents_pb2.GetAgentRequest(id=agent_id))
        return EvaluatedAgent(found.business_id, found.provider_assistant_id)
