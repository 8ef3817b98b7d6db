"""Vapi's calls from ours and back: the `POST /call` body of an `OutboundCall`, the answers to an assistant-request,
to tool-calls and to a transfer-destination-request, the recording disclosure's compliancePlan, and its server
messages (status updates, end-of-call reports, assistant-requests, tool-calls, transfer-destination-requests) and
call resources read into our `CallMessage` types."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from core.compliance import recording_rules as recording
from core.contact import normalize_e164
from core.errors import ServiceError
from providers.voice.port import (
    PROGRESS,
    AnswerRequest,
    CallMessage,
    CallRef,
    CallReport,
    Ignored,
    InboundAnswer,
    Json,
    OutboundCall,
    Outcome,
    RecordingConsent,
    StatusUpdate,
    ToolCall,
    ToolCallsRequest,
    ToolResult,
    TransferAnswer,
    TransferRequest,
)
from providers.voice.vapi.assistants import WAITS_FOR_USER, chat_model, tool_body, transfer_plan
from providers.voice.vapi.server_messages import ANSWERED_TYPES, QUEUED_TYPES, message_of

# Vapi's customer.name (for its own reference only) takes at most 40 characters: ours may be longer and is cut to
# fit; the call's variables carry the name as given.
CUSTOMER_NAME_MAX = 40
# Voicemail detection on outbound calls, unless the agent's own settings choose: Vapi's default is off, and then a
# voicemail box is talked to like a person and the call ends completed. This is its recommended detector.
VOICEMAIL_DETECTION = {"provider": "vapi"}
CALL_ID_KEY = "switchboard_call_id"  # where a call's metadata carries our id
# How many of an assistant's newest calls (GET /call lists newest first; at most 1000) are searched for one placed
# with our id (services.calls.service's takeover of a lapsed claim, soon after the placing was cut off; later, the
# provider's messages about the call have told us its id already).
RECENT_CALLS = 1000
INBOUND_CALL_TYPE = "inboundPhoneCall"
# DELETE /call/{id}'s body (DeleteCallDTO, which Vapi requires): empty, for the one call of the path (its `ids`
# would ask an asynchronous bulk deletion instead).
DELETE_CALL_BODY: dict[str, Any] = {}

# Vapi's endedReason values and the outcome each means; `outcome_of` decides the rest.
ENDED_REASONS: dict[str, Outcome] = {
    "customer-did-not-answer": "no-answer",
    "customer-busy": "busy",
    "voicemail": "voicemail",
    "manually-canceled": "canceled",
    "customer-ended-call": "completed",
    "assistant-ended-call": "completed",
    "assistant-said-end-call-phrase": "completed",
    "assistant-forwarded-call": "completed",
    "call.ringing.hook-executed-transfer": "completed",  # ring-first: the transfer hook handed the call on
    "call.forwarding.no-answer": "no-answer",
    "call.forwarding.operator-busy": "busy",
    "exceeded-max-duration": "completed",
    "silence-timed-out": "completed",
}
FAILURE_MARKS = ("error", "failed", "fault", "unavailable", "not-found", "invalid")
# The server messages that move a call, and those whose answer Vapi waits for.
STATUS_UPDATE, END_OF_CALL_REPORT = QUEUED_TYPES
ASSISTANT_REQUEST, TOOL_CALLS, TRANSFER_DESTINATION_REQUEST = ANSWERED_TYPES


def outcome_of(ended_reason: str | None) -> Outcome | None:
    """The outcome an endedReason means: a known reason's, failed for an error family, else None (unknown: the
    call's progress decides)."""
    reason = (ended_reason or "").strip().lower()
    if reason in ENDED_REASONS:
        return ENDED_REASONS[reason]
    return "failed" if any(mark in reason for mark in FAILURE_MARKS) else None


def compliance_plan(setting: recording.Setting, outbound: bool) -> dict[str, Any]:
    """The compliancePlan that speaks the disclosure: its consent plan says the message as a line of its own before
    the call's first message and starts recording once the other party consents (by staying on the line, or by
    saying yes with `verbal`, whose no ends the call: the decline tool). On an outbound call it waits for the callee
    to speak first, as Vapi recommends: a line that reports "answered" while still ringing would swallow a message
    spoken at once."""
    plan: dict[str, Any] = {"type": setting.consent, "message": setting.message}
    if outbound:
        plan["firstMessageMode"] = WAITS_FOR_USER
    if setting.consent == recording.VERBAL:
        plan["declineTool"] = {"type": "endCall"}
    return {"recordingConsentPlan": plan}


