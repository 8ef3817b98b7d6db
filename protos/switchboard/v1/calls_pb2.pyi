import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchboard.v1 import common_pb2 as _common_pb2
from switchboard.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ComplianceMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPLIANCE_MODE_UNSPECIFIED: _ClassVar[ComplianceMode]
    COMPLIANCE_MODE_SKIP: _ClassVar[ComplianceMode]
    COMPLIANCE_MODE_ENFORCE: _ClassVar[ComplianceMode]
COMPLIANCE_MODE_UNSPECIFIED: ComplianceMode
COMPLIANCE_MODE_SKIP: ComplianceMode
COMPLIANCE_MODE_ENFORCE: ComplianceMode

class GetRecordingRequest(_message.Message):
    __slots__ = ("call_id",)
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    def __init__(self, call_id: _Optional[str] = ...) -> None: ...

class Recording(_message.Message):
    __slots__ = ("call_id", "recording_status", "transcript_status", "recording_url", "recording_url_expires_at", "duration")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDING_STATUS_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_STATUS_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    recording_status: str
    transcript_status: str
    recording_url: str
    recording_url_expires_at: _timestamp_pb2.Timestamp
    duration: int
    def __init__(self, call_id: _Optional[str] = ..., recording_status: _Optional[str] = ..., transcript_status: _Optional[str] = ..., recording_url: _Optional[str] = ..., recording_url_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., duration: _Optional[int] = ...) -> None: ...

class GetRecordingSourceRequest(_message.Message):
    __slots__ = ("call_id", "expires", "signature")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    expires: int
    signature: str
    def __init__(self, call_id: _Optional[str] = ..., expires: _Optional[int] = ..., signature: _Optional[str] = ...) -> None: ...

