"""In-memory stand-ins for the ports a service has on another (e.g. services.calls.ports), so a
service-layer test exercises one service's use cases without the others running."""
from __future__ import annotations

import asyncio
import uuid

from core import tenant
from core.compliance.decision import AGENT_TOOL
from core.errors import ServiceError, not_found
from core.ids import utcnow
from core.standings import UNKNOWN_FACTS, Facts, Standings
from providers.voice.port import EvalRun, ProviderError
from services.calls.booking_tools import BookingTools
from services.calls.lead_tools import LeadTools
from services.calls.ports import FreeSlots, Neighbours, TextPlaced
from services.evals.agents_port import EvaluatedAgent
from services.messaging import ports as messaging_ports
from services.messaging.service import NewText, Sent
from services.sdr.ports import Made
from switchboard.v1 import common_pb2, evals_pb2


class LeadsByPhone:
    """A leads port (calls' and messaging's) over `leads`: {(business_id, phone): lead}."""

    leads: dict

    async def lead(self, lead_id):
        for lead in self.leads.values():
            if lead.id == lead_id:
                return lead
        raise not_found("lead")

    async def lead_with_phone(self, business_id, phone):
        return self.leads.get((business_id, phone))


class CallsNeighbours(LeadsByPhone):
    """The calls service's ports (services.calls.ports) in memory: agents' calling profiles and number routes,
    leads by id and by (business, phone), business names, a compliance that answers `decision` (allow by
    default) and keeps what it was asked and the slots released, and texts that are sent (kept in `texted`)."""

    def __init__(self, profiles=(), routes=None, leads=None, names=None, decision=None, bookings=None):
        self.profiles = {p.agent_id: p for p in profiles}
        self.routes = dict(routes or {})
        self.leads = dict(leads or {})  # (business_id, phone) -> Lead
        self.names = dict(names or {})
        self.decision = decision
        self.asked, self.released, self.texted = [], [], []
        self.ports = Neighbours(agents=self, leads=self, workspaces=self, compliance=self, texts=self,
                                bookings=bookings)

    async def calling_profile(self, agent_id):
        if agent_id not in self.profiles:
            raise not_found("agent")
        return self.profiles[agent_id]

    async def route(self, phone_number):
        return self.routes.get(phone_number)

    async def saved_business_hours(self, business_id):
        return None

    async def business_name(self, business_id):
        return self.names[business_id]

    async def decide_call(self, asked):
        self.asked.append(asked)
        return self.decision or common_pb2.ComplianceDecision(id=str(uuid.uuid4()), outcome="allow", code="allowed")

    async def release_slot(self, decision_id):
        self.released.append(decision_id)

    async def place_text(self, text):
        self.texted.append(text)
        return TextPlaced(True, text.to)


class MessagingTexts:
    """The calls service's port on messaging's texts (services.calls.ports.Texts) over messaging's own send use case
    in this process (services.messaging.service.Texts), asked as GrpcTexts asks it over RPC, as the current caller;
    `down` plays messaging out of reach. Keeps each text asked (`asked`)."""

    def __init__(self, texts):
        self.texts, self.down, self.asked = texts, False, []

    async def place_text(self, text):
        self.asked.append(text)
        if self.down:
            raise ServiceError("unavailable", "messaging is out of reach")
        placed = await self.texts.place(NewText(
            to=text.to, agent_id=text.agent_id, body=text.body, idempotency_key=text.idempotency_key,
            actor=AGENT_TOOL, reference=text.reference, requested_on_call=text.requested_on_call))
        if isinstance(placed, Sent):
            return TextPlaced(True, placed.message.to_number)
        return TextPlaced(False, text.to, placed.code or "tcpa_violation")


