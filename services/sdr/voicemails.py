"""The voicemail hook: `voicemail.received` events become voicemail records the audit reports until
the business calls or texts the number back.

Expected event data (the calls service will emit it): `{call_id?, from_number (E.164), transcript?,
recording_url?, lead_id?, received_at? (ISO 8601)}`; the event's business_id names the business.
Each event is applied once (consumer inbox).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from core.bus import PermanentError, subject_for
from core.ids import is_uuid
from core.inbox import first_delivery
from services.sdr.store import inbox, voicemails

VOICEMAIL_SUBJECT = subject_for("voicemail.received")
CONSUMER = "sdr-voicemails"


class VoicemailRecorder:
    def __init__(self, engine: AsyncEngine):
        self.engine = engine

    async def handle(self, event: dict) -> None:
        data, business_id = event.get("data") or {}, event.get("business_id")
        if not is_uuid(business_id or ""):
            raise PermanentError("voicemail.received without a business_id")
        received = data.get("received_at") or event.get("occurred_at")
        try:
            received_at = datetime.fromisoformat(received.replace("Z", "+00:00"))
        except (AttributeError, ValueError):
            raise PermanentError(f"voicemail.received with a bad received_at {received!r}") from None
        lead_id = data.get("lead_id") if is_uuid(data.get("lead_id") or "") else None
        async with self.engine.begin() as conn:
            if not await first_delivery(conn, inbox, CONSUMER, event["event_id"]):
                return
            await conn.execute(voicemails.insert().values(
                id=event["event_id"], business_id=business_id, lead_id=lead_id, call_id=data.get("call_id"),
                from_number=data.get("from_number"), transcript=data.get("transcript"),
                recording_url=data.get("recording_url"), received_at=received_at))
