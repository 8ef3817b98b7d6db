"""What the calls service needs of the other services, as ports: an agent's calling profile, who answers a
number, an agent's tools and the run of a custom tool (agents), the lead a call is for, the business's saved calling
hours, what a caller said on a call, and the business's free slots and bookings (sdr), the business's name and the
phone it forwards calls to (accounts), and the compliance decision on a call and the texts an agent's tools send
(messaging). `grpc_neighbours` builds the adapters over the services' RPCs; service-layer tests give the use cases
in-memory ones (tests/service/fakes.py), so placing or answering a call needs neither the other services nor their
databases. Each call acts for the current caller
(core.tenant), as the owning service checks it; a refusal raises core.errors.ServiceError with its code."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Protocol

from cachetools import TTLCache
from google.protobuf import json_format

from contracts.agent_tools import provider_tools
from contracts.agents import CUSTOM_TOOL
from core.compliance.decision import AGENT_TOOL
from core.compliance.recording_rules import DEFAULT_SETTING, Setting
from core.errors import ServiceError
from core.messages import business_hours as business_hours_message
from core.messages import optional, set_timestamp, timestamp
from core.rpc import Client
from providers.voice.port import AssistantTool
from switchboard.v1 import accounts_pb2, agents_pb2, common_pb2, messaging_pb2, sdr_pb2

# How long a business's name is kept for the calls placed (GrpcWorkspaces), and for how many businesses.
NAME_TTL_SECONDS = 60.0
NAMES_KEPT = 10_000


@dataclass(frozen=True)
class CallingProfile:
    """An agent as it places outbound calls."""

    agent_id: str
    name: str
    business_id: str
    provider_assistant_id: str
    phone_number: str | None  # None until the agent has a number
    provider_phone_number_id: str | None
    prompt: str
    first_message: str
    model: dict[str, Any]  # the provider's model settings with the outbound model applied
    own_voicemail_detection: bool = False  # the agent's provider settings choose voicemail detection
    disclosure: Setting = DEFAULT_SETTING  # the agent's recording disclosure
    tools: tuple[AssistantTool, ...] = ()  # the agent's tools, which the call's model carries


@dataclass(frozen=True)
class NumberRoute:
    """Who answers a number: its business, and its agent (None when it answers for none)."""

    business_id: str
    agent_id: str | None
    agent_name: str | None
    provider_assistant_id: str | None
    disclosure: Setting = DEFAULT_SETTING  # the agent's recording disclosure


@dataclass(frozen=True)
class AgentTool:
    """One of an agent's tools as the model calls it: by `name` (a built-in tool's type, a custom tool's own name),
    of `type` (contracts.agents.AGENT_TOOLS), with the tool as saved (`settings`: send_link's `links`,
    transfer_call's `destinations`, ...)."""

    name: str
    type: str
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CustomToolRun:
    """What a custom tool's run came to (agents' RunCustomTool): ok, failed or refused, and the words for the
    model."""

    outcome: str
    result: str


def setting_of(message: agents_pb2.RecordingDisclosure) -> Setting:
    return Setting(message.mode, message.message, message.consent)


@dataclass(frozen=True)
class Lead:
    """What a call reads of a lead."""

    id: str
    business_id: str
    name: str | None
    first_name: str | None
    score: int
    status: str
    state: str | None
    interaction_count: int
    source: str
    created_at: datetime
    converted_at: datetime | None = None  # a purchase, and the latest inquiry: the national registry's exemptions
    last_inbound_at: datetime | None = None


@dataclass(frozen=True)
class CallerLead:
    """What a caller said on a call, to write on their lead (sdr's RecordCallerLead): `fields` name, email, status
    and notes as said."""

    business_id: str
    phone: str
    call_id: str
    direction: str
    lead_id: str | None
    fields: Mapping[str, str]
    intent: str | None


@dataclass(frozen=True)
class FreeSlots:
    """A business's free slots (sdr's ListSlots): each start, aware, in the business's zone."""

    timezone: str
    starts: tuple[datetime, ...]


@dataclass(frozen=True)
class NewBooking:
    """An appointment to book (sdr's CreateBooking) on a call."""

    business_id: str
    starts_at: datetime  # aware
    name: str
    phone_number: str
    notes: str | None
    lead_id: str | None
    call_id: str


@dataclass(frozen=True)
class CallDecision:
    """What the calls service asks of the compliance decision (messaging's DecideCall)."""

    business_id: str
    phone: str
    timezone: str | None
    lead: Lead | None
    sender: str | None
    actor: str
    reference: str
    business_hours: tuple[int, int] | None


@dataclass(frozen=True)
class Text:
    """A text an agent's tool sends during a call (send_sms, send_link), as messaging's PlaceSms takes it: from the
    call's agent, keyed so that a retried tool call never texts twice, with the call on which the recipient asked for
    it when they did (their consent basis)."""

    agent_id: str
    to: str
    body: str
    idempotency_key: str
    reference: str  # the tool call, for the decision log
    requested_on_call: str | None = None


@dataclass(frozen=True)
class TextPlaced:
    """A text sent (to whom), or held back by the compliance decision for the time (`code`: tcpa_violation)."""

    sent: bool
    to: str
    code: str | None = None


class Agents(Protocol):
    async def calling_profile(self, agent_id: str) -> CallingProfile: ...

    async def route(self, phone_number: str) -> NumberRoute | None:
        """None when no business holds the number (or it is not one)."""

    async def tools(self, agent_id: str) -> tuple[AgentTool, ...]:
        """The agent's tools as saved now; not_found for an agent outside the caller's businesses."""

    async def run_custom_tool(self, agent_id: str, name: str, tool_call_id: str, arguments: dict[str, Any],
                              call: dict[str, Any]) -> CustomToolRun:
        """Run the agent's custom tool `name` for `call` ({id, business_id, agent_id, direction, from, to}): the
        agents service signs and sends it (the tool secret never leaves it)."""


class Leads(Protocol):
    async def lead(self, lead_id: str) -> Lead: ...

    async def lead_with_phone(self, business_id: str, phone: str) -> Lead | None: ...

    async def saved_business_hours(self, business_id: str) -> tuple[int, int] | None:
        """The calling hours the business saved in its SDR config (None when it saved no config)."""

    async def record_caller(self, said: CallerLead) -> tuple[Lead, list[str]]:
        """The lead after what the caller said is written on it (created when the business has none with the
        phone), and the fields written; invalid_request for a bad email or status."""


class Bookings(Protocol):
    async def free_slots(self, business_id: str, first: date, last: date) -> FreeSlots:
        """The free slots of the business's local days first..last (at most 14), soonest first."""

    async def book(self, booking: NewBooking) -> datetime:
        """The booked slot's start in the business's zone; invalid_request for a time that is not a free slot of
        its availability, conflict when the slot is taken."""


class Workspaces(Protocol):
    async def business_name(self, business_id: str) -> str: ...


@dataclass(frozen=True)
class BusinessPhone:
    """A business's name and the phone it forwards calls to (its signup's phone_forward_to; None: it gave none)."""

    name: str
    forward_to: str | None


class Owners(Protocol):
    async def business_phone(self, business_id: str) -> BusinessPhone:
        """not_found for a business outside the caller's."""


class Compliance(Protocol):
    async def decide_call(self, asked: CallDecision) -> common_pb2.ComplianceDecision:
        """The decision, logged by the messaging service (the shared ComplianceDecision message the API answers
        with)."""

    async def release_slot(self, decision_id: str) -> None: ...


class Texts(Protocol):
    async def place_text(self, text: Text) -> TextPlaced:
        """The text sent, or deferred by the compliance decision; a refusal raises ServiceError with its code
        (number_on_dnc, number_opted_out, content_blocked, rate_limited, ...)."""


@dataclass(frozen=True)
class Neighbours:
    agents: Agents
    leads: Leads
    workspaces: Workspaces
    compliance: Compliance
    texts: Texts
    bookings: Bookings


def lead_of(message: sdr_pb2.Lead) -> Lead:
    return Lead(message.id, message.business_id, optional(message, "name"), optional(message, "first_name"),
                message.score, message.status, optional(message, "state"), message.interaction_count, message.source,
                message.created_at.ToDatetime(tzinfo=UTC), timestamp(message, "converted_at"),
                timestamp(message, "last_inbound_at"))


class GrpcAgents:
    def __init__(self, client: Client):
        self.client = client

    async def calling_profile(self, agent_id: str) -> CallingProfile:
        p = await self.client.GetCallingProfile(agents_pb2.GetCallingProfileRequest(agent_id=agent_id))
        return CallingProfile(p.agent_id, p.name, p.business_id, p.provider_assistant_id,
                              optional(p, "phone_number"), optional(p, "provider_phone_number_id"), p.prompt,
                              p.first_message, json_format.MessageToDict(p.model), p.own_voicemail_detection,
                              setting_of(p.recording_disclosure),
                              provider_tools([json_format.MessageToDict(t) for t in p.tools]))

    async def route(self, phone_number: str) -> NumberRoute | None:
        try:
            found = await self.client.RouteNumber(agents_pb2.RouteNumberRequest(phone_number=phone_number))
        except ServiceError as exc:
            if exc.code in ("not_found", "invalid_request"):
                return None
            raise
        return NumberRoute(found.business_id, optional(found, "agent_id"), optional(found, "agent_name"),
                           optional(found, "provider_assistant_id"), setting_of(found.recording_disclosure))


    async def tools(self, agent_id: str) -> tuple[AgentTool, ...]:
        found = await self.client.GetAgentTools(agents_pb2.GetAgentToolsRequest(agent_id=agent_id))
        saved = [json_format.MessageToDict(t) for t in found.tools]
        return tuple(AgentTool(str(t.get("name") or t["type"]) if t["type"] == CUSTOM_TOOL else str(t["type"]),
                               str(t["type"]), t) for t in saved)

    async def run_custom_tool(self, agent_id: str, name: str, tool_call_id: str, arguments: dict[str, Any],
                              call: dict[str, Any]) -> CustomToolRun:
        request = agents_pb2.RunCustomToolRequest(agent_id=agent_id, name=name, tool_call_id=tool_call_id,
                                                  arguments_json=json.dumps(arguments))
        request.call.update(call)
        run = await self.client.RunCustomTool(request)
        return CustomToolRun(run.outcome, run.result)


class GrpcLeads:
    def __init__(self, client: Client):
        self.client = client

    async def lead(self, lead_id: str) -> Lead:
        return lead_of(await self.client.GetLead(sdr_pb2.GetLeadRequest(id=lead_id)))

    async def lead_with_phone(self, business_id: str, phone: str) -> Lead | None:
        found = await self.client.FindLeadByPhone(sdr_pb2.FindLeadByPhoneRequest(business_id=business_id, phone=phone))
        return lead_of(found.lead) if found.HasField("lead") else None

    async def saved_business_hours(self, business_id: str) -> tuple[int, int] | None:
        config = await self.client.GetSdrConfig(sdr_pb2.GetSdrConfigRequest(business_id=business_id))
        return (config.business_hours_start, config.business_hours_end) if config.saved else None

    async def record_caller(self, said: CallerLead) -> tuple[Lead, list[str]]:
        reply = await self.client.RecordCallerLead(sdr_pb2.RecordCallerLeadRequest(
            business_id=said.business_id, phone=said.phone, call_id=said.call_id, direction=said.direction,
            lead_id=said.lead_id, fields=sdr_pb2.LeadFields(**said.fields), intent=said.intent))
        return lead_of(reply.lead), list(reply.changed)


class GrpcBookings:
    def __init__(self, client: Client):
        self.client = client

    async def free_slots(self, business_id: str, first: date, last: date) -> FreeSlots:
        found = await self.client.ListSlots(sdr_pb2.ListSlotsRequest(
            business_id=business_id, from_date=first.isoformat(), to_date=last.isoformat()))
        return FreeSlots(found.timezone, tuple(datetime.fromisoformat(s.starts_at) for s in found.slots))

    async def book(self, booking: NewBooking) -> datetime:
        request = sdr_pb2.CreateBookingRequest(
            business_id=booking.business_id, name=booking.name, phone_number=booking.phone_number,
            notes=booking.notes, lead_id=booking.lead_id, call_id=booking.call_id)
        request.starts_at.FromDatetime(booking.starts_at.astimezone(UTC))
        made = await self.client.CreateBooking(request)
        return datetime.fromisoformat(made.starts_at)


class GrpcWorkspaces:
    """A business's name, asked of accounts and kept `NAME_TTL_SECONDS`: it is on the path of every call placed
    (the prompt's enrichment), and a renamed business reads its old name in calls placed within that time."""

    def __init__(self, client: Client, ttl: float = NAME_TTL_SECONDS):
        self.client = client
        self._names: TTLCache[str, str] = TTLCache(maxsize=NAMES_KEPT, ttl=ttl)

    async def business_name(self, business_id: str) -> str:
        name = self._names.get(business_id)
        if name is None:
            name = (await self.client.GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=business_id))).name
            self._names[business_id] = name
        return name


