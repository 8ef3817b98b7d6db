"""What the sdr service (leads, communication runs, the sales pipeline, bookings) needs of the other services, as
ports: the business's agents and their numbers (agents), its owner and time zone (accounts), callees' compliance
standings, emails and texts (messaging), and calls (calls). `grpc_neighbours` builds the adapters over their RPCs.
Each call acts for the current caller (core.tenant); a refusal raises core.errors.ServiceError with the owning
service's code. A touch that compliance defers answers the shared ComplianceDecision message (its rule, code,
message and `not_before`). The analytics reports' sources have their own port (services.sdr.analytics_port)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Protocol

from core.compliance import decision as compliance
from core.errors import ServiceError
from core.messages import business_hours, optional, timestamp
from core.rpc import Client
from switchboard.v1 import accounts_pb2, agents_pb2, calls_pb2, common_pb2, messaging_pb2

AGENTS_LISTED = 100  # a business's agents looked at when one is picked to call or text


@dataclass(frozen=True)
class Owner:
    account_id: str
    email: str
    business_name: str


@dataclass(frozen=True)
class Made:
    """A call, text or email another service made: its id and its status then."""

    id: str
    status: str


@dataclass(frozen=True)
class Touch:
    """A call or text to place for a lead or a run's touch, with the idempotency key of this attempt and the
    compliance inputs (the business's calling hours; the callee's zone when the caller knows it)."""

    agent_id: str
    to: str
    key: str
    actor: str
    reference: str
    hours: tuple[int, int] | None
    lead_id: str | None = None
    timezone: str | None = None
    external_ref: str | None = None
    touch_id: str | None = None
    first_message: str | None = None
    context: str | None = None


Standings = dict[str, tuple[compliance.Standing, tuple[compliance.Counted, ...]]]
Placed = Made | common_pb2.ComplianceDecision  # made, or deferred by compliance (nothing placed)


class Agents(Protocol):
    async def numbers(self, business_id: str) -> dict[str, str | None]:
        """Each of the business's agents (the first AGENTS_LISTED) with its number (None without one)."""

    async def name(self, agent_id: str, business_id: str) -> str | None:
        """The agent's name if it is one of the business's agents."""

    async def line(self, agent_id: str) -> tuple[str, str | None]:
        """(the agent's business, its number or None)."""


class Accounts(Protocol):
    async def owner(self, business_id: str) -> Owner: ...

    async def zone(self, business_id: str) -> str:
        """The business's IANA time zone (its workspace's); not_found for a business that is not the caller's."""


class Messaging(Protocol):
    async def standings(self, business_id: str, phones: list[str]) -> Standings:
        """Each phone's standing (do-not-call, consent) and its touches of the last 24 hours, by phone."""

    async def queue_email(self, to: str, subject: str, body: str, business_id: str | None = None) -> Made: ...

    async def send_text(self, touch: Touch, body: str) -> Made:
        """Sent, or refused with the decision's code (a deferral included)."""

    async def place_text(self, touch: Touch, body: str) -> Placed: ...


class Calls(Protocol):
    async def create_call(self, touch: Touch) -> Made:
        """Placed, or refused with the decision's code (a deferral included)."""

    async def place_call(self, touch: Touch) -> Placed: ...

    async def call_business(self, call_id: str) -> str | None:
        """The business of the call, when it is one of the caller's calls (None otherwise)."""


@dataclass(frozen=True)
class Neighbours:
    agents: Agents
    accounts: Accounts
    messaging: Messaging
    calls: Calls


class GrpcAgents:
    def __init__(self, client: Client):
        self.client = client

    async def numbers(self, business_id: str) -> dict[str, str | None]:
        reply = await self.client.ListAgents(agents_pb2.ListAgentsRequest(
            business_id=business_id, page=common_pb2.PageRequest(limit=AGENTS_LISTED)))
        return {a.id: optional(a, "phone_number") for a in reply.agents}

    async def name(self, agent_id: str, business_id: str) -> str | None:
        reply = await self.client.LookupAgents(agents_pb2.LookupAgentsRequest(ids=[agent_id]))
        return next((a.name for a in reply.agents if a.id == agent_id and a.business_id == business_id), None)

    async def line(self, agent_id: str) -> tuple[str, str | None]:
        profile = await self.client.GetCallingProfile(agents_pb2.GetCallingProfileRequest(agent_id=agent_id))
        return profile.business_id, optional(profile, "phone_number")


