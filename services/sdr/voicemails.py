"""The voicemail hook: `voicemail.received` events (payload events_pb2.VoicemailReceived, which the calls
service will emit) become voicemail records the audit reports until the business calls or texts the number
back. The event's business_id names the business. Each event is applied once (consumer inbox).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from core.bus import PermanentError, business_event, subject_for
from core.ids import is_uuid
from core.messages import optional
from core.uow import UnitOfWork
from services.sdr.repository import SdrUnit
from switchboard.v1 import events_pb2

VOICEMAIL_SUBJECT = subject_for("voicemail.received")
CONSUMER = "sdr-voicemails"


class VoicemailRecorder:
    def __init__(self, uow: UnitOfWork[SdrUnit]):
        self.uow = uow

    async def handle(self, message: dict[str, Any]) -> None:
        event, voicemail = business_event(message)
        # the consumer's subject; business_event refuses an event that names no business
        assert isinstance(voicemail, events_pb2.VoicemailReceived) and event.business_id is not None
        received_at = event.occurred_at
        if voicemail.HasField("received_at"):
            try:
                received_at = datetime.fromisoformat(voicemail.received_at.replace("Z", "+00:00"))
            except ValueError:
                raise PermanentError(f"voicemail.received with a bad received_at {voicemail.received_at!r}") from None
        lead_id = voicemail.lead_id if is_uuid(voicemail.lead_id) else None
        async with self.uow.transaction() as work:
            if not await work.events.first_delivery(CONSUMER, event.event_id):
                return
            await work.events.add_voicemail(event.event_id, event.business_id, lead_id, {
                field: optional(voicemail, field) for field in ("call_id", "from_number", "transcript", "recording_url")
            }, received_at)
