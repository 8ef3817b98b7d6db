"""Inbound calls: the provider asks which assistant answers a call on one of our numbers (an
`assistant-request`, answered within the provider's 7.5 s), or, for a number with ring-first forwarding, first
tells us the call is offered to the forward-to phone (the call is recorded then, and the assistant-request comes
only if nobody picks up there). The number's agent answers with the caller's
lead (if the business knows the number) in its variables, and with its recording disclosure first where the
caller may be in a state that needs every party's consent (domain.recording_disclosure: by the caller's area code
and lead); the call is recorded `ringing` and `call.received` is emitted. A number no business holds, or one without an
agent, is refused with words spoken to the caller before the call ends.

A business not in good standing (paused, canceled, unpaid, torn down, or whose standing the accounts service cannot
confirm: core.standings) is never answered by its agent, at the platform's cost: the caller hears HELD_MESSAGE, a
short recorded sentence spoken by the provider, and the call ends; nothing is recorded for it (no call, no lead, no
event). A repeated request for the same provider call answers the same way and records nothing twice."""
from __future__ import annotations

from typing import Any

from contracts import calls as calls_contract
from core import tenant
from core.compliance import zones
from core.ids import new_id, utcnow
from core.standings import Standings, carried_only
from core.uow import UnitOfWork
from providers.voice.port import CallRef, InboundAnswer
from services.calls import domain
from services.calls.ports import Neighbours, NumberRoute
from services.calls.repository import CallsUnit
from switchboard.v1 import events_pb2

ACTOR = "calls-inbound"
NOT_IN_SERVICE = "This number is not in service."
HELD_MESSAGE = "Sorry, this business is not taking calls at the moment. Please try again later. Goodbye."


class Inbound:
    def __init__(self, uow: UnitOfWork[CallsUnit], others: Neighbours, *, standings: Standings | None = None):
        self.uow = uow  # the calls (services.calls.repository)
        self.standings = standings or carried_only()  # may the number's business spend (core.standings)
        self.others = others  # asked as the tenant set below (services.calls.ports)

    async def assistant_request(self, call: CallRef) -> InboundAnswer | str:
        """Who answers: the agent's assistant with this call's variables, or the words spoken before it ends."""
        row, route = await self._recorded(call)
        if row is None:
            return HELD_MESSAGE if route is not None else NOT_IN_SERVICE
        spoken = (row.recording_disclosure or {}).get("spoken")  # as decided when the call was recorded
        return InboundAnswer(str(row.id), route.provider_assistant_id, row.variables,
                             route.disclosure if spoken else None)

    async def record_first_heard(self, call: CallRef) -> None:
        """Record an inbound call that reaches us by a status update or report before (or without) an
        assistant-request: ring-first forwarding offers the call to the forward-to phone first."""
        async with self.uow.read() as work:
            if await work.calls.by_provider_id(call.provider_call_id) is not None:
                return
        await self._recorded(call)

    async def _recorded(self, call: CallRef) -> tuple[Any, ...]:
        """The call of the message, recorded once, and its number's route; (None, None) when no agent of ours
        answers the number, (None, route) when its business may not spend (nothing recorded)."""
        number = call.number
        if number is None:
            return None, None
        route = await self.others.agents.route(number)
        if route is None or route.agent_id is None:
            return None, None
        with tenant.acting_as(tenant.acting_for(route.business_id, ACTOR)):
            if not await self.standings.is_good(route.business_id):
                return None, route
            return await self._record(call.provider_call_id, route, number, call.caller), route

    async def _record(self, provider_call_id: str, route: NumberRoute, number: str, caller: str | None) -> Any:
        async with self.uow.read() as work:
            known = await work.calls.by_provider_id(provider_call_id)
        if known is not None:
            return known  # the provider asked again, or told us of the call before
        lead = await self.others.leads.lead_with_phone(route.business_id, caller) if caller else None
        business_name = await self.others.workspaces.business_name(route.business_id)
        now = utcnow()
        variables = domain.enrichment(to=caller or number, now=now, name=None,
                                      lead=domain.lead_facts(lead) if lead else None, business_name=business_name,
                                      business_phone=number)
        # The caller's states: their number's area code's and their lead's (an unknown caller is placed nowhere).
        states = zones.possible_states(caller, lead.state if lead else None) if caller else []
        disclosure, _ = domain.recording_disclosure(states, route.disclosure, outbound=False)
        async with self.uow.transaction() as work:
            repository = work.calls
            row = await repository.add_once(
                id=new_id(), business_id=route.business_id, agent_id=route.agent_id, agent_name=route.agent_name,
                lead_id=lead.id if lead else None, direction="inbound", status="ringing", to_number=number,
                from_number=caller, max_duration=calls_contract.DEFAULT_MAX_DURATION, compliance="skip",
                variables=variables, recording_disclosure=disclosure, provider_call_id=provider_call_id,
                created_at=now, updated_at=now)
            if row is None:  # a concurrent request recorded it first
                return await repository.by_provider_id(provider_call_id)
            work.emit(events_pb2.CallReceived(
                call_id=str(row.id), conversation_id=provider_call_id, agent_id=str(row.agent_id), to=number,
                lead_id=str(row.lead_id) if row.lead_id else None, **{"from": caller}), route.business_id)
        return row

