"""The event catalogue: every event type, its payload message (protos/switchboard/v1/events.proto) and
whether partners may subscribe webhooks to it (SPEC.md, Events).

Producers write `add_event(conn, outbox, events_pb2.LeadCreated(...), business_id)` (core.outbox); the type
follows from the message. Consumers read `data` back into the message with `parse`. A type without a
payload message is offered to partners already but produced by a capability still to come.
"""
from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from switchboard.v1 import accounts_pb2, events_pb2


@dataclass(frozen=True)
class EventType:
    type: str
    payload: builtins.type[Message] | None  # `type` is the field above in this class's scope
    partner: bool = True  # partners may subscribe webhooks to it


CATALOGUE: tuple[EventType, ...] = (
    EventType("lead.created", events_pb2.LeadCreated),
    EventType("lead.scored", events_pb2.LeadScored),
    EventType("call.received", events_pb2.CallReceived),
    EventType("call.started", events_pb2.CallStarted),
    EventType("call.completed", events_pb2.CallCompleted),
    EventType("call.failed", events_pb2.CallFailed),
    EventType("sms.received", events_pb2.SmsReceived),
    EventType("sms.sent", events_pb2.SmsSent),
    EventType("sms.delivered", events_pb2.SmsDelivered),
    EventType("sms.failed", events_pb2.SmsFailed),
    EventType("voicemail.received", events_pb2.VoicemailReceived),
    EventType("dispatcher.briefing_created", events_pb2.BriefingCreated),
    EventType("phone_number.assigned", events_pb2.PhoneNumberAssigned),
    EventType("phone_number.released", events_pb2.PhoneNumberReleased),
    EventType("workspace.paused", events_pb2.WorkspacePaused),
    EventType("workspace.canceled", events_pb2.WorkspaceCanceled),
    EventType("workspace.teardown_completed", events_pb2.WorkspaceTeardownCompleted),
    EventType("communication.touch_completed", events_pb2.CommunicationTouchCompleted),
    EventType("communication.touch_failed", events_pb2.CommunicationTouchFailed),
    EventType("communication.touch_deferred", events_pb2.CommunicationTouchDeferred),
    EventType("communication.run_ended", events_pb2.CommunicationRunEnded),
    EventType("booking.created", events_pb2.BookingCreated),
    EventType("booking.rescheduled", events_pb2.BookingRescheduled),
    EventType("booking.canceled", events_pb2.BookingCanceled),
    EventType("webhook.test", events_pb2.WebhookTest),
    # An erasure of a person is done (services.accounts.privacy): partners erase their own copies. Its payload is
    # the accounts service's (accounts.proto, beside the erasure it reports).
    EventType("erasure.completed", accounts_pb2.ErasureCompleted),
    EventType("agent.prompt_changed", events_pb2.AgentPromptChanged, partner=False),
    EventType("workspace.standing_changed", events_pb2.WorkspaceStandingChanged, partner=False),
    EventType("workspace.owner_notice", events_pb2.OwnerNotice, partner=False),
)

# What partners may subscribe to, in the spec's order.
PARTNER_EVENT_TYPES: tuple[str, ...] = tuple(e.type for e in CATALOGUE if e.partner)
_BY_PAYLOAD = {e.payload: e for e in CATALOGUE if e.payload is not None}
_BY_TYPE = {e.type: e for e in CATALOGUE}


def type_of(payload: Message) -> str:
    try:
        return _BY_PAYLOAD[type(payload)].type
    except KeyError:
        raise LookupError(f"{type(payload).__name__} is not in core.events.CATALOGUE") from None


def to_data(payload: Message) -> dict[str, Any]:
    """The payload as the envelope's `data`: proto field names, every field present, unset optionals null."""
    data = json_format.MessageToDict(payload, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)
    for field in payload.DESCRIPTOR.fields:
        if field.has_presence and not payload.HasField(field.name):
            data[field.name] = None
    return data


def parse(event_type: str, data: dict[str, Any]) -> Message:
    """An event's `data` as its payload message (null values as unset); ValueError when it does not fit."""
    payload = _BY_TYPE[event_type].payload
    if payload is None:
        raise LookupError(f"{event_type} has no payload message yet")
    try:
        return json_format.ParseDict({k: v for k, v in data.items() if v is not None}, payload(),
                                     ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise ValueError(f"{event_type} data does not fit {payload.__name__}: {exc}") from None


@dataclass(frozen=True)
class Envelope:
    """An event as it travels: the JSON form of events.proto `Event`, on the bus (`to_json`) and in a webhook
    body (`webhook_body`: the same fields plus the spec's names `event` and `timestamp`). `data` stays a dict
    rather than the proto's Struct, which would turn every integer into a double."""

    event_id: str
    type: str
    occurred_at: datetime
    business_id: str | None
    data: dict[str, Any]

    @property
    def stamp(self) -> str:
        return self.occurred_at.isoformat().replace("+00:00", "Z")

    def to_json(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "type": self.type, "occurred_at": self.stamp,
                "business_id": self.business_id, "data": self.data}

    def webhook_body(self) -> bytes:
        """The delivered JSON: the spec's {event, timestamp, business_id, data} plus event_id and occurred_at."""
        return json.dumps({"event_id": self.event_id, "event": self.type, "timestamp": self.stamp,
                           "occurred_at": self.stamp, "business_id": self.business_id, "data": self.data},
                          separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Envelope:
        """An envelope read from the bus; ValueError names what is missing or malformed."""
        try:
            occurred_at = datetime.fromisoformat(obj["occurred_at"].replace("Z", "+00:00"))
            return cls(str(obj["event_id"]), str(obj["type"]), occurred_at, obj.get("business_id") or None,
                       obj.get("data") or {})
        except (KeyError, AttributeError, TypeError, ValueError) as exc:
            raise ValueError(f"not an event envelope: {exc!r}") from None