class GrpcOwners:
    """A business's phone as accounts' GetWorkspaceOwner reads it, asked each time (a transfer is rare, and a changed
    phone applies at once)."""

    def __init__(self, client: Client):
        self.client = client

    async def business_phone(self, business_id: str) -> BusinessPhone:
        found = await self.client.GetWorkspaceOwner(accounts_pb2.GetWorkspaceRequest(id=business_id))
        return BusinessPhone(found.business_name, optional(found, "phone_forward_to"))


class GrpcCompliance:
    def __init__(self, client: Client):
        self.client = client

    async def decide_call(self, asked: CallDecision) -> common_pb2.ComplianceDecision:
        lead = asked.lead
        request = messaging_pb2.DecideCallRequest(
            business_id=asked.business_id, phone=asked.phone, timezone=asked.timezone,
            lead_id=lead.id if lead else None, lead_state=lead.state if lead else None,
            lead_status=lead.status if lead else None, sender=asked.sender, actor=asked.actor,
            reference=asked.reference,
            business_hours=business_hours_message(*asked.business_hours) if asked.business_hours else None)
        if lead is not None:
            set_timestamp(request, "lead_converted_at", lead.converted_at)
            set_timestamp(request, "lead_last_inbound_at", lead.last_inbound_at)
        decided: common_pb2.ComplianceDecision = await self.client.DecideCall(request)
        return decided

    async def release_slot(self, decision_id: str) -> None:
        await self.client.ReleaseCallSlot(messaging_pb2.ReleaseCallSlotRequest(decision_id=decision_id))


class GrpcTexts:
    def __init__(self, client: Client):
        self.client = client

    async def place_text(self, text: Text) -> TextPlaced:
        reply = await self.client.PlaceSms(messaging_pb2.SendSmsRequest(
            to=text.to, from_agent_id=text.agent_id, message=text.body, idempotency_key=text.idempotency_key,
            actor=AGENT_TOOL, reference=text.reference, requested_on_call=text.requested_on_call))
        if reply.HasField("deferred"):
            return TextPlaced(False, text.to, reply.deferred.code or "tcpa_violation")
        return TextPlaced(True, reply.sent.to)


def grpc_neighbours(client: Callable[[str], Client]) -> Neighbours:
    """The adapters over `client(name)`, a client of each service named (`Runtime.client`)."""
    return Neighbours(GrpcAgents(client("agents")), GrpcLeads(client("sdr")), GrpcWorkspaces(client("accounts")),
                      GrpcCompliance(client("messaging")), GrpcTexts(client("messaging")), GrpcBookings(client("sdr")))
