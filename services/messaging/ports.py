"""What the messaging service needs of the other services, as ports: the number an agent texts from and who
answers a number (agents), the lead a text is for and whether a lead's address is known to the business (sdr), and
the business's name and owner (accounts). `grpc_neighbours` builds the adapters over their RPCs; a service-layer
test may give the use cases in-memory ones. Each call acts for the current caller (core.tenant); a refusal raises
core.errors.ServiceError with the owning service's code."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.messages import optional, timestamp
from core.rpc import Client, unless_not_found
from switchboard.v1 import accounts_pb2, agents_pb2, common_pb2, sdr_pb2

LEADS_BY_EMAIL = 100  # leads looked at for an address (its owner's among them)


@dataclass(frozen=True)
class Sender:
    """The agent a text goes out from: its business and its number (None until it has one)."""

    business_id: str
    phone_number: str | None


@dataclass(frozen=True)
class NumberRoute:
    business_id: str
    agent_id: str | None


@dataclass(frozen=True)
class Lead:
    """What compliance and threading read of a lead."""

    id: str
    business_id: str
    state: str | None
    status: str
    converted_at: datetime | None = None  # a purchase, and the latest inquiry: the national registry's exemptions
    last_inbound_at: datetime | None = None


@dataclass(frozen=True)
class Owner:
    email: str
    email_confirmed: bool
    business_name: str


class Agents(Protocol):
    async def sender(self, agent_id: str) -> Sender: ...

    async def route(self, phone_number: str) -> NumberRoute | None:
        """None when no business holds the number."""


class Leads(Protocol):
    async def lead(self, lead_id: str) -> Lead: ...

    async def lead_with_phone(self, business_id: str, phone: str) -> Lead | None: ...

    async def is_known_email(self, business_id: str, email: str) -> bool:
        """Whether a lead of the business has this address as known (given by the person on an inbound call): not
        merely a lead's."""


class Workspaces(Protocol):
    async def business_name(self, business_id: str) -> str: ...

    async def owner(self, business_id: str) -> Owner: ...


@dataclass(frozen=True)
class Neighbours:
    agents: Agents
    leads: Leads
    workspaces: Workspaces


def _lead(message: sdr_pb2.Lead) -> Lead:
    return Lead(message.id, message.business_id, optional(message, "state"), message.status,
                timestamp(message, "converted_at"), timestamp(message, "last_inbound_at"))


class GrpcAgents:
    def __init__(self, client: Client):
        self.client = client

    async def sender(self, agent_id: str) -> Sender:
        profile = await self.client.GetCallingProfile(agents_pb2.GetCallingProfileRequest(agent_id=agent_id))
        return Sender(profile.business_id, optional(profile, "phone_number"))

    async def route(self, phone_number: str) -> NumberRoute | None:
        found = await unless_not_found(self.client.RouteNumber(agents_pb2.RouteNumberRequest(phone_number=phone_number)))
        return NumberRoute(found.business_id, optional(found, "agent_id")) if found is not None else None


class GrpcLeads:
    def __init__(self, client: Client):
        self.client = client

    async def lead(self, lead_id: str) -> Lead:
        return _lead(await self.client.GetLead(sdr_pb2.GetLeadRequest(id=lead_id)))

    async def lead_with_phone(self, business_id: str, phone: str) -> Lead | None:
        found = await self.client.FindLeadByPhone(sdr_pb2.FindLeadByPhoneRequest(business_id=business_id, phone=phone))
        return _lead(found.lead) if found.HasField("lead") else None

    async def is_known_email(self, business_id: str, email: str) -> bool:
        found = await self.client.ListLeads(sdr_pb2.ListLeadsRequest(
            email=email, page=common_pb2.PageRequest(limit=LEADS_BY_EMAIL)))
        return any(lead.business_id == business_id and lead.HasField("email_known_at") for lead in found.leads)


class GrpcWorkspaces:
    def __init__(self, client: Client):
        self.client = client

    async def business_name(self, business_id: str) -> str:
        workspace: accounts_pb2.Workspace = await self.client.GetWorkspace(accounts_pb2.GetWorkspaceRequest(
            id=business_id))
        return workspace.name

    async def owner(self, business_id: str) -> Owner:
        found = await self.client.GetWorkspaceOwner(accounts_pb2.GetWorkspaceRequest(id=business_id))
        return Owner(found.email, found.email_confirmed, found.business_name)


def grpc_neighbours(client: Callable[[str], Client]) -> Neighbours:
    """The adapters over `client(name)`, a client of each service named (`Runtime.client`)."""
    return Neighbours(GrpcAgents(client("agents")), GrpcLeads(client("sdr")), GrpcWorkspaces(client("accounts")))