class GrpcAccounts:
    def __init__(self, client: Client):
        self.client = client

    async def owner(self, business_id: str) -> Owner:
        found = await self.client.GetWorkspaceOwner(accounts_pb2.GetWorkspaceRequest(id=business_id))
        return Owner(found.account_id, found.email, found.business_name)

    async def zone(self, business_id: str) -> str:
        found = await self.client.GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=business_id))
        return str(found.timezone)


def _sms_request(touch: Touch, body: str) -> messaging_pb2.SendSmsRequest:
    return messaging_pb2.SendSmsRequest(
        to=touch.to, from_agent_id=touch.agent_id, message=body, lead_id=touch.lead_id,
        idempotency_key=touch.key, actor=touch.actor, reference=touch.reference, external_ref=touch.external_ref,
        touch_id=touch.touch_id, callee_timezone=touch.timezone,
        business_hours=business_hours(*touch.hours) if touch.hours else None)


def _call_request(touch: Touch) -> calls_pb2.CreateCallRequest:
    return calls_pb2.CreateCallRequest(
        agent_id=touch.agent_id, to=touch.to, lead_id=touch.lead_id, idempotency_key=touch.key,
        compliance=calls_pb2.COMPLIANCE_MODE_ENFORCE, actor=touch.actor, reference=touch.reference,
        external_ref=touch.external_ref, touch_id=touch.touch_id, callee_timezone=touch.timezone,
        first_message=touch.first_message, context=touch.context,
        business_hours=business_hours(*touch.hours) if touch.hours else None)


class GrpcMessaging:
    def __init__(self, client: Client):
        self.client = client

    async def standings(self, business_id: str, phones: list[str]) -> Standings:
        reply = await self.client.GetStandings(messaging_pb2.GetStandingsRequest(business_id=business_id,
                                                                                 phones=phones))
        found = {}
        for s in reply.standings:
            found[s.phone] = (compliance.Standing(platform_dnc=s.platform_dnc,
                                                  business_dnc_since=timestamp(s, "business_dnc_since"),
                                                  consent=s.consent or "none",
                                                  national=s.national or compliance.NOT_SUBSCRIBED,
                                                  national_listed=s.national_listed,
                                                  national_refreshed_at=timestamp(s, "national_refreshed_at")),
                              tuple(compliance.Counted(t.channel, t.at.ToDatetime(tzinfo=UTC))
                                    for t in s.recent_touches))
        return found

    async def queue_email(self, to: str, subject: str, body: str, business_id: str | None = None) -> Made:
        email = await self.client.QueueEmail(messaging_pb2.QueueEmailRequest(
            to=to, subject=subject, body=body, business_id=business_id))
        return Made(email.id, email.status)

    async def send_text(self, touch: Touch, body: str) -> Made:
        sent = await self.client.SendSms(_sms_request(touch, body))
        return Made(sent.message_id, sent.status)

    async def place_text(self, touch: Touch, body: str) -> Placed:
        reply = await self.client.PlaceSms(_sms_request(touch, body))
        if reply.HasField("deferred"):
            deferred: common_pb2.ComplianceDecision = reply.deferred
            return deferred
        return Made(reply.sent.message_id, reply.sent.status)


class GrpcCalls:
    def __init__(self, client: Client):
        self.client = client

    async def create_call(self, touch: Touch) -> Made:
        call = await self.client.CreateCall(_call_request(touch))
        return Made(call.id, call.status)

    async def place_call(self, touch: Touch) -> Placed:
        reply = await self.client.PlaceCall(_call_request(touch))
        if reply.HasField("deferred"):
            deferred: common_pb2.ComplianceDecision = reply.deferred
            return deferred
        return Made(reply.call.id, reply.call.status)

    async def call_business(self, call_id: str) -> str | None:
        try:
            call = await self.client.GetCall(calls_pb2.GetCallRequest(id=call_id))
        except ServiceError as exc:
            if exc.code == "not_found":
                return None
            raise
        return str(call.business_id)


def grpc_neighbours(client: Callable[[str], Client]) -> Neighbours:
    """The adapters over `client(name)`, a client of each service named (`Runtime.client`)."""
    return Neighbours(GrpcAgents(client("agents")), GrpcAccounts(client("accounts")), GrpcMessaging(client("messaging")),
                      GrpcCalls(client("calls")))
