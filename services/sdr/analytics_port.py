"""What the analytics reports and the connector's business info need of other services, as a port: the caller's
businesses with their time zones and their workspaces' details (accounts), their agents (agents) and their calls
counted (calls). `GrpcAnalyticsSources` is the adapter over those services' RPCs; a test gives the reports
(services.sdr.analytics_service) an in-memory one instead, so composing a report needs none of them."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from core import aggregates
from core.messages import optional
from core.rpc import Client
from switchboard.v1 import accounts_pb2, agents_pb2, common_pb2


@dataclass(frozen=True)
class Business:
    business_id: str
    name: str
    timezone: str  # IANA, the one its days and weeks are cut in


@dataclass(frozen=True)
class Agent:
    id: str
    name: str
    business_id: str
    phone_number: str | None  # its first number; None without one


@dataclass(frozen=True)
class Workspace:
    """A business's workspace as the connector's business info shows it."""

    id: str
    name: str
    status: str  # its lifecycle state
    subscription_status: str
    timezone: str
    created_at: datetime


class AnalyticsSources(Protocol):
    """Each call acts for the current caller (core.tenant), as the other service checks it; a refusal raises
    core.errors.ServiceError with that service's code."""

    async def businesses(self) -> list[Business]:
        """The caller's businesses (a key bound to one: that one), in the order they were created."""

    async def agents(self) -> list[Agent]:
        """Every agent of the caller's businesses."""

    async def agent(self, agent_id: str) -> Agent | None:
        """One of the caller's agents; None when it is not one of theirs."""

    async def workspace(self, business_id: str) -> Workspace:
        """One of the caller's businesses' workspace."""

    async def call_counts(self, query: aggregates.Query, agent_id: str | None = None) -> list[common_pb2.AggregateRow]:
        """The calls of the query's businesses in its window (of one agent when named), counted per group
        (core.aggregates): how many, how many completed, their duration."""


def _agent(a: agents_pb2.AgentSummary) -> Agent:
    return Agent(a.id, a.name, a.business_id, optional(a, "phone_number"))


class GrpcAnalyticsSources:
    """`AnalyticsSources` over the accounts, agents and calls services' RPCs."""

    def __init__(self, accounts: Client, agents: Client, calls: Client):
        self._accounts, self._agents, self._calls = accounts, agents, calls

    async def businesses(self) -> list[Business]:
        reply = await self._accounts.BusinessZones(accounts_pb2.BusinessZonesRequest())
        return [Business(b.business_id, b.name, b.timezone) for b in reply.businesses]

    async def agents(self) -> list[Agent]:
        reply = await self._agents.AgentDirectory(agents_pb2.AgentDirectoryRequest())
        return [_agent(a) for a in reply.agents]

    async def agent(self, agent_id: str) -> Agent | None:
        reply = await self._agents.LookupAgents(agents_pb2.LookupAgentsRequest(ids=[agent_id]))
        return next((_agent(a) for a in reply.agents), None)

    async def workspace(self, business_id: str) -> Workspace:
        w = await self._accounts.GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=business_id))
        return Workspace(w.id, w.name, w.lifecycle_state, w.subscription_status, w.timezone,
                         w.created_at.ToDatetime(tzinfo=UTC))

    async def call_counts(self, query: aggregates.Query, agent_id: str | None = None) -> list[common_pb2.AggregateRow]:
        return list((await self._calls.AggregateCalls(aggregates.request_of(query, agent_id))).rows)
