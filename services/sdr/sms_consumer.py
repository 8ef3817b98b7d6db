"""Texts become lead activity: every `sms.received` event (events_pb2.SmsReceived, from the messaging service) is
counted as an inbound interaction on the text's lead, or on the business's lead with the sender's number,
which a first text creates (source inbound_sms). Recorded once per message, so redelivered events change
nothing more.
"""
from __future__ import annotations

from core import tenant
from core.bus import business_event, subject_for
from core.messages import optional
from services.sdr.service import Leads

SMS_SUBJECT = subject_for("sms.received")
CONSUMER = "sdr-sms"


class TextRecorder:
    def __init__(self, leads: Leads):
        self.leads = leads

    async def handle(self, message: dict) -> None:
        event, text = business_event(message)
        token = tenant.set_current(tenant.acting_for(event.business_id, CONSUMER))
        try:
            await self.leads.record_contact(event.business_id, getattr(text, "from"), optional(text, "lead_id"),
                                            "sms", "inbound", text.message_sid, {}, None, event.occurred_at)
        finally:
            tenant.reset_current(token)