class SdrBookings:
    """The calls service's bookings port (services.calls.ports.Bookings) over sdr's booking use cases
    (services.sdr.bookings_service.Bookings, e.g. on the in-memory database): their rules, as the current caller."""

    def __init__(self, bookings):
        self.bookings = bookings

    async def free_slots(self, business_id, first, last):
        found = await self.bookings.slots(business_id, None, first.isoformat(), last.isoformat())
        return FreeSlots(found.zone.key, tuple(s.starts_at.astimezone(found.zone) for s in found.slots))

    async def book(self, booking):
        made = await self.bookings.book(booking.business_id, booking.starts_at, {
            "name": booking.name, "phone_number": booking.phone_number, "notes": booking.notes},
            booking.lead_id, booking.call_id)
        return made.row.starts_at.astimezone(made.zone)


class CallerLeads(LeadsByPhone):
    """The calls service's leads port with what callers said: each CallerLead kept in `said`, answered with the
    lead by phone and the fields given, or `error` raised."""

    def __init__(self, leads=None, error: ServiceError | None = None):
        self.leads = dict(leads or {})  # (business_id, phone) -> Lead
        self.error = error
        self.said: list = []

    async def record_caller(self, said):
        if self.error is not None:
            raise self.error
        self.said.append(said)
        changed = [name for name in ("name", "email", "status", "notes") if name in said.fields]
        return self.leads.get((said.business_id, said.phone)), changed + (["intent"] if said.intent else [])


def idle_builtins() -> dict:
    """ToolCalls' booking and lead tools for a test that runs neither (services.calls.tools_service)."""
    leads = CallerLeads()
    return {"bookings": BookingTools(SdrBookings(None), leads), "leads": LeadTools(leads)}


class EvalProvider:
    """The voice port's eval runs (providers.voice.port.VoiceProvider: run_eval, eval_run, eval_runs_since) in
    memory: each run the provider takes is counted in `submitted` and stays queued until `end`. `cut_off()` makes
    the next submission hang once the provider has taken the run (a replica dying before it records the id)."""

    def __init__(self):
        self.submitted: list[str] = []  # the provider's run ids, in the order it took them
        self.made: dict[str, tuple[str, str, object]] = {}  # run id -> (eval id, assistant id, created at)
        self.state: dict[str, EvalRun] = {}
        self._cut_off: asyncio.Event | None = None

    def cut_off(self) -> None:
        self._cut_off = asyncio.Event()

    async def run_eval(self, eval_id, assistant_id, conversation=None):
        run = EvalRun(f"eval-run-{uuid.uuid4()}", "queued")
        self.submitted.append(run.id)
        self.made[run.id] = (eval_id, assistant_id, utcnow())
        self.state[run.id] = run
        if self._cut_off is not None:
            hang, self._cut_off = self._cut_off, None
            await hang.wait()  # never set: the caller is cancelled here
        return run

    async def eval_run(self, run_id):
        if run_id not in self.state:
            raise ProviderError("GET /eval/run/{id}: 404", status=404)
        return self.state[run_id]

    async def eval_runs_since(self, eval_id, assistant_id, since):
        return [self.state[run_id] for run_id, made in self.made.items()
                if made[:2] == (eval_id, assistant_id) and made[2] >= since]

    def end(self, run_id, passed=True):
        self.state[run_id] = EvalRun(run_id, "ended", passed, [{"status": "pass" if passed else "fail",
                                                                "messages": []}], "mockConversation.done")


class EvalAgents:
    """The evals service's port on agents (services.evals.agents_port) in memory: `agents` by id; an agent of
    another business is not found, as the agents service answers the caller."""

    def __init__(self, agents: dict[str, EvaluatedAgent]):
        self.agents = agents

    async def agent(self, agent_id):
        found = self.agents.get(agent_id)
        if found is None or not tenant.current().can_access(found.business_id):
            raise not_found("agent")
        return found


class SdrAgents:
    """The sdr service's port on agents (services.sdr.ports.Agents) in memory: `names` by (agent id, business id)
    and each business's agents with their numbers (`numbers`, None without one); an agent of another business has
    no name (None), as the agents service answers."""

    def __init__(self, names: dict[tuple[str, str], str], numbers: dict[str, dict[str, str | None]] | None = None):
        self.names = names
        self.numbers_of = numbers or {}

    async def name(self, agent_id, business_id):
        return self.names.get((agent_id, business_id))

    async def numbers(self, business_id):
        return dict(self.numbers_of.get(business_id, {}))


