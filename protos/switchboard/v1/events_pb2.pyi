import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Event(_message.Message):
    __slots__ = ("event_id", "type", "occurred_at", "business_id", "data")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    type: str
    occurred_at: _timestamp_pb2.Timestamp
    business_id: str
    data: _struct_pb2.Struct
    def __init__(self, event_id: _Optional[str] = ..., type: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., business_id: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class LeadCreated(_message.Message):
    __slots__ = ("id", "name", "email", "phone", "source")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    email: str
    phone: str
    source: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., email: _Optional[str] = ..., phone: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class LeadScored(_message.Message):
    __slots__ = ("lead_id", "score", "confidence", "explanation", "factors")
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    FACTORS_FIELD_NUMBER: _ClassVar[int]
    lead_id: str
    score: int
    confidence: str
    explanation: str
    factors: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lead_id: _Optional[str] = ..., score: _Optional[int] = ..., confidence: _Optional[str] = ..., explanation: _Optional[str] = ..., factors: _Optional[_Iterable[str]] = ...) -> None: ...

class PhoneNumberAssigned(_message.Message):
    __slots__ = ("id", "phone_number", "business_id", "agent_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    phone_number: str
    business_id: str
    agent_id: str
    def __init__(self, id: _Optional[str] = ..., phone_number: _Optional[str] = ..., business_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class PhoneNumberReleased(_message.Message):
    __slots__ = ("id", "phone_number", "business_id", "agent_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    phone_number: str
    business_id: str
    agent_id: str
    def __init__(self, id: _Optional[str] = ..., phone_number: _Optional[str] = ..., business_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class WorkspacePaused(_message.Message):
    __slots__ = ("business_id", "previous_state", "lifecycle_state", "reason")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STATE_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    previous_state: str
    lifecycle_state: str
    reason: str
    def __init__(self, business_id: _Optional[str] = ..., previous_state: _Optional[str] = ..., lifecycle_state: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class WorkspaceCanceled(_message.Message):
    __slots__ = ("business_id", "previous_state", "lifecycle_state", "reason")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STATE_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    previous_state: str
    lifecycle_state: str
    reason: str
    def __init__(self, business_id: _Optional[str] = ..., previous_state: _Optional[str] = ..., lifecycle_state: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class WorkspaceTeardownCompleted(_message.Message):
    __slots__ = ("business_id", "previous_state", "lifecycle_state")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STATE_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STATE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    previous_state: str
    lifecycle_state: str
    def __init__(self, business_id: _Optional[str] = ..., previous_state: _Optional[str] = ..., lifecycle_state: _Optional[str] = ...) -> None: ...

class WorkspaceStandingChanged(_message.Message):
    __slots__ = ("business_id", "account_id", "standing", "previous_standing")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STANDING_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    account_id: str
    standing: str
    previous_standing: str
    def __init__(self, business_id: _Optional[str] = ..., account_id: _Optional[str] = ..., standing: _Optional[str] = ..., previous_standing: _Optional[str] = ...) -> None: ...

class OwnerNotice(_message.Message):
    __slots__ = ("business_id", "subject", "body")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    subject: str
    body: str
    def __init__(self, business_id: _Optional[str] = ..., subject: _Optional[str] = ..., body: _Optional[str] = ...) -> None: ...

class AgentPromptChanged(_message.Message):
    __slots__ = ("agent_id", "agent_name", "business_id", "fields", "source", "reason", "version", "notify")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent_name: str
    business_id: str
    fields: _containers.RepeatedScalarFieldContainer[str]
    source: str
    reason: str
    version: int
    notify: str
    def __init__(self, agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., business_id: _Optional[str] = ..., fields: _Optional[_Iterable[str]] = ..., source: _Optional[str] = ..., reason: _Optional[str] = ..., version: _Optional[int] = ..., notify: _Optional[str] = ...) -> None: ...

class VoicemailReceived(_message.Message):
    __slots__ = ("call_id", "from_number", "transcript", "recording_url", "lead_id", "received_at")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    from_number: str
    transcript: str
    recording_url: str
    lead_id: str
    received_at: str
    def __init__(self, call_id: _Optional[str] = ..., from_number: _Optional[str] = ..., transcript: _Optional[str] = ..., recording_url: _Optional[str] = ..., lead_id: _Optional[str] = ..., received_at: _Optional[str] = ...) -> None: ...

class CallReceived(_message.Message):
    __slots__ = ("call_id", "conversation_id", "agent_id", "to", "lead_id")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    conversation_id: str
    agent_id: str
    to: str
    lead_id: str
    def __init__(self, call_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., to: _Optional[str] = ..., lead_id: _Optional[str] = ..., **kwargs) -> None: ...

class CallStarted(_message.Message):
    __slots__ = ("call_id", "conversation_id", "agent_id", "direction", "to", "lead_id", "external_ref", "touch_id")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    conversation_id: str
    agent_id: str
    direction: str
    to: str
    lead_id: str
    external_ref: str
    touch_id: str
    def __init__(self, call_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., direction: _Optional[str] = ..., to: _Optional[str] = ..., lead_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class CallCompleted(_message.Message):
    __slots__ = ("call_id", "conversation_id", "agent_id", "direction", "status", "to", "lead_id", "duration", "summary", "ended_reason", "recording_url", "contact_name", "contact_email", "intent", "cost_cents", "webhook_url", "external_ref", "touch_id")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ENDED_REASON_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_FIELD_NUMBER: _ClassVar[int]
    CONTACT_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTACT_EMAIL_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    COST_CENTS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_URL_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    conversation_id: str
    agent_id: str
    direction: str
    status: str
    to: str
    lead_id: str
    duration: int
    summary: str
    ended_reason: str
    recording_url: str
    contact_name: str
    contact_email: str
    intent: str
    cost_cents: int
    webhook_url: str
    external_ref: str
    touch_id: str
    def __init__(self, call_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., direction: _Optional[str] = ..., status: _Optional[str] = ..., to: _Optional[str] = ..., lead_id: _Optional[str] = ..., duration: _Optional[int] = ..., summary: _Optional[str] = ..., ended_reason: _Optional[str] = ..., recording_url: _Optional[str] = ..., contact_name: _Optional[str] = ..., contact_email: _Optional[str] = ..., intent: _Optional[str] = ..., cost_cents: _Optional[int] = ..., webhook_url: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class CallFailed(_message.Message):
    __slots__ = ("call_id", "conversation_id", "agent_id", "direction", "status", "to", "lead_id", "ended_reason", "cost_cents", "webhook_url", "external_ref", "touch_id")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    ENDED_REASON_FIELD_NUMBER: _ClassVar[int]
    COST_CENTS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_URL_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    conversation_id: str
    agent_id: str
    direction: str
    status: str
    to: str
    lead_id: str
    ended_reason: str
    cost_cents: int
    webhook_url: str
    external_ref: str
    touch_id: str
    def __init__(self, call_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., direction: _Optional[str] = ..., status: _Optional[str] = ..., to: _Optional[str] = ..., lead_id: _Optional[str] = ..., ended_reason: _Optional[str] = ..., cost_cents: _Optional[int] = ..., webhook_url: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class WebhookTest(_message.Message):
    __slots__ = ("message", "sent_at")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    message: str
    sent_at: str
    def __init__(self, message: _Optional[str] = ..., sent_at: _Optional[str] = ...) -> None: ...

class SmsSent(_message.Message):
    __slots__ = ("message_id", "conversation_id", "message_sid", "agent_id", "to", "lead_id", "external_ref", "touch_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    message_sid: str
    agent_id: str
    to: str
    lead_id: str
    external_ref: str
    touch_id: str
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., message_sid: _Optional[str] = ..., agent_id: _Optional[str] = ..., to: _Optional[str] = ..., lead_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class SmsDelivered(_message.Message):
    __slots__ = ("message_id", "conversation_id", "message_sid", "to", "external_ref", "touch_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    message_sid: str
    to: str
    external_ref: str
    touch_id: str
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., message_sid: _Optional[str] = ..., to: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class SmsFailed(_message.Message):
    __slots__ = ("message_id", "conversation_id", "message_sid", "to", "status", "error_code", "error_message", "external_ref", "touch_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    message_sid: str
    to: str
    status: str
    error_code: str
    error_message: str
    external_ref: str
    touch_id: str
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., message_sid: _Optional[str] = ..., to: _Optional[str] = ..., status: _Optional[str] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., **kwargs) -> None: ...

class SmsReceived(_message.Message):
    __slots__ = ("message_id", "conversation_id", "message_sid", "to", "body", "agent_id", "lead_id", "keyword")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SID_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    message_sid: str
    to: str
    body: str
    agent_id: str
    lead_id: str
    keyword: str
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., message_sid: _Optional[str] = ..., to: _Optional[str] = ..., body: _Optional[str] = ..., agent_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., keyword: _Optional[str] = ..., **kwargs) -> None: ...

class CommunicationTouchCompleted(_message.Message):
    __slots__ = ("communication_run_id", "job_id", "external_ref", "touch_id", "channel", "to", "outcome", "attempts", "call_id", "message_id")
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    communication_run_id: str
    job_id: str
    external_ref: str
    touch_id: str
    channel: str
    to: str
    outcome: str
    attempts: int
    call_id: str
    message_id: str
    def __init__(self, communication_run_id: _Optional[str] = ..., job_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., channel: _Optional[str] = ..., to: _Optional[str] = ..., outcome: _Optional[str] = ..., attempts: _Optional[int] = ..., call_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class CommunicationTouchFailed(_message.Message):
    __slots__ = ("communication_run_id", "job_id", "external_ref", "touch_id", "channel", "to", "status", "code", "reason", "attempts", "call_id", "message_id")
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    communication_run_id: str
    job_id: str
    external_ref: str
    touch_id: str
    channel: str
    to: str
    status: str
    code: str
    reason: str
    attempts: int
    call_id: str
    message_id: str
    def __init__(self, communication_run_id: _Optional[str] = ..., job_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., channel: _Optional[str] = ..., to: _Optional[str] = ..., status: _Optional[str] = ..., code: _Optional[str] = ..., reason: _Optional[str] = ..., attempts: _Optional[int] = ..., call_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class CommunicationTouchDeferred(_message.Message):
    __slots__ = ("communication_run_id", "job_id", "external_ref", "touch_id", "channel", "to", "rule", "message", "not_before")
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    communication_run_id: str
    job_id: str
    external_ref: str
    touch_id: str
    channel: str
    to: str
    rule: str
    message: str
    not_before: str
    def __init__(self, communication_run_id: _Optional[str] = ..., job_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., channel: _Optional[str] = ..., to: _Optional[str] = ..., rule: _Optional[str] = ..., message: _Optional[str] = ..., not_before: _Optional[str] = ...) -> None: ...

class CommunicationRunEnded(_message.Message):
    __slots__ = ("communication_run_id", "external_ref", "status", "touches", "succeeded", "failed", "refused", "canceled")
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOUCHES_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    CANCELED_FIELD_NUMBER: _ClassVar[int]
    communication_run_id: str
    external_ref: str
    status: str
    touches: int
    succeeded: int
    failed: int
    refused: int
    canceled: int
    def __init__(self, communication_run_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., status: _Optional[str] = ..., touches: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., refused: _Optional[int] = ..., canceled: _Optional[int] = ...) -> None: ...

class BookingCreated(_message.Message):
    __slots__ = ("id", "starts_at", "ends_at", "timezone", "status", "name", "phone_number", "email", "notes", "lead_id", "call_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    starts_at: str
    ends_at: str
    timezone: str
    status: str
    name: str
    phone_number: str
    email: str
    notes: str
    lead_id: str
    call_id: str
    def __init__(self, id: _Optional[str] = ..., starts_at: _Optional[str] = ..., ends_at: _Optional[str] = ..., timezone: _Optional[str] = ..., status: _Optional[str] = ..., name: _Optional[str] = ..., phone_number: _Optional[str] = ..., email: _Optional[str] = ..., notes: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class BookingRescheduled(_message.Message):
    __slots__ = ("id", "starts_at", "ends_at", "timezone", "status", "name", "phone_number", "email", "notes", "lead_id", "call_id", "previous_starts_at", "previous_ends_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    starts_at: str
    ends_at: str
    timezone: str
    status: str
    name: str
    phone_number: str
    email: str
    notes: str
    lead_id: str
    call_id: str
    previous_starts_at: str
    previous_ends_at: str
    def __init__(self, id: _Optional[str] = ..., starts_at: _Optional[str] = ..., ends_at: _Optional[str] = ..., timezone: _Optional[str] = ..., status: _Optional[str] = ..., name: _Optional[str] = ..., phone_number: _Optional[str] = ..., email: _Optional[str] = ..., notes: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ..., previous_starts_at: _Optional[str] = ..., previous_ends_at: _Optional[str] = ...) -> None: ...

class BookingCanceled(_message.Message):
    __slots__ = ("id", "starts_at", "ends_at", "timezone", "status", "name", "phone_number", "email", "notes", "lead_id", "call_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    starts_at: str
    ends_at: str
    timezone: str
    status: str
    name: str
    phone_number: str
    email: str
    notes: str
    lead_id: str
    call_id: str
    def __init__(self, id: _Optional[str] = ..., starts_at: _Optional[str] = ..., ends_at: _Optional[str] = ..., timezone: _Optional[str] = ..., status: _Optional[str] = ..., name: _Optional[str] = ..., phone_number: _Optional[str] = ..., email: _Optional[str] = ..., notes: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class BriefingCreated(_message.Message):
    __slots__ = ("briefing_id", "window_start", "calls_queued", "emails_queued", "sms_sent", "escalated", "failed", "skipped", "needs_owner", "email_id")
    BRIEFING_ID_FIELD_NUMBER: _ClassVar[int]
    WINDOW_START_FIELD_NUMBER: _ClassVar[int]
    CALLS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    EMAILS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    SMS_SENT_FIELD_NUMBER: _ClassVar[int]
    ESCALATED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    NEEDS_OWNER_FIELD_NUMBER: _ClassVar[int]
    EMAIL_ID_FIELD_NUMBER: _ClassVar[int]
    briefing_id: str
    window_start: str
    calls_queued: int
    emails_queued: int
    sms_sent: int
    escalated: int
    failed: int
    skipped: int
    needs_owner: _containers.RepeatedCompositeFieldContainer[BriefingLead]
    email_id: str
    def __init__(self, briefing_id: _Optional[str] = ..., window_start: _Optional[str] = ..., calls_queued: _Optional[int] = ..., emails_queued: _Optional[int] = ..., sms_sent: _Optional[int] = ..., escalated: _Optional[int] = ..., failed: _Optional[int] = ..., skipped: _Optional[int] = ..., needs_owner: _Optional[_Iterable[_Union[BriefingLead, _Mapping]]] = ..., email_id: _Optional[str] = ...) -> None: ...

class BriefingLead(_message.Message):
    __slots__ = ("lead_id", "name", "reason")
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lead_id: str
    name: str
    reason: str
    def __init__(self, lead_id: _Optional[str] = ..., name: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
