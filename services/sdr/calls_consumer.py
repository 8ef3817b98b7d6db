"""Calls become lead activity: every `call.completed` event (events_pb2.CallCompleted, from the calls service)
is counted as an interaction on the call's lead, or on the business's lead with the other party's number,
which a first call creates from what the agent collected (name, email). Interactions are recorded once per
call, so redelivered events change nothing more.
"""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from core.messages import optional
from services.sdr.service import Contact, Leads
from switchboard.v1 import events_pb2

CALLS_SUBJECT = subject_for("call.completed")
CONSUMER = "sdr-calls"


class CallRecorder:
    def __init__(self, leads: Leads):
        self.leads = leads

    async def handle(self, messages: list[dict[str, Any]]) -> None:
        """A fetched batch of call.completed events, recorded in order in one transaction."""
        contacts: list[Contact] = []
        for message in messages:
            event, call = business_event(message)
            # the consumer's subject; business_event refuses an event that names no business
            assert isinstance(call, events_pb2.CallCompleted) and event.business_id is not None
            other_party = call.to if call.direction == "outbound" else optional(call, "from")
            if not other_party:
                continue  # a caller who withheld their number: nobody to count the call on
            collected = {k: v for k, v in (("name", optional(call, "contact_name")),
                                           ("email", optional(call, "contact_email"))) if v}
            contacts.append(Contact(event.business_id, other_party, optional(call, "lead_id"), "call", call.direction,
                                    call.call_id, collected, optional(call, "intent"), event.occurred_at))
        await self.leads.record_contacts(contacts, CONSUMER)
