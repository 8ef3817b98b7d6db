"""The voicemail hook: `voicemail.received` events (payload events_pb2.VoicemailReceived, which the calls
service will emit) become voicemail records the audit reports until the business calls or texts the number
back. The event's business_id names the business. Each event is applied once (consumer inbox).
"""
from __future__ import annotations

from datetime import datetime

from core.bus import PermanentError, business_event, subject_for
from core.ids import is_uuid
from core.inbox import first_delivery
from core.messages import optional
from core.uow import Database
from services.sdr import store
from services.sdr.schema import inbox

VOICEMAIL_SUBJECT = subject_for("voicemail.received")
CONSUMER = "sdr-voicemails"


class VoicemailRecorder:
    def __init__(self, db: Database):
        self.db = db

    async def handle(self, message: dict) -> None:
        event, voicemail = business_event(message)
        received_at = event.occurred_at
        if voicemail.HasField("received_at"):
            try:
                received_at = datetime.fromisoformat(voicemail.received_at.replace("Z", "+00:00"))
            except ValueError:
                raise PermanentError(f"voicemail.received with a bad received_at {voicemail.received_at!r}") from None
        lead_id = voicemail.lead_id if is_uuid(voicemail.lead_id) else None
        async with self.db.transaction() as conn:
            if not await first_delivery(conn, inbox, CONSUMER, event.event_id):
                return
            await store.insert_voicemail(conn, event.event_id, event.business_id, lead_id, {
                field: optional(voicemail, field) for field in ("call_id", "from_number", "transcript", "recording_url")
            }, received_at)
