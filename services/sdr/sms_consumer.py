"""Texts become lead activity: every `sms.received` event (events_pb2.SmsReceived, from the messaging service) is
counted as an inbound interaction on the text's lead, or on the business's lead with the sender's number,
which a first text creates (source inbound_sms). Recorded once per message, so redelivered events change
nothing more.
"""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from core.messages import optional
from services.sdr.service import Contact, Leads
from switchboard.v1 import events_pb2

SMS_SUBJECT = subject_for("sms.received")
CONSUMER = "sdr-sms"


class TextRecorder:
    def __init__(self, leads: Leads):
        self.leads = leads

    async def handle(self, messages: list[dict[str, Any]]) -> None:
        """A fetched batch of sms.received events, recorded in order in one transaction."""
        contacts: list[Contact] = []
        for message in messages:
            event, text = business_event(message)
            # the consumer's subject; business_event refuses an event that names no business
            assert isinstance(text, events_pb2.SmsReceived) and event.business_id is not None
            contacts.append(Contact(event.business_id, getattr(text, "from"), optional(text, "lead_id"), "sms",
                                    "inbound", text.message_sid, {}, None, event.occurred_at))
        await self.leads.record_contacts(contacts, CONSUMER)
