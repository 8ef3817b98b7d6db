"""The call lifecycle from the voice provider's server messages: each status update and end-of-call report
moves its call forward (never backwards, and a report only once) and emits the events of the move. Duplicated
and reordered messages therefore change nothing more.

The gateway verifies every message (gateway.routes.providers). It stores status updates and reports on the
PROVIDER stream; a consumer here applies each fetched batch in stream order in one transaction (`apply`): the
batch's calls are locked together, every message moves its call in memory, and each call changed is written
once, with the batch's events in one insert (its unit of work's). It forwards the messages whose answer the provider uses
(assistant requests, tool calls, transfer requests) over RPC (`handle`)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from core.bus import PermanentError
from core.errors import ServiceError, invalid
from core.ids import is_uuid, utcnow
from core.uow import UnitOfWork
from providers.voice.port import (
    AnswerRequest,
    CallReport,
    StatusUpdate,
    ToolCallsRequest,
    TransferRequest,
    VoiceProvider,
)
from services.calls import domain, erasure
from services.calls.inbound_service import Inbound
from services.calls.repository import CallsUnit
from services.calls.tools_service import ToolCalls
from services.calls.transfer_service import Transfers
from switchboard.v1 import events_pb2

CONSUMER = "calls-provider-messages"


def _payload(event_type: str, call: dict[str, Any]) -> Message:
    common = dict(call_id=call["id"], conversation_id=call["provider_call_id"] or "", agent_id=call["agent_id"],
                  direction=call["direction"], to=call["to_number"], lead_id=call["lead_id"],
                  external_ref=call["external_ref"], touch_id=call["touch_id"], **{"from": call["from_number"]})
    if event_type == "call.started":
        return events_pb2.CallStarted(**common)
    if event_type == "call.completed":
        collected = domain.collected(call["structured_data"])
        return events_pb2.CallCompleted(**common, status=call["status"], duration=call["duration"],
                                        summary=call["summary"], ended_reason=call["ended_reason"],
                                        recording_url=call["recording_url"], contact_name=collected.get("name"),
                                        contact_email=collected.get("email"), intent=collected.get("intent"),
                                        cost_cents=call["cost_cents"], webhook_url=call["webhook_url"])
    return events_pb2.CallFailed(**common, status=call["status"], ended_reason=call["ended_reason"],
                                 cost_cents=call["cost_cents"], webhook_url=call["webhook_url"])


Move = StatusUpdate | CallReport  # the provider's messages that move a call


def _our_id(message: Move) -> str | None:
    """The call id we gave the provider, as PostgreSQL writes a UUID (None when the message has none)."""
    our_id = message.call.our_call_id
    return our_id.lower() if our_id and is_uuid(our_id) else None


def changes_of(call: dict[str, Any], message: Move) -> dict[str, Any]:
    """What a status update or end-of-call report changes on the call as it stands (domain rules): of an erased
    call, nothing personal (erasure.without_personal)."""
    reported = call["reported_at"] is not None
    if isinstance(message, StatusUpdate):
        changes = domain.after_status(call["status"], call["answered"], reported, call["status_at"], message)
    else:
        changes = domain.after_report(call["status"], call["answered"], reported, message)
        if changes:
            changes["reported_at"] = utcnow()
    if not call["provider_call_id"] and message.call.provider_call_id:  # before the provider's reply to us
        changes["provider_call_id"] = message.call.provider_call_id
    return erasure.without_personal(call, changes)


def events_of(before: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    """The events (payload, business_id) of a call's move (an erased call's name no one: erasure.for_events)."""
    after = erasure.for_events(after)
    emitted = [(_payload(event_type, after), after["business_id"]) for event_type in
               domain.events_of_move(before["status"], after["status"], before["answered"], after["answered"])]
    if after["direction"] == "inbound" and after["status"] == "voicemail" and before["status"] != "voicemail":
        emitted.append((events_pb2.VoicemailReceived(
            call_id=after["id"], from_number=after["from_number"], transcript=after["transcript"],
            recording_url=after["recording_url"], lead_id=after["lead_id"]), after["business_id"]))
    return emitted


class Lifecycle:
    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider, inbound: Inbound | None = None,
                 tools: ToolCalls | None = None, transfers: Transfers | None = None):
        self.uow = uow  # the calls (services.calls.repository), and the events of their moves
        self.voice = voice  # reads its server messages, and words the answers to them
        self.inbound = inbound  # answers assistant-requests (inbound calls)
        self.tools = tools  # answers the model's tool calls
        self.transfers = transfers  # answers where a transfer with no destination of its own goes

    async def handle(self, body: bytes) -> dict[str, Any]:
        """Answer a server message the gateway verified and forwarded; returns the JSON to answer the provider
        with."""
        try:
            payload = json.loads(body)
        except ValueError:
            raise invalid("a server message is a JSON object") from None
        message = self.voice.read_message(payload)
        if isinstance(message, AnswerRequest) and self.inbound is not None:
            return await self.voice.answer(await self.inbound.assistant_request(message.call))
        if isinstance(message, ToolCallsRequest) and self.tools is not None:
            return self.voice.tool_results(await self.tools.answer(message))
        if isinstance(message, TransferRequest) and self.transfers is not None:
            return self.voice.transfer_answer(await self.transfers.answer(message))
        return {}  # other types are acknowledged: nothing of ours follows from them

    async def apply_stored(self, bodies: list[dict[str, Any]]) -> None:
        """The PROVIDER stream's consumer: message bodies as the gateway stored them, after it checked them."""
        try:
            messages = [self.voice.read_message(body) for body in bodies]
        except ServiceError as exc:
            raise PermanentError(exc.message) from None
        await self.apply([m for m in messages if isinstance(m, StatusUpdate | CallReport)])

    async def apply(self, messages: Sequence[Move]) -> None:
        """Move each message's call forward (status updates and end-of-call reports, in this order) and emit the
        events, in one transaction. An inbound call first heard of this way (one offered to a forward-to phone
        before any assistant-request) is recorded first. Messages about no call of ours change nothing."""
        for message in messages:
            if message.call.our_call_id is None and self.inbound is not None and message.call.inbound:
                await self.inbound.record_first_heard(message.call)
        ours = [_our_id(m) for m in messages]
        async with self.uow.transaction() as work:
            rows = await work.calls.for_messages([i for i in ours if i], [m.call.provider_call_id for m in messages])
            current = {row["id"]: row for row in rows}
            by_provider_id = {row["provider_call_id"]: row["id"] for row in rows if row["provider_call_id"]}
            changed: dict[str, dict[str, Any]] = {}
            for our_id, message in zip(ours, messages, strict=True):
                call_id = our_id if our_id in current else by_provider_id.get(message.call.provider_call_id)
                if call_id is None:
                    continue  # not a call of ours
                changes = changes_of(current[call_id], message)
                if not changes:
                    continue
                changes["updated_at"] = utcnow()
                before, current[call_id] = current[call_id], {**current[call_id], **changes}
                changed[call_id] = {**changed.get(call_id, {}), **changes}
                for payload, business_id in events_of(before, current[call_id]):
                    work.emit(payload, business_id)
            await work.calls.change_many(changed)
