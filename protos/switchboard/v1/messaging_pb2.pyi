import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchboard.v1 import common_pb2 as _common_pb2
from switchboard.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetDailySpendRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DailyLimits(_message.Message):
    __slots__ = ("calls_per_day", "call_minutes_per_day", "texts_per_day", "emails_per_day")
    CALLS_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    CALL_MINUTES_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    TEXTS_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    EMAILS_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    calls_per_day: int
    call_minutes_per_day: int
    texts_per_day: int
    emails_per_day: int
    def __init__(self, calls_per_day: _Optional[int] = ..., call_minutes_per_day: _Optional[int] = ..., texts_per_day: _Optional[int] = ..., emails_per_day: _Optional[int] = ...) -> None: ...

class DailyUse(_message.Message):
    __slots__ = ("calls", "call_minutes", "texts", "emails")
    CALLS_FIELD_NUMBER: _ClassVar[int]
    CALL_MINUTES_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    EMAILS_FIELD_NUMBER: _ClassVar[int]
    calls: int
    call_minutes: int
    texts: int
    emails: int
    def __init__(self, calls: _Optional[int] = ..., call_minutes: _Optional[int] = ..., texts: _Optional[int] = ..., emails: _Optional[int] = ...) -> None: ...

class DailySpend(_message.Message):
    __slots__ = ("business_id", "plan_id", "day", "limits", "today", "resets_at")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    TODAY_FIELD_NUMBER: _ClassVar[int]
    RESETS_AT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    plan_id: str
    day: str
    limits: DailyLimits
    today: DailyUse
    resets_at: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., plan_id: _Optional[str] = ..., day: _Optional[str] = ..., limits: _Optional[_Union[DailyLimits, _Mapping]] = ..., today: _Optional[_Union[DailyUse, _Mapping]] = ..., resets_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetDailySpendReply(_message.Message):
    __slots__ = ("businesses",)
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    businesses: _containers.RepeatedCompositeFieldContainer[DailySpend]
    def __init__(self, businesses: _Optional[_Iterable[_Union[DailySpend, _Mapping]]] = ...) -> None: ...

class DecideCallRequest(_message.Message):
    __slots__ = ("business_id", "phone", "timezone", "lead_id", "lead_state", "lead_status", "sender", "actor", "reference", "business_hours", "lead_converted_at", "lead_last_inbound_at")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_STATE_FIELD_NUMBER: _ClassVar[int]
    LEAD_STATUS_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_FIELD_NUMBER: _ClassVar[int]
    LEAD_CONVERTED_AT_FIELD_NUMBER: _ClassVar[int]
    LEAD_LAST_INBOUND_AT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    timezone: str
    lead_id: str
    lead_state: str
    lead_status: str
    sender: str
    actor: str
    reference: str
    business_hours: _common_pb2.BusinessHours
    lead_converted_at: _timestamp_pb2.Timestamp
    lead_last_inbound_at: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., timezone: _Optional[str] = ..., lead_id: _Optional[str] = ..., lead_state: _Optional[str] = ..., lead_status: _Optional[str] = ..., sender: _Optional[str] = ..., actor: _Optional[str] = ..., reference: _Optional[str] = ..., business_hours: _Optional[_Union[_common_pb2.BusinessHours, _Mapping]] = ..., lead_converted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lead_last_inbound_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReleaseCallSlotRequest(_message.Message):
    __slots__ = ("decision_id",)
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    def __init__(self, decision_id: _Optional[str] = ...) -> None: ...

class ReleaseCallSlotReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListComplianceDecisionsRequest(_message.Message):
    __slots__ = ("business_id", "phone", "lead_id", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    lead_id: str
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., lead_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListComplianceDecisionsReply(_message.Message):
    __slots__ = ("decisions", "page")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[_common_pb2.ComplianceDecision]
    page: _common_pb2.PageInfo
    def __init__(self, decisions: _Optional[_Iterable[_Union[_common_pb2.ComplianceDecision, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("business_id", "phones")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONES_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phones: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, business_id: _Optional[str] = ..., phones: _Optional[_Iterable[str]] = ...) -> None: ...

class CalleeStanding(_message.Message):
    __slots__ = ("phone", "platform_dnc", "business_dnc_since", "consent", "recent_touches", "national", "national_listed", "national_refreshed_at")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_DNC_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_DNC_SINCE_FIELD_NUMBER: _ClassVar[int]
    CONSENT_FIELD_NUMBER: _ClassVar[int]
    RECENT_TOUCHES_FIELD_NUMBER: _ClassVar[int]
    NATIONAL_FIELD_NUMBER: _ClassVar[int]
    NATIONAL_LISTED_FIELD_NUMBER: _ClassVar[int]
    NATIONAL_REFRESHED_AT_FIELD_NUMBER: _ClassVar[int]
    phone: str
    platform_dnc: bool
    business_dnc_since: _timestamp_pb2.Timestamp
    consent: str
    recent_touches: _containers.RepeatedCompositeFieldContainer[CountedTouch]
    national: str
    national_listed: bool
    national_refreshed_at: _timestamp_pb2.Timestamp
    def __init__(self, phone: _Optional[str] = ..., platform_dnc: _Optional[bool] = ..., business_dnc_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., consent: _Optional[str] = ..., recent_touches: _Optional[_Iterable[_Union[CountedTouch, _Mapping]]] = ..., national: _Optional[str] = ..., national_listed: _Optional[bool] = ..., national_refreshed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CountedTouch(_message.Message):
    __slots__ = ("channel", "at")
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    channel: str
    at: _timestamp_pb2.Timestamp
    def __init__(self, channel: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetStandingsReply(_message.Message):
    __slots__ = ("standings",)
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    standings: _containers.RepeatedCompositeFieldContainer[CalleeStanding]
    def __init__(self, standings: _Optional[_Iterable[_Union[CalleeStanding, _Mapping]]] = ...) -> None: ...

class SendSmsRequest(_message.Message):
    __slots__ = ("to", "from_agent_id", "message", "lead_id", "idempotency_key", "callee_timezone", "actor", "reference", "external_ref", "touch_id", "business_hours", "requested_on_call")
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CALLEE_TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_ON_CALL_FIELD_NUMBER: _ClassVar[int]
    to: str
    from_agent_id: str
    message: str
    lead_id: str
    idempotency_key: str
    callee_timezone: str
    actor: str
    reference: str
    external_ref: str
    touch_id: str
    business_hours: _common_pb2.BusinessHours
    requested_on_call: str
    def __init__(self, to: _Optional[str] = ..., from_agent_id: _Optional[str] = ..., message: _Optional[str] = ..., lead_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., callee_timezone: _Optional[str] = ..., actor: _Optional[str] = ..., reference: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., business_hours: _Optional[_Union[_common_pb2.BusinessHours, _Mapping]] = ..., requested_on_call: _Optional[str] = ...) -> None: ...

class PlaceSmsReply(_message.Message):
    __slots__ = ("sent", "deferred")
    SENT_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_FIELD_NUMBER: _ClassVar[int]
    sent: SmsSendReply
    deferred: _common_pb2.ComplianceDecision
    def __init__(self, sent: _Optional[_Union[SmsSendReply, _Mapping]] = ..., deferred: _Optional[_Union[_common_pb2.ComplianceDecision, _Mapping]] = ...) -> None: ...

class SmsSendReply(_message.Message):
    __slots__ = ("success", "message_sid", "to", "message_id", "conversation_id", "status")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message_sid: str
    to: str
    message_id: str
    conversation_id: str
    status: str
    def __init__(self, success: _Optional[bool] = ..., message_sid: _Optional[str] = ..., to: _Optional[str] = ..., message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., status: _Optional[str] = ..., **kwargs) -> None: ...

class ProviderRequest(_message.Message):
    __slots__ = ("params",)
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    params: _containers.ScalarMap[str, str]
    def __init__(self, params: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ProviderReply(_message.Message):
    __slots__ = ("content_type", "body")
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    content_type: str
    body: str
    def __init__(self, content_type: _Optional[str] = ..., body: _Optional[str] = ...) -> None: ...

class Conversation(_message.Message):
    __slots__ = ("id", "business_id", "business_number", "contact_number", "agent_id", "lead_id", "message_count", "inbound_count", "outbound_count", "unread_count", "last_message_at", "last_message_preview", "last_message_direction", "last_message_status", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_NUMBER_FIELD_NUMBER: _ClassVar[int]
    CONTACT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    INBOUND_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTBOUND_COUNT_FIELD_NUMBER: _ClassVar[int]
    UNREAD_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_PREVIEW_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_DIRECTION_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    business_number: str
    contact_number: str
    agent_id: str
    lead_id: str
    message_count: int
    inbound_count: int
    outbound_count: int
    unread_count: int
    last_message_at: _timestamp_pb2.Timestamp
    last_message_preview: str
    last_message_direction: str
    last_message_status: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., business_number: _Optional[str] = ..., contact_number: _Optional[str] = ..., agent_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., message_count: _Optional[int] = ..., inbound_count: _Optional[int] = ..., outbound_count: _Optional[int] = ..., unread_count: _Optional[int] = ..., last_message_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_message_preview: _Optional[str] = ..., last_message_direction: _Optional[str] = ..., last_message_status: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListConversationsRequest(_message.Message):
    __slots__ = ("id", "page")
    ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    page: _common_pb2.PageRequest
    def __init__(self, id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListConversationsReply(_message.Message):
    __slots__ = ("conversations", "page")
    CONVERSATIONS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    conversations: _containers.RepeatedCompositeFieldContainer[Conversation]
    page: _common_pb2.PageInfo
    def __init__(self, conversations: _Optional[_Iterable[_Union[Conversation, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("id", "conversation_id", "business_id", "direction", "to", "body", "status", "message_sid", "error_code", "error_message", "agent_id", "lead_id", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    conversation_id: str
    business_id: str
    direction: str
    to: str
    body: str
    status: str
    message_sid: str
    error_code: str
    error_message: str
    agent_id: str
    lead_id: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., business_id: _Optional[str] = ..., direction: _Optional[str] = ..., to: _Optional[str] = ..., body: _Optional[str] = ..., status: _Optional[str] = ..., message_sid: _Optional[str] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., agent_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., **kwargs) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("conversation_id", "direction", "page")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    direction: str
    page: _common_pb2.PageRequest
    def __init__(self, conversation_id: _Optional[str] = ..., direction: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListMessagesReply(_message.Message):
    __slots__ = ("messages", "page")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    page: _common_pb2.PageInfo
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ConsentChange(_message.Message):
    __slots__ = ("kind", "source", "actor", "reference", "note", "at")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    source: str
    actor: str
    reference: str
    note: str
    at: _timestamp_pb2.Timestamp
    def __init__(self, kind: _Optional[str] = ..., source: _Optional[str] = ..., actor: _Optional[str] = ..., reference: _Optional[str] = ..., note: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Consent(_message.Message):
    __slots__ = ("business_id", "phone", "state", "can_text", "history", "conversational_until")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CAN_TEXT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    CONVERSATIONAL_UNTIL_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    state: str
    can_text: bool
    history: _containers.RepeatedCompositeFieldContainer[ConsentChange]
    conversational_until: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., state: _Optional[str] = ..., can_text: _Optional[bool] = ..., history: _Optional[_Iterable[_Union[ConsentChange, _Mapping]]] = ..., conversational_until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetConsentRequest(_message.Message):
    __slots__ = ("phone", "business_id")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ...) -> None: ...

class RecordConsentRequest(_message.Message):
    __slots__ = ("phone", "business_id", "state", "note")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    state: str
    note: str
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ..., state: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...

class DncEntry(_message.Message):
    __slots__ = ("id", "business_id", "phone", "reason", "added_by", "created_at", "removed_at", "removed_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ADDED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REMOVED_AT_FIELD_NUMBER: _ClassVar[int]
    REMOVED_REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    phone: str
    reason: str
    added_by: str
    created_at: _timestamp_pb2.Timestamp
    removed_at: _timestamp_pb2.Timestamp
    removed_reason: str
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., phone: _Optional[str] = ..., reason: _Optional[str] = ..., added_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., removed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., removed_reason: _Optional[str] = ...) -> None: ...

class AddDncRequest(_message.Message):
    __slots__ = ("phone", "business_id", "reason")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    reason: str
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CheckDncRequest(_message.Message):
    __slots__ = ("phone", "business_id")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ...) -> None: ...

class DncCheck(_message.Message):
    __slots__ = ("phone", "business_id", "listed", "entry", "platform")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    LISTED_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    listed: bool
    entry: DncEntry
    platform: bool
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ..., listed: _Optional[bool] = ..., entry: _Optional[_Union[DncEntry, _Mapping]] = ..., platform: _Optional[bool] = ...) -> None: ...

class ListDncRequest(_message.Message):
    __slots__ = ("business_id", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListDncReply(_message.Message):
    __slots__ = ("entries", "page")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[DncEntry]
    page: _common_pb2.PageInfo
    def __init__(self, entries: _Optional[_Iterable[_Union[DncEntry, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class RemoveDncRequest(_message.Message):
    __slots__ = ("phone", "business_id", "reason")
    PHONE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    phone: str
    business_id: str
    reason: str
    def __init__(self, phone: _Optional[str] = ..., business_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CheckProviderRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProviderStatus(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: str
    def __init__(self, status: _Optional[str] = ...) -> None: ...

class Email(_message.Message):
    __slots__ = ("id", "business_id", "kind", "to", "subject", "body", "status", "attempts", "last_error", "message_id", "created_by", "approved_by", "approved_at", "next_attempt_at", "sent_at", "created_at", "updated_at", "recipient")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    APPROVED_BY_FIELD_NUMBER: _ClassVar[int]
    APPROVED_AT_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    kind: str
    to: str
    subject: str
    body: str
    status: str
    attempts: int
    last_error: str
    message_id: str
    created_by: str
    approved_by: str
    approved_at: _timestamp_pb2.Timestamp
    next_attempt_at: _timestamp_pb2.Timestamp
    sent_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    recipient: str
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., kind: _Optional[str] = ..., to: _Optional[str] = ..., subject: _Optional[str] = ..., body: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., last_error: _Optional[str] = ..., message_id: _Optional[str] = ..., created_by: _Optional[str] = ..., approved_by: _Optional[str] = ..., approved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., recipient: _Optional[str] = ...) -> None: ...

class QueueEmailRequest(_message.Message):
    __slots__ = ("to", "subject", "body", "business_id", "hold_for_approval")
    TO_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    HOLD_FOR_APPROVAL_FIELD_NUMBER: _ClassVar[int]
    to: str
    subject: str
    body: str
    business_id: str
    hold_for_approval: bool
    def __init__(self, to: _Optional[str] = ..., subject: _Optional[str] = ..., body: _Optional[str] = ..., business_id: _Optional[str] = ..., hold_for_approval: _Optional[bool] = ...) -> None: ...

class ApproveEmailRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListEmailsRequest(_message.Message):
    __slots__ = ("id", "status", "page")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: str
    page: _common_pb2.PageRequest
    def __init__(self, id: _Optional[str] = ..., status: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListEmailsReply(_message.Message):
    __slots__ = ("emails", "page")
    EMAILS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    emails: _containers.RepeatedCompositeFieldContainer[Email]
    page: _common_pb2.PageInfo
    def __init__(self, emails: _Optional[_Iterable[_Union[Email, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...