def call_model(call: OutboundCall, system: str, server: Json) -> dict[str, Any]:
    """The call's model: an override replaces the assistant's whole model, so it carries the agent's tools too
    (their function tools answered at `server`, as the assistant's are)."""
    model = chat_model(call.model, system)
    if call.tools:
        model["tools"] = [tool_body(tool, server) for tool in call.tools]
    return model


def call_body(call: OutboundCall, server: Json) -> dict[str, Any]:
    """`POST /call`: the agent's assistant with this call's overrides; `server` is where Vapi sends the call's
    messages (providers.voice.vapi.server_messages)."""
    system = call.prompt if not call.context else f"{call.prompt}\n\nContext for this call: {call.context}"
    customer = {"number": call.to, **({"name": call.name[:CUSTOMER_NAME_MAX]} if call.name else {})}
    return {
        "assistantId": call.assistant_id,
        "phoneNumberId": call.number_id,
        "customer": customer,
        "assistantOverrides": {
            "firstMessage": call.first_message,
            "maxDurationSeconds": call.max_duration,
            "model": call_model(call, system, server),
            "variableValues": {**call.variables, **({"context": call.context} if call.context else {})},
            "metadata": {CALL_ID_KEY: call.call_id},
            "server": dict(server),
            **({"voicemailDetection": VOICEMAIL_DETECTION} if call.detect_voicemail else {}),
            **({"compliancePlan": compliance_plan(call.disclosure, outbound=True)} if call.disclosure else {}),
        },
    }


def inbound_answer(answer: InboundAnswer, server: Json) -> dict[str, Any]:
    """The answer to an assistant-request that gives the call the agent's assistant."""
    return {
        "assistantId": answer.assistant_id,
        "assistantOverrides": {
            "variableValues": dict(answer.variables),
            "metadata": {CALL_ID_KEY: answer.call_id},
            "server": dict(server),
            **({"compliancePlan": compliance_plan(answer.disclosure, outbound=False)} if answer.disclosure else {}),
        },
    }


def spoken_refusal(words: str) -> dict[str, Any]:
    """The answer to an assistant-request that gives the call no assistant: Vapi speaks `words` to the caller and
    ends the call (its `error`, "spoken to the customer"; `assistantId`, `assistant`, squads and `destination` are
    then ignored), so no model, voice or AI minutes are spent on it."""
    return {"error": words}


def tool_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """The answer to tool-calls: `results`, one `{toolCallId, result}` per tool call (the result is added to the
    conversation and the model speaks from it)."""
    return {"results": [{"toolCallId": r.id, "result": r.result} for r in results]}


def transfer_answer(answer: TransferAnswer) -> dict[str, Any]:
    """The answer to a transfer-destination-request (ServerMessageResponseTransferDestinationRequest): a number
    destination (TransferDestinationNumber: `message` said to the caller first, the warm or blind transferPlan with
    its fallback), or `error`, "the error message if the transfer should not be made", which the model is given as
    the tool call's failure and answers from (the transferCall tool's request-failed hint: assistants.tool_body)."""
    if answer.phone_number is None:
        return {"error": answer.refusal or ""}
    return {"destination": {"type": "number", "number": answer.phone_number,
                            **({"message": answer.message} if answer.message else {}),
                            "transferPlan": transfer_plan(answer.warm, answer.introduction)}}


# -- reading what Vapi sends --------------------------------------------------------------------------------------


def read_message(payload: object) -> CallMessage:
    """A server message body (`{"message": {...}}`) in our types; `invalid` when it is not one."""
    message = message_of(payload)
    kind = message["type"]
    if kind not in (STATUS_UPDATE, END_OF_CALL_REPORT, *ANSWERED_TYPES):
        return Ignored(kind)
    call = message["call"]
    ref = call_ref(call, message)
    if kind == ASSISTANT_REQUEST:
        return AnswerRequest(ref)
    if kind == TRANSFER_DESTINATION_REQUEST:
        return TransferRequest(ref, _stamp(message.get("timestamp")))
    if kind == TOOL_CALLS:
        return ToolCallsRequest(ref, tuple(tool_call(item) for item in message.get("toolCallList") or []
                                           if isinstance(item, dict) and isinstance(item.get("id"), str)))
    if kind == STATUS_UPDATE:
        status = message.get("status")
        return StatusUpdate(
            ref,
            status if isinstance(status, str) else "",
            _stamp(message.get("timestamp")),
            _destination(message) if status == "forwarding" else None,
        )
    return report(ref, message)