class SdrStandings:
    """The sdr service's port on the messaging service's standings (services.sdr.ports.Messaging.standings) in
    memory: `known` by phone, as the port answers them ((Standing, recent calls)); a phone it does not know is left
    out, as the messaging service leaves it."""

    def __init__(self, known: dict | None = None):
        self.known = dict(known or {})

    async def standings(self, business_id, phones):
        return {phone: self.known[phone] for phone in phones if phone in self.known}


class SdrPlacing:
    """The sdr service's ports on the calls and messaging services as a run's touches use them
    (services.sdr.ports.Calls.place_call and Messaging.place_text) in memory: each key places one call or text (a
    retried key answers the first, as those services do), kept in `placed` by key with the touch, the text's body
    (None for a call) and the account it acted as. `answers` by phone: a ComplianceDecision the touch is deferred
    by, or a ServiceError it is refused with; `before_answer(touch)`, when given, runs before a call or text is
    answered (what happens while the provider takes it)."""

    def __init__(self, answers: dict | None = None, text_status: str = "queued", before_answer=None):
        self.answers = dict(answers or {})
        self.text_status = text_status
        self.before_answer = before_answer
        self.placed: dict[str, tuple] = {}

    async def place_call(self, touch):
        return await self._place(touch, None, "queued")

    async def place_text(self, touch, body):
        return await self._place(touch, body, self.text_status)

    async def _place(self, touch, body, status):
        answer = self.answers.get(touch.to)
        if isinstance(answer, ServiceError):
            raise answer
        if answer is not None:
            return answer
        if touch.key not in self.placed:
            self.placed[touch.key] = (touch, body, tenant.current().account_id, Made(str(uuid.uuid4()), status))
        if self.before_answer is not None:
            await self.before_answer(touch)
        return self.placed[touch.key][3]


class EvalGateVerdicts:
    """The agents service's eval gate (services.agents.evals_port.EvalGate) in memory: answers `status` (passed by
    default) and keeps each (agent_id, assistant_id, targets) it was asked about."""

    def __init__(self, status: str = "passed"):
        self.status = status
        self.asked: list[tuple[str, str, list]] = []

    async def verdict(self, agent_id, assistant_id, targets, wait_seconds):
        self.asked.append((agent_id, assistant_id, targets))
        return evals_pb2.EvalGateOutcome(status=self.status, total=len(targets), completed=len(targets),
                                         passed=len(targets) if self.status == "passed" else 0,
                                         failed=len(targets) if self.status == "failed" else 0)


class MessagingNeighbours(LeadsByPhone):
    """The messaging service's ports (services.messaging.ports) in memory: each agent's sender (business and
    number), leads by id and by (business, phone), business names."""

    def __init__(self, senders=None, leads=None, names=None):
        self.senders = dict(senders or {})  # agent_id -> Sender
        self.leads = dict(leads or {})  # (business_id, phone) -> Lead
        self.names = dict(names or {})
        self.ports = messaging_ports.Neighbours(agents=self, leads=self, workspaces=self)

    async def sender(self, agent_id):
        found = self.senders.get(agent_id)
        if found is None or not tenant.current().can_access(found.business_id):
            raise not_found("agent")
        return found

    async def route(self, phone_number):
        return next((messaging_ports.NumberRoute(s.business_id, agent_id) for agent_id, s in self.senders.items()
                     if s.phone_number == phone_number), None)

    async def business_name(self, business_id):
        return self.names[business_id]

    async def owner(self, business_id):
        raise not_found("owner")


def accounts_saying(known: dict[str, str], plan_id: str = "starter") -> Standings:
    """core.standings asking an accounts service that knows these businesses' standings (any other: no record, so
    unknown, so held)."""
    async def ask(business_id: str) -> Facts:
        return Facts(known[business_id], plan_id) if business_id in known else UNKNOWN_FACTS
    return Standings(ask)