class RecordingSource(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class ProviderMessage(_message.Message):
    __slots__ = ("body",)
    BODY_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    def __init__(self, body: _Optional[bytes] = ...) -> None: ...

class ProviderMessageReply(_message.Message):
    __slots__ = ("response_json",)
    RESPONSE_JSON_FIELD_NUMBER: _ClassVar[int]
    response_json: str
    def __init__(self, response_json: _Optional[str] = ...) -> None: ...

class CreateCallRequest(_message.Message):
    __slots__ = ("agent_id", "to", "name", "context", "first_message", "lead_id", "webhook_url", "max_duration", "idempotency_key", "compliance", "callee_timezone", "actor", "reference", "external_ref", "touch_id", "business_hours")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_URL_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    COMPLIANCE_FIELD_NUMBER: _ClassVar[int]
    CALLEE_TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    to: str
    name: str
    context: str
    first_message: str
    lead_id: str
    webhook_url: str
    max_duration: int
    idempotency_key: str
    compliance: ComplianceMode
    callee_timezone: str
    actor: str
    reference: str
    external_ref: str
    touch_id: str
    business_hours: _common_pb2.BusinessHours
    def __init__(self, agent_id: _Optional[str] = ..., to: _Optional[str] = ..., name: _Optional[str] = ..., context: _Optional[str] = ..., first_message: _Optional[str] = ..., lead_id: _Optional[str] = ..., webhook_url: _Optional[str] = ..., max_duration: _Optional[int] = ..., idempotency_key: _Optional[str] = ..., compliance: _Optional[_Union[ComplianceMode, str]] = ..., callee_timezone: _Optional[str] = ..., actor: _Optional[str] = ..., reference: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., business_hours: _Optional[_Union[_common_pb2.BusinessHours, _Mapping]] = ...) -> None: ...

class PlaceCallReply(_message.Message):
    __slots__ = ("call", "deferred")
    CALL_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_FIELD_NUMBER: _ClassVar[int]
    call: Call
    deferred: _common_pb2.ComplianceDecision
    def __init__(self, call: _Optional[_Union[Call, _Mapping]] = ..., deferred: _Optional[_Union[_common_pb2.ComplianceDecision, _Mapping]] = ...) -> None: ...

class GetCallRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListCallsRequest(_message.Message):
    __slots__ = ("agent_id", "status", "page", "business_id", "direction", "created_from", "created_before")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FROM_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    status: str
    page: _common_pb2.PageRequest
    business_id: str
    direction: str
    created_from: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    def __init__(self, agent_id: _Optional[str] = ..., status: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., business_id: _Optional[str] = ..., direction: _Optional[str] = ..., created_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListCallsReply(_message.Message):
    __slots__ = ("calls", "page")
    CALLS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[Call]
    page: _common_pb2.PageInfo
    def __init__(self, calls: _Optional[_Iterable[_Union[Call, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ListTranscriptsRequest(_message.Message):
    __slots__ = ("agent_id", "days", "page")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    days: int
    page: _common_pb2.PageRequest
    def __init__(self, agent_id: _Optional[str] = ..., days: _Optional[int] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class Transcript(_message.Message):
    __slots__ = ("call_id", "conversation_id", "agent_id", "agent_name", "status", "duration", "summary", "transcript", "created_at")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    conversation_id: str
    agent_id: str
    agent_name: str
    status: str
    duration: int
    summary: str
    transcript: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, call_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., status: _Optional[str] = ..., duration: _Optional[int] = ..., summary: _Optional[str] = ..., transcript: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListTranscriptsReply(_message.Message):
    __slots__ = ("transcripts", "page")
    TRANSCRIPTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    transcripts: _containers.RepeatedCompositeFieldContainer[Transcript]
    page: _common_pb2.PageInfo
    def __init__(self, transcripts: _Optional[_Iterable[_Union[Transcript, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class QualityDimensions(_message.Message):
    __slots__ = ("professionalism", "empathy", "information_gathering", "resolution")
    PROFESSIONALISM_FIELD_NUMBER: _ClassVar[int]
    EMPATHY_FIELD_NUMBER: _ClassVar[int]
    INFORMATION_GATHERING_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    professionalism: int
    empathy: int
    information_gathering: int
    resolution: int
    def __init__(self, professionalism: _Optional[int] = ..., empathy: _Optional[int] = ..., information_gathering: _Optional[int] = ..., resolution: _Optional[int] = ...) -> None: ...

class Call(_message.Message):
    __slots__ = ("id", "conversation_id", "status", "direction", "duration", "agent_id", "agent_name", "business_id", "lead_id", "to", "name", "summary", "recording_url", "quality_dimensions", "created_at", "ended_reason", "context", "max_duration", "variables", "updated_at", "forwarded_to", "started_at", "ended_at", "structured_data", "recording_disclosure", "tool_calls")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_FIELD_NUMBER: _ClassVar[int]
    QUALITY_DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    ENDED_REASON_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    FORWARDED_TO_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_DATA_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    id: str
    conversation_id: str
    status: str
    direction: str
    duration: int
    agent_id: str
    agent_name: str
    business_id: str
    lead_id: str
    to: str
    name: str
    summary: str
    recording_url: str
    quality_dimensions: QualityDimensions
    created_at: _timestamp_pb2.Timestamp
    ended_reason: str
    context: str
    max_duration: int
    variables: _struct_pb2.Struct
    updated_at: _timestamp_pb2.Timestamp
    forwarded_to: str
    started_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    structured_data: _struct_pb2.Struct
    recording_disclosure: CallRecordingDisclosure
    tool_calls: _containers.RepeatedCompositeFieldContainer[CallToolCall]
    def __init__(self, id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., status: _Optional[str] = ..., direction: _Optional[str] = ..., duration: _Optional[int] = ..., agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., business_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., to: _Optional[str] = ..., name: _Optional[str] = ..., summary: _Optional[str] = ..., recording_url: _Optional[str] = ..., quality_dimensions: _Optional[_Union[QualityDimensions, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_reason: _Optional[str] = ..., context: _Optional[str] = ..., max_duration: _Optional[int] = ..., variables: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., forwarded_to: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., structured_data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., recording_disclosure: _Optional[_Union[CallRecordingDisclosure, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[CallToolCall, _Mapping]]] = ..., **kwargs) -> None: ...

class CallToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments", "result", "outcome", "duration_ms", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments: _struct_pb2.Struct
    result: str
    outcome: str
    duration_ms: int
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., result: _Optional[str] = ..., outcome: _Optional[str] = ..., duration_ms: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CallRecordingDisclosure(_message.Message):
    __slots__ = ("spoken", "reason", "states", "rules", "consent_type", "consent", "consent_granted_at")
    SPOKEN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    CONSENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONSENT_FIELD_NUMBER: _ClassVar[int]
    CONSENT_GRANTED_AT_FIELD_NUMBER: _ClassVar[int]
    spoken: bool
    reason: str
    states: _containers.RepeatedScalarFieldContainer[str]
    rules: _containers.RepeatedCompositeFieldContainer[RecordingConsentRule]
    consent_type: str
    consent: str
    consent_granted_at: _timestamp_pb2.Timestamp
    def __init__(self, spoken: _Optional[bool] = ..., reason: _Optional[str] = ..., states: _Optional[_Iterable[str]] = ..., rules: _Optional[_Iterable[_Union[RecordingConsentRule, _Mapping]]] = ..., consent_type: _Optional[str] = ..., consent: _Optional[str] = ..., consent_granted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecordingConsentRule(_message.Message):
    __slots__ = ("state", "statute")
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUTE_FIELD_NUMBER: _ClassVar[int]
    state: str
    statute: str
    def __init__(self, state: _Optional[str] = ..., statute: _Optional[str] = ...) -> None: ...