def call_ref(call: Json, message: Json | None = None) -> CallRef:
    overrides = _object(call.get("assistantOverrides"))
    ours = _object(overrides.get("metadata")).get(CALL_ID_KEY)
    number = _object(call.get("phoneNumber")).get("number") or _object((message or {}).get("phoneNumber")).get("number")
    return CallRef(
        str(call.get("id") or ""),
        ours if isinstance(ours, str) else None,
        call.get("type") == INBOUND_CALL_TYPE,
        _e164(number),
        _e164(_object(call.get("customer")).get("number")),
    )


def tool_call(item: Json) -> ToolCall:
    """One of a tool-calls message's `toolCallList`: `{id, type: "function", function: {name, arguments}}` (the
    OpenAPI document's ToolCall; its guides also show `name` and `arguments` beside `id`), the arguments an object
    or that object as a JSON string."""
    function = _object(item.get("function"))
    name = function.get("name", item.get("name"))
    arguments = function.get("arguments", item.get("arguments"))
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    return ToolCall(item["id"], name if isinstance(name, str) else "", _object(arguments))


def report(ref: CallRef, fields: Json) -> CallReport:
    """An end-of-call report (or an ended call resource: the same fields) in our types."""
    artifact, analysis = _object(fields.get("artifact")), _object(fields.get("analysis"))
    ended_reason = _text(fields.get("endedReason"))
    structured = analysis.get("structuredData")
    return CallReport(
        ref,
        ended_reason,
        outcome_of(ended_reason),
        started_at=_time(fields.get("startedAt")),
        ended_at=_time(fields.get("endedAt")),
        cost_cents=_cents(fields.get("cost")),
        transcript=_text(artifact.get("transcript")),
        recording_url=recording_url(artifact),
        summary=_text(analysis.get("summary")),
        structured_data=structured if isinstance(structured, dict) else None,
        recording_consent=recording_consent(fields),
        ended_message=_text(fields.get("endedMessage")),
    )


def is_ended(call: Json) -> bool:
    return call.get("status") == PROGRESS[-1]


def ended_inbound(listed: Sequence[Json], numbers: Mapping[str, str]) -> list[CallReport]:
    """The ended inbound calls of a `GET /call` list, each read as its end-of-call report; `numbers` (phone number
    id -> number) names the number of a call resource that carries only its `phoneNumberId`."""
    found = []
    for call in listed:
        if call.get("type") != INBOUND_CALL_TYPE or not is_ended(call):
            continue
        ref = call_ref(call)
        if ref.number is None:
            ref = dataclasses.replace(ref, number=_e164(numbers.get(str(call.get("phoneNumberId")))))
        found.append(report(ref, call))
    return found


def without_number(listed: Sequence[Json]) -> bool:
    """Whether a listed call names its number only by `phoneNumberId` (the numbers must be read to name it)."""
    return any(not _object(call.get("phoneNumber")).get("number") for call in listed)


def iso(at: datetime) -> str:
    """A time as Vapi's filters take it (ISO 8601, UTC, milliseconds)."""
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def recording_url(artifact: Json) -> str | None:
    """The call's recording in a report's artifact: `recording.mono.combinedUrl`, else `recording.stereoUrl`, else
    the deprecated `recordingUrl` (older reports carry only that)."""
    recorded = _object(artifact.get("recording"))
    mono = _object(recorded.get("mono"))
    return _text(mono.get("combinedUrl")) or _text(recorded.get("stereoUrl")) or _text(artifact.get("recordingUrl"))


def recording_consent(fields: Json) -> RecordingConsent | None:
    """The other party's answer to the disclosure (`compliance.recordingConsent`); None when the report says
    nothing."""
    consent = _object(_object(fields.get("compliance")).get("recordingConsent"))
    if not consent:
        return None
    return RecordingConsent(_text(consent.get("type")), _time(consent.get("grantedAt")))


def _destination(message: Json) -> str | None:
    """The phone a `forwarding` status update offers the call to (a number destination), if it names one."""
    number = _object(message.get("destination")).get("number")
    return number if isinstance(number, str) and number.strip() else None


def _stamp(stamp: object) -> datetime | None:
    """When Vapi says a message's event happened (its `timestamp`, milliseconds since the epoch)."""
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool) or not 0 < stamp < 1e14:
        return None
    return datetime.fromtimestamp(stamp / 1000, UTC)


def _e164(value: object) -> str | None:
    with contextlib.suppress(ServiceError):
        return normalize_e164(value) if isinstance(value, str) else None
    return None


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _time(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        return None


def _cents(cost: object) -> int:
    return max(0, round(cost * 100)) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0
