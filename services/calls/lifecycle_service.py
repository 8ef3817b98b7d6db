"""The call lifecycle from the voice provider's server messages: each status update and end-of-call report,
once authenticated, moves its call forward (never backwards, and a report only once) and emits the events
of the move, in one transaction. Duplicated and reordered messages therefore change nothing more."""
from __future__ import annotations

import json
import time
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from core.errors import ServiceError, invalid
from core.ids import is_uuid, utcnow
from core.outbox import add_event
from providers.voice.server_messages import WebhookAuth
from services.calls import domain, store
from services.calls.inbound_service import Inbound
from services.calls.store import outbox
from switchboard.v1 import events_pb2


def _payload(event_type: str, row):
    common = dict(call_id=str(row.id), conversation_id=row.provider_call_id or "", agent_id=str(row.agent_id),
                  direction=row.direction, to=row.to_number, lead_id=str(row.lead_id) if row.lead_id else None,
                  **{"from": row.from_number})
    if event_type == "call.started":
        return events_pb2.CallStarted(**common)
    if event_type == "call.completed":
        collected = domain.collected(row.structured_data)
        return events_pb2.CallCompleted(**common, status=row.status, duration=row.duration, summary=row.summary,
                                        ended_reason=row.ended_reason, recording_url=row.recording_url,
                                        contact_name=collected.get("name"), contact_email=collected.get("email"),
                                        intent=collected.get("intent"), cost_cents=row.cost_cents,
                                        webhook_url=row.webhook_url)
    return events_pb2.CallFailed(**common, status=row.status, ended_reason=row.ended_reason, cost_cents=row.cost_cents,
                                 webhook_url=row.webhook_url)


class Lifecycle:
    def __init__(self, engine: AsyncEngine, auth: WebhookAuth, events_committed: Callable[[], None],
                 inbound: Inbound | None = None):
        self.engine = engine
        self.inbound = inbound  # answers assistant-requests (inbound calls)
        self.auth = auth  # of the webhook credential the provider authenticates with
        self.events_committed = events_committed

    async def handle(self, body: bytes, headers: dict[str, str]) -> dict:
        """Apply one server message (with its authentication headers); returns the JSON to answer the provider
        with."""
        why = self.auth.refusal(body, headers, time.time())
        if why is not None:
            raise ServiceError("unauthorized", why)
        try:
            payload = json.loads(body)
        except ValueError:
            raise invalid("a server message is a JSON object") from None
        message = domain.message_of(payload)
        if message["type"] == "assistant-request" and self.inbound is not None:
            return await self.inbound.assistant_request(message)
        if message["type"] in ("status-update", "end-of-call-report"):
            await self.apply(message)
        return {}  # other types are acknowledged: nothing of ours follows from them

    async def apply(self, message: dict) -> None:
        """Move the message's call forward (a status update or an end-of-call report) and emit the events. An
        inbound call first heard of this way (one offered to a forward-to phone before any assistant-request) is
        recorded first."""
        our_id = domain.our_call_id(message)
        if our_id is None and self.inbound is not None and message["call"].get("type") == domain.INBOUND_CALL_TYPE:
            await self.inbound.record_first_heard(message)
        emitted = False
        async with self.engine.begin() as conn:
            row = await store.call_for_message(conn, our_id if our_id and is_uuid(our_id) else None,
                                               message["call"]["id"])
            if row is None:
                return  # not a call of ours
            reported = row.reported_at is not None
            if message["type"] == "status-update":
                changes = domain.after_status(row.status, row.answered, reported, row.status_at, message)
            else:
                changes = domain.after_report(row.status, row.answered, reported, message)
                if changes:
                    changes["reported_at"] = utcnow()
            if not row.provider_call_id and message["call"]["id"]:  # it came before the provider's reply to us
                changes["provider_call_id"] = message["call"]["id"]
            if not changes:
                return
            updated = await store.update_call(conn, row.id, {**changes, "updated_at": utcnow()})
            for event_type in domain.events_of_move(row.status, updated.status, row.answered, updated.answered):
                await add_event(conn, outbox, _payload(event_type, updated), str(updated.business_id))
                emitted = True
            if updated.direction == "inbound" and updated.status == "voicemail" and row.status != "voicemail":
                await add_event(conn, outbox, events_pb2.VoicemailReceived(
                    call_id=str(updated.id), from_number=updated.from_number, transcript=updated.transcript,
                    recording_url=updated.recording_url, lead_id=str(updated.lead_id) if updated.lead_id else None),
                    str(updated.business_id))
        if emitted:
            self.events_committed()
