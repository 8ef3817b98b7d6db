import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchboard.v1 import common_pb2 as _common_pb2
from switchboard.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LeadFields(_message.Message):
    __slots__ = ("name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "status", "source", "source_url", "source_page", "notes", "message", "event_date", "event_type", "agent_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FIRST_NAME_FIELD_NUMBER: _ClassVar[int]
    LAST_NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    ZIP_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PAGE_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVENT_DATE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    first_name: str
    last_name: str
    email: str
    phone: str
    zip: str
    address: str
    city: str
    state: str
    status: str
    source: str
    source_url: str
    source_page: str
    notes: str
    message: str
    event_date: str
    event_type: str
    agent_id: str
    def __init__(self, name: _Optional[str] = ..., first_name: _Optional[str] = ..., last_name: _Optional[str] = ..., email: _Optional[str] = ..., phone: _Optional[str] = ..., zip: _Optional[str] = ..., address: _Optional[str] = ..., city: _Optional[str] = ..., state: _Optional[str] = ..., status: _Optional[str] = ..., source: _Optional[str] = ..., source_url: _Optional[str] = ..., source_page: _Optional[str] = ..., notes: _Optional[str] = ..., message: _Optional[str] = ..., event_date: _Optional[str] = ..., event_type: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class Lead(_message.Message):
    __slots__ = ("id", "name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "status", "source", "source_url", "source_page", "agent_id", "agent_name", "business_id", "notes", "message", "event_date", "event_type", "score", "created_at", "updated_at", "interaction_count", "score_confidence", "score_explanation", "score_factors", "converted_at", "last_inbound_at", "email_known_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FIRST_NAME_FIELD_NUMBER: _ClassVar[int]
    LAST_NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    ZIP_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PAGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVENT_DATE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    SCORE_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SCORE_EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FACTORS_FIELD_NUMBER: _ClassVar[int]
    CONVERTED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_INBOUND_AT_FIELD_NUMBER: _ClassVar[int]
    EMAIL_KNOWN_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    first_name: str
    last_name: str
    email: str
    phone: str
    zip: str
    address: str
    city: str
    state: str
    status: str
    source: str
    source_url: str
    source_page: str
    agent_id: str
    agent_name: str
    business_id: str
    notes: str
    message: str
    event_date: str
    event_type: str
    score: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    interaction_count: int
    score_confidence: str
    score_explanation: str
    score_factors: _containers.RepeatedScalarFieldContainer[str]
    converted_at: _timestamp_pb2.Timestamp
    last_inbound_at: _timestamp_pb2.Timestamp
    email_known_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., first_name: _Optional[str] = ..., last_name: _Optional[str] = ..., email: _Optional[str] = ..., phone: _Optional[str] = ..., zip: _Optional[str] = ..., address: _Optional[str] = ..., city: _Optional[str] = ..., state: _Optional[str] = ..., status: _Optional[str] = ..., source: _Optional[str] = ..., source_url: _Optional[str] = ..., source_page: _Optional[str] = ..., agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., business_id: _Optional[str] = ..., notes: _Optional[str] = ..., message: _Optional[str] = ..., event_date: _Optional[str] = ..., event_type: _Optional[str] = ..., score: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., interaction_count: _Optional[int] = ..., score_confidence: _Optional[str] = ..., score_explanation: _Optional[str] = ..., score_factors: _Optional[_Iterable[str]] = ..., converted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_inbound_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., email_known_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateLeadRequest(_message.Message):
    __slots__ = ("business_id", "fields")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    fields: LeadFields
    def __init__(self, business_id: _Optional[str] = ..., fields: _Optional[_Union[LeadFields, _Mapping]] = ...) -> None: ...

class UpdateLeadRequest(_message.Message):
    __slots__ = ("id", "fields")
    ID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    fields: LeadFields
    def __init__(self, id: _Optional[str] = ..., fields: _Optional[_Union[LeadFields, _Mapping]] = ...) -> None: ...

class GetLeadRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListLeadsRequest(_message.Message):
    __slots__ = ("statuses", "source", "agent_id", "phone", "email", "created_after", "created_before", "updated_after", "updated_before", "score_gte", "score_lte", "page")
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SCORE_GTE_FIELD_NUMBER: _ClassVar[int]
    SCORE_LTE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    statuses: _containers.RepeatedScalarFieldContainer[str]
    source: str
    agent_id: str
    phone: str
    email: str
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    updated_after: _timestamp_pb2.Timestamp
    updated_before: _timestamp_pb2.Timestamp
    score_gte: int
    score_lte: int
    page: _common_pb2.PageRequest
    def __init__(self, statuses: _Optional[_Iterable[str]] = ..., source: _Optional[str] = ..., agent_id: _Optional[str] = ..., phone: _Optional[str] = ..., email: _Optional[str] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., score_gte: _Optional[int] = ..., score_lte: _Optional[int] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListLeadsReply(_message.Message):
    __slots__ = ("leads", "page")
    LEADS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    leads: _containers.RepeatedCompositeFieldContainer[Lead]
    page: _common_pb2.PageInfo
    def __init__(self, leads: _Optional[_Iterable[_Union[Lead, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class AuditLeadsRequest(_message.Message):
    __slots__ = ("window_hours", "stalled_days", "hot_score", "as_of")
    WINDOW_HOURS_FIELD_NUMBER: _ClassVar[int]
    STALLED_DAYS_FIELD_NUMBER: _ClassVar[int]
    HOT_SCORE_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    window_hours: int
    stalled_days: int
    hot_score: int
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, window_hours: _Optional[int] = ..., stalled_days: _Optional[int] = ..., hot_score: _Optional[int] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class LeadGroup(_message.Message):
    __slots__ = ("count", "leads")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    count: int
    leads: _containers.RepeatedCompositeFieldContainer[Lead]
    def __init__(self, count: _Optional[int] = ..., leads: _Optional[_Iterable[_Union[Lead, _Mapping]]] = ...) -> None: ...

class Voicemail(_message.Message):
    __slots__ = ("id", "business_id", "lead_id", "call_id", "from_number", "transcript", "recording_url", "received_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    RECORDING_URL_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    lead_id: str
    call_id: str
    from_number: str
    transcript: str
    recording_url: str
    received_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ..., from_number: _Optional[str] = ..., transcript: _Optional[str] = ..., recording_url: _Optional[str] = ..., received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class VoicemailGroup(_message.Message):
    __slots__ = ("count", "voicemails")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    VOICEMAILS_FIELD_NUMBER: _ClassVar[int]
    count: int
    voicemails: _containers.RepeatedCompositeFieldContainer[Voicemail]
    def __init__(self, count: _Optional[int] = ..., voicemails: _Optional[_Iterable[_Union[Voicemail, _Mapping]]] = ...) -> None: ...

class LeadAudit(_message.Message):
    __slots__ = ("as_of", "window_hours", "stalled_days", "hot_score", "hot_leads", "stalled_leads", "signups_today", "voicemails_unhandled")
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    WINDOW_HOURS_FIELD_NUMBER: _ClassVar[int]
    STALLED_DAYS_FIELD_NUMBER: _ClassVar[int]
    HOT_SCORE_FIELD_NUMBER: _ClassVar[int]
    HOT_LEADS_FIELD_NUMBER: _ClassVar[int]
    STALLED_LEADS_FIELD_NUMBER: _ClassVar[int]
    SIGNUPS_TODAY_FIELD_NUMBER: _ClassVar[int]
    VOICEMAILS_UNHANDLED_FIELD_NUMBER: _ClassVar[int]
    as_of: _timestamp_pb2.Timestamp
    window_hours: int
    stalled_days: int
    hot_score: int
    hot_leads: LeadGroup
    stalled_leads: LeadGroup
    signups_today: LeadGroup
    voicemails_unhandled: VoicemailGroup
    def __init__(self, as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., window_hours: _Optional[int] = ..., stalled_days: _Optional[int] = ..., hot_score: _Optional[int] = ..., hot_leads: _Optional[_Union[LeadGroup, _Mapping]] = ..., stalled_leads: _Optional[_Union[LeadGroup, _Mapping]] = ..., signups_today: _Optional[_Union[LeadGroup, _Mapping]] = ..., voicemails_unhandled: _Optional[_Union[VoicemailGroup, _Mapping]] = ...) -> None: ...

class FindLeadByPhoneRequest(_message.Message):
    __slots__ = ("business_id", "phone")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ...) -> None: ...

class FoundLead(_message.Message):
    __slots__ = ("lead",)
    LEAD_FIELD_NUMBER: _ClassVar[int]
    lead: Lead
    def __init__(self, lead: _Optional[_Union[Lead, _Mapping]] = ...) -> None: ...

class UpsertContactRequest(_message.Message):
    __slots__ = ("business_id", "phone", "name", "email", "source", "agent_id", "agent_name")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    name: str
    email: str
    source: str
    agent_id: str
    agent_name: str
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., name: _Optional[str] = ..., email: _Optional[str] = ..., source: _Optional[str] = ..., agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ...) -> None: ...

class UpsertContactReply(_message.Message):
    __slots__ = ("lead", "created")
    LEAD_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    lead: Lead
    created: bool
    def __init__(self, lead: _Optional[_Union[Lead, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class RecordCallerLeadRequest(_message.Message):
    __slots__ = ("business_id", "phone", "call_id", "direction", "lead_id", "fields", "intent")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    call_id: str
    direction: str
    lead_id: str
    fields: LeadFields
    intent: str
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., call_id: _Optional[str] = ..., direction: _Optional[str] = ..., lead_id: _Optional[str] = ..., fields: _Optional[_Union[LeadFields, _Mapping]] = ..., intent: _Optional[str] = ...) -> None: ...

class RecordCallerLeadReply(_message.Message):
    __slots__ = ("lead", "created", "changed")
    LEAD_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    lead: Lead
    created: bool
    changed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lead: _Optional[_Union[Lead, _Mapping]] = ..., created: _Optional[bool] = ..., changed: _Optional[_Iterable[str]] = ...) -> None: ...

class RecordInteractionRequest(_message.Message):
    __slots__ = ("lead_id", "channel", "direction", "reference", "occurred_at", "intent")
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    lead_id: str
    channel: str
    direction: str
    reference: str
    occurred_at: _timestamp_pb2.Timestamp
    intent: str
    def __init__(self, lead_id: _Optional[str] = ..., channel: _Optional[str] = ..., direction: _Optional[str] = ..., reference: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., intent: _Optional[str] = ...) -> None: ...

class RunRequest(_message.Message):
    __slots__ = ("run_json", "idempotency_key")
    RUN_JSON_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    run_json: bytes
    idempotency_key: str
    def __init__(self, run_json: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class RunProblem(_message.Message):
    __slots__ = ("index", "touch_id", "field", "message")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    index: int
    touch_id: str
    field: str
    message: str
    def __init__(self, index: _Optional[int] = ..., touch_id: _Optional[str] = ..., field: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RunValidation(_message.Message):
    __slots__ = ("valid", "touches", "problems")
    VALID_FIELD_NUMBER: _ClassVar[int]
    TOUCHES_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    touches: int
    problems: _containers.RepeatedCompositeFieldContainer[RunProblem]
    def __init__(self, valid: _Optional[bool] = ..., touches: _Optional[int] = ..., problems: _Optional[_Iterable[_Union[RunProblem, _Mapping]]] = ...) -> None: ...

class PlannedTouch(_message.Message):
    __slots__ = ("index", "touch_id", "channel", "phone", "requested_at", "planned_at", "outcome", "rule", "code", "message")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    PLANNED_AT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    index: int
    touch_id: str
    channel: str
    phone: str
    requested_at: _timestamp_pb2.Timestamp
    planned_at: _timestamp_pb2.Timestamp
    outcome: str
    rule: str
    code: str
    message: str
    def __init__(self, index: _Optional[int] = ..., touch_id: _Optional[str] = ..., channel: _Optional[str] = ..., phone: _Optional[str] = ..., requested_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., planned_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., outcome: _Optional[str] = ..., rule: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RunPreview(_message.Message):
    __slots__ = ("touches", "by_channel", "by_outcome", "first_planned_at", "last_planned_at", "planned")
    class ByChannelEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class ByOutcomeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TOUCHES_FIELD_NUMBER: _ClassVar[int]
    BY_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    BY_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    FIRST_PLANNED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_PLANNED_AT_FIELD_NUMBER: _ClassVar[int]
    PLANNED_FIELD_NUMBER: _ClassVar[int]
    touches: int
    by_channel: _containers.ScalarMap[str, int]
    by_outcome: _containers.ScalarMap[str, int]
    first_planned_at: _timestamp_pb2.Timestamp
    last_planned_at: _timestamp_pb2.Timestamp
    planned: _containers.RepeatedCompositeFieldContainer[PlannedTouch]
    def __init__(self, touches: _Optional[int] = ..., by_channel: _Optional[_Mapping[str, int]] = ..., by_outcome: _Optional[_Mapping[str, int]] = ..., first_planned_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_planned_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., planned: _Optional[_Iterable[_Union[PlannedTouch, _Mapping]]] = ...) -> None: ...

class CommunicationRun(_message.Message):
    __slots__ = ("id", "business_id", "external_ref", "status", "agent_id", "touches", "jobs", "retry", "created_at", "updated_at", "started_at", "ended_at", "replayed")
    class JobsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOUCHES_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    external_ref: str
    status: str
    agent_id: str
    touches: int
    jobs: _containers.ScalarMap[str, int]
    retry: _struct_pb2.Struct
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    replayed: bool
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., status: _Optional[str] = ..., agent_id: _Optional[str] = ..., touches: _Optional[int] = ..., jobs: _Optional[_Mapping[str, int]] = ..., retry: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ("id", "external_ref", "business_id", "page")
    ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    external_ref: str
    business_id: str
    page: _common_pb2.PageRequest
    def __init__(self, id: _Optional[str] = ..., external_ref: _Optional[str] = ..., business_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListRunsReply(_message.Message):
    __slots__ = ("runs", "page")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[CommunicationRun]
    page: _common_pb2.PageInfo
    def __init__(self, runs: _Optional[_Iterable[_Union[CommunicationRun, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ChangeRunRequest(_message.Message):
    __slots__ = ("id", "action")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    action: str
    def __init__(self, id: _Optional[str] = ..., action: _Optional[str] = ...) -> None: ...

class CommunicationJob(_message.Message):
    __slots__ = ("id", "communication_run_id", "business_id", "external_ref", "touch_id", "touch_index", "channel", "phone", "timezone", "agent_id", "context", "scheduled_at", "planned_at", "status", "attempts", "rule", "code", "reason", "call_id", "message_id", "created_at", "updated_at", "ended_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOUCH_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_AT_FIELD_NUMBER: _ClassVar[int]
    PLANNED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    communication_run_id: str
    business_id: str
    external_ref: str
    touch_id: str
    touch_index: int
    channel: str
    phone: str
    timezone: str
    agent_id: str
    context: _struct_pb2.Struct
    scheduled_at: _timestamp_pb2.Timestamp
    planned_at: _timestamp_pb2.Timestamp
    status: str
    attempts: int
    rule: str
    code: str
    reason: str
    call_id: str
    message_id: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., communication_run_id: _Optional[str] = ..., business_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., touch_id: _Optional[str] = ..., touch_index: _Optional[int] = ..., channel: _Optional[str] = ..., phone: _Optional[str] = ..., timezone: _Optional[str] = ..., agent_id: _Optional[str] = ..., context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scheduled_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., planned_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., rule: _Optional[str] = ..., code: _Optional[str] = ..., reason: _Optional[str] = ..., call_id: _Optional[str] = ..., message_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("communication_run_id", "channel", "status", "id", "page")
    COMMUNICATION_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    communication_run_id: str
    channel: str
    status: str
    id: str
    page: _common_pb2.PageRequest
    def __init__(self, communication_run_id: _Optional[str] = ..., channel: _Optional[str] = ..., status: _Optional[str] = ..., id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListJobsReply(_message.Message):
    __slots__ = ("jobs", "page")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[CommunicationJob]
    page: _common_pb2.PageInfo
    def __init__(self, jobs: _Optional[_Iterable[_Union[CommunicationJob, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class CommunicationAttempt(_message.Message):
    __slots__ = ("id", "sequence_id", "job_id", "touch_id", "external_ref", "attempt", "call_id", "phone", "status", "retry_eligible", "reason", "next_attempt_at", "created_at", "ended_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TOUCH_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RETRY_ELIGIBLE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    sequence_id: str
    job_id: str
    touch_id: str
    external_ref: str
    attempt: int
    call_id: str
    phone: str
    status: str
    retry_eligible: bool
    reason: str
    next_attempt_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., sequence_id: _Optional[str] = ..., job_id: _Optional[str] = ..., touch_id: _Optional[str] = ..., external_ref: _Optional[str] = ..., attempt: _Optional[int] = ..., call_id: _Optional[str] = ..., phone: _Optional[str] = ..., status: _Optional[str] = ..., retry_eligible: _Optional[bool] = ..., reason: _Optional[str] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAttemptsRequest(_message.Message):
    __slots__ = ("sequence_id", "status", "page")
    SEQUENCE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    sequence_id: str
    status: str
    page: _common_pb2.PageRequest
    def __init__(self, sequence_id: _Optional[str] = ..., status: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListAttemptsReply(_message.Message):
    __slots__ = ("attempts", "page")
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[CommunicationAttempt]
    page: _common_pb2.PageInfo
    def __init__(self, attempts: _Optional[_Iterable[_Union[CommunicationAttempt, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class GetSdrConfigRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class SdrConfig(_message.Message):
    __slots__ = ("business_id", "enabled", "min_touch_gap_hours", "max_touches", "auto_call", "auto_email", "auto_sms", "sdr_agent_id", "business_hours_start", "business_hours_end", "email_from_account_id", "saved", "updated_at")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    MIN_TOUCH_GAP_HOURS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOUCHES_FIELD_NUMBER: _ClassVar[int]
    AUTO_CALL_FIELD_NUMBER: _ClassVar[int]
    AUTO_EMAIL_FIELD_NUMBER: _ClassVar[int]
    AUTO_SMS_FIELD_NUMBER: _ClassVar[int]
    SDR_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_START_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_END_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FROM_ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    SAVED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    enabled: bool
    min_touch_gap_hours: int
    max_touches: int
    auto_call: bool
    auto_email: bool
    auto_sms: bool
    sdr_agent_id: str
    business_hours_start: int
    business_hours_end: int
    email_from_account_id: str
    saved: bool
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., enabled: _Optional[bool] = ..., min_touch_gap_hours: _Optional[int] = ..., max_touches: _Optional[int] = ..., auto_call: _Optional[bool] = ..., auto_email: _Optional[bool] = ..., auto_sms: _Optional[bool] = ..., sdr_agent_id: _Optional[str] = ..., business_hours_start: _Optional[int] = ..., business_hours_end: _Optional[int] = ..., email_from_account_id: _Optional[str] = ..., saved: _Optional[bool] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PutSdrConfigRequest(_message.Message):
    __slots__ = ("business_id", "enabled", "min_touch_gap_hours", "max_touches", "auto_call", "auto_email", "auto_sms", "sdr_agent_id", "business_hours_start", "business_hours_end", "email_from_account_id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    MIN_TOUCH_GAP_HOURS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOUCHES_FIELD_NUMBER: _ClassVar[int]
    AUTO_CALL_FIELD_NUMBER: _ClassVar[int]
    AUTO_EMAIL_FIELD_NUMBER: _ClassVar[int]
    AUTO_SMS_FIELD_NUMBER: _ClassVar[int]
    SDR_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_START_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_HOURS_END_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FROM_ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    enabled: bool
    min_touch_gap_hours: int
    max_touches: int
    auto_call: bool
    auto_email: bool
    auto_sms: bool
    sdr_agent_id: str
    business_hours_start: int
    business_hours_end: int
    email_from_account_id: str
    def __init__(self, business_id: _Optional[str] = ..., enabled: _Optional[bool] = ..., min_touch_gap_hours: _Optional[int] = ..., max_touches: _Optional[int] = ..., auto_call: _Optional[bool] = ..., auto_email: _Optional[bool] = ..., auto_sms: _Optional[bool] = ..., sdr_agent_id: _Optional[str] = ..., business_hours_start: _Optional[int] = ..., business_hours_end: _Optional[int] = ..., email_from_account_id: _Optional[str] = ...) -> None: ...

class GetPipelineRequest(_message.Message):
    __slots__ = ("business_id", "segment", "limit")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    segment: str
    limit: int
    def __init__(self, business_id: _Optional[str] = ..., segment: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class PipelineLead(_message.Message):
    __slots__ = ("id", "name", "email", "phone", "status", "source", "segment", "score", "touch_count", "last_touch", "next_action", "next_action_reason", "next_action_at", "paused", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TOUCH_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_TOUCH_FIELD_NUMBER: _ClassVar[int]
    NEXT_ACTION_FIELD_NUMBER: _ClassVar[int]
    NEXT_ACTION_REASON_FIELD_NUMBER: _ClassVar[int]
    NEXT_ACTION_AT_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    email: str
    phone: str
    status: str
    source: str
    segment: str
    score: int
    touch_count: int
    last_touch: _timestamp_pb2.Timestamp
    next_action: str
    next_action_reason: str
    next_action_at: _timestamp_pb2.Timestamp
    paused: bool
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., email: _Optional[str] = ..., phone: _Optional[str] = ..., status: _Optional[str] = ..., source: _Optional[str] = ..., segment: _Optional[str] = ..., score: _Optional[int] = ..., touch_count: _Optional[int] = ..., last_touch: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., next_action: _Optional[str] = ..., next_action_reason: _Optional[str] = ..., next_action_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., paused: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PipelineSummary(_message.Message):
    __slots__ = ("total_leads", "actionable", "needs_manual")
    TOTAL_LEADS_FIELD_NUMBER: _ClassVar[int]
    ACTIONABLE_FIELD_NUMBER: _ClassVar[int]
    NEEDS_MANUAL_FIELD_NUMBER: _ClassVar[int]
    total_leads: int
    actionable: int
    needs_manual: int
    def __init__(self, total_leads: _Optional[int] = ..., actionable: _Optional[int] = ..., needs_manual: _Optional[int] = ...) -> None: ...

class Pipeline(_message.Message):
    __slots__ = ("business_id", "enabled", "summary", "leads")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    enabled: bool
    summary: PipelineSummary
    leads: _containers.RepeatedCompositeFieldContainer[PipelineLead]
    def __init__(self, business_id: _Optional[str] = ..., enabled: _Optional[bool] = ..., summary: _Optional[_Union[PipelineSummary, _Mapping]] = ..., leads: _Optional[_Iterable[_Union[PipelineLead, _Mapping]]] = ...) -> None: ...

class LeadActionRequest(_message.Message):
    __slots__ = ("business_id", "lead_id", "action")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    lead_id: str
    action: str
    def __init__(self, business_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., action: _Optional[str] = ...) -> None: ...

class LeadActionReply(_message.Message):
    __slots__ = ("success", "action", "lead_id", "detail", "replayed")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    success: bool
    action: str
    lead_id: str
    detail: str
    replayed: bool
    def __init__(self, success: _Optional[bool] = ..., action: _Optional[str] = ..., lead_id: _Optional[str] = ..., detail: _Optional[str] = ..., replayed: _Optional[bool] = ...) -> None: ...

class ListPipelineActivityRequest(_message.Message):
    __slots__ = ("business_id", "lead_id", "limit")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    lead_id: str
    limit: int
    def __init__(self, business_id: _Optional[str] = ..., lead_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class PipelineActivity(_message.Message):
    __slots__ = ("id", "lead_id", "action", "status", "detail", "touch_number", "reference", "origin", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    TOUCH_NUMBER_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    lead_id: str
    action: str
    status: str
    detail: str
    touch_number: int
    reference: str
    origin: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., lead_id: _Optional[str] = ..., action: _Optional[str] = ..., status: _Optional[str] = ..., detail: _Optional[str] = ..., touch_number: _Optional[int] = ..., reference: _Optional[str] = ..., origin: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PipelineActivityList(_message.Message):
    __slots__ = ("activity",)
    ACTIVITY_FIELD_NUMBER: _ClassVar[int]
    activity: _containers.RepeatedCompositeFieldContainer[PipelineActivity]
    def __init__(self, activity: _Optional[_Iterable[_Union[PipelineActivity, _Mapping]]] = ...) -> None: ...

class RunPipelineRequest(_message.Message):
    __slots__ = ("business_id", "dry_run")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    dry_run: bool
    def __init__(self, business_id: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class PipelineRunSummary(_message.Message):
    __slots__ = ("calls_queued", "emails_queued", "sms_sent", "escalated", "failed")
    CALLS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    EMAILS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    SMS_SENT_FIELD_NUMBER: _ClassVar[int]
    ESCALATED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    calls_queued: int
    emails_queued: int
    sms_sent: int
    escalated: int
    failed: int
    def __init__(self, calls_queued: _Optional[int] = ..., emails_queued: _Optional[int] = ..., sms_sent: _Optional[int] = ..., escalated: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class PipelineRunResult(_message.Message):
    __slots__ = ("success", "action", "lead_id", "detail", "code")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    action: str
    lead_id: str
    detail: str
    code: str
    def __init__(self, success: _Optional[bool] = ..., action: _Optional[str] = ..., lead_id: _Optional[str] = ..., detail: _Optional[str] = ..., code: _Optional[str] = ...) -> None: ...

class PipelineRunReply(_message.Message):
    __slots__ = ("success", "dry_run", "summary", "results", "skipped")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    success: bool
    dry_run: bool
    summary: PipelineRunSummary
    results: _containers.RepeatedCompositeFieldContainer[PipelineRunResult]
    skipped: int
    def __init__(self, success: _Optional[bool] = ..., dry_run: _Optional[bool] = ..., summary: _Optional[_Union[PipelineRunSummary, _Mapping]] = ..., results: _Optional[_Iterable[_Union[PipelineRunResult, _Mapping]]] = ..., skipped: _Optional[int] = ...) -> None: ...

class RunScheduledRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class ScheduledBusinessRun(_message.Message):
    __slots__ = ("business_id", "status", "briefing_id", "summary", "skipped")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BRIEFING_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    status: str
    briefing_id: str
    summary: PipelineRunSummary
    skipped: int
    def __init__(self, business_id: _Optional[str] = ..., status: _Optional[str] = ..., briefing_id: _Optional[str] = ..., summary: _Optional[_Union[PipelineRunSummary, _Mapping]] = ..., skipped: _Optional[int] = ...) -> None: ...

class RunScheduledReply(_message.Message):
    __slots__ = ("window_start", "runs")
    WINDOW_START_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    window_start: _timestamp_pb2.Timestamp
    runs: _containers.RepeatedCompositeFieldContainer[ScheduledBusinessRun]
    def __init__(self, window_start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., runs: _Optional[_Iterable[_Union[ScheduledBusinessRun, _Mapping]]] = ...) -> None: ...

class GetPipelineReportRequest(_message.Message):
    __slots__ = ("business_id", "period")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    period: str
    def __init__(self, business_id: _Optional[str] = ..., period: _Optional[str] = ...) -> None: ...

class PipelineReport(_message.Message):
    __slots__ = ("business_id", "period", "since", "until", "actions", "outcomes", "new_leads", "hot_leads", "stale_leads")
    class ActionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class OutcomesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    NEW_LEADS_FIELD_NUMBER: _ClassVar[int]
    HOT_LEADS_FIELD_NUMBER: _ClassVar[int]
    STALE_LEADS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    period: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    actions: _containers.ScalarMap[str, int]
    outcomes: _containers.ScalarMap[str, int]
    new_leads: int
    hot_leads: _containers.RepeatedCompositeFieldContainer[PipelineLead]
    stale_leads: _containers.RepeatedCompositeFieldContainer[PipelineLead]
    def __init__(self, business_id: _Optional[str] = ..., period: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actions: _Optional[_Mapping[str, int]] = ..., outcomes: _Optional[_Mapping[str, int]] = ..., new_leads: _Optional[int] = ..., hot_leads: _Optional[_Iterable[_Union[PipelineLead, _Mapping]]] = ..., stale_leads: _Optional[_Iterable[_Union[PipelineLead, _Mapping]]] = ...) -> None: ...

class ReportPeriod(_message.Message):
    __slots__ = ("days", "since")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    days: int
    since: str
    def __init__(self, days: _Optional[int] = ..., since: _Optional[str] = ...) -> None: ...

class DashboardReportRequest(_message.Message):
    __slots__ = ("days", "recent_leads")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    RECENT_LEADS_FIELD_NUMBER: _ClassVar[int]
    days: int
    recent_leads: bool
    def __init__(self, days: _Optional[int] = ..., recent_leads: _Optional[bool] = ...) -> None: ...

class DashboardLeads(_message.Message):
    __slots__ = ("total", "by_status", "conversion_rate", "recent")
    class ByStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BY_STATUS_FIELD_NUMBER: _ClassVar[int]
    CONVERSION_RATE_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    total: int
    by_status: _containers.ScalarMap[str, int]
    conversion_rate: float
    recent: _containers.RepeatedCompositeFieldContainer[Lead]
    def __init__(self, total: _Optional[int] = ..., by_status: _Optional[_Mapping[str, int]] = ..., conversion_rate: _Optional[float] = ..., recent: _Optional[_Iterable[_Union[Lead, _Mapping]]] = ...) -> None: ...

class DashboardCalls(_message.Message):
    __slots__ = ("total", "completed", "total_duration_seconds", "avg_duration_seconds")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    total: int
    completed: int
    total_duration_seconds: int
    avg_duration_seconds: float
    def __init__(self, total: _Optional[int] = ..., completed: _Optional[int] = ..., total_duration_seconds: _Optional[int] = ..., avg_duration_seconds: _Optional[float] = ...) -> None: ...

class AgentCallCount(_message.Message):
    __slots__ = ("agent_id", "name", "count", "total_duration", "avg_duration")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    count: int
    total_duration: int
    avg_duration: float
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., count: _Optional[int] = ..., total_duration: _Optional[int] = ..., avg_duration: _Optional[float] = ...) -> None: ...

class DashboardAgents(_message.Message):
    __slots__ = ("total", "top_by_calls")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TOP_BY_CALLS_FIELD_NUMBER: _ClassVar[int]
    total: int
    top_by_calls: _containers.RepeatedCompositeFieldContainer[AgentCallCount]
    def __init__(self, total: _Optional[int] = ..., top_by_calls: _Optional[_Iterable[_Union[AgentCallCount, _Mapping]]] = ...) -> None: ...

class DashboardReport(_message.Message):
    __slots__ = ("period", "leads", "calls", "agents")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    period: ReportPeriod
    leads: DashboardLeads
    calls: DashboardCalls
    agents: DashboardAgents
    def __init__(self, period: _Optional[_Union[ReportPeriod, _Mapping]] = ..., leads: _Optional[_Union[DashboardLeads, _Mapping]] = ..., calls: _Optional[_Union[DashboardCalls, _Mapping]] = ..., agents: _Optional[_Union[DashboardAgents, _Mapping]] = ...) -> None: ...

class CallsReportRequest(_message.Message):
    __slots__ = ("days", "group_by", "agent_id")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    days: int
    group_by: str
    agent_id: str
    def __init__(self, days: _Optional[int] = ..., group_by: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class CallsPeriod(_message.Message):
    __slots__ = ("days", "since", "group_by")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    days: int
    since: str
    group_by: str
    def __init__(self, days: _Optional[int] = ..., since: _Optional[str] = ..., group_by: _Optional[str] = ...) -> None: ...

class CallsSummary(_message.Message):
    __slots__ = ("total_calls", "total_duration_seconds", "avg_duration_seconds")
    TOTAL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    total_calls: int
    total_duration_seconds: int
    avg_duration_seconds: float
    def __init__(self, total_calls: _Optional[int] = ..., total_duration_seconds: _Optional[int] = ..., avg_duration_seconds: _Optional[float] = ...) -> None: ...

class CallsBucket(_message.Message):
    __slots__ = ("date", "total", "completed", "total_duration", "avg_duration_seconds", "statuses")
    class StatusesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DATE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    date: str
    total: int
    completed: int
    total_duration: int
    avg_duration_seconds: float
    statuses: _containers.ScalarMap[str, int]
    def __init__(self, date: _Optional[str] = ..., total: _Optional[int] = ..., completed: _Optional[int] = ..., total_duration: _Optional[int] = ..., avg_duration_seconds: _Optional[float] = ..., statuses: _Optional[_Mapping[str, int]] = ...) -> None: ...

class CallsReport(_message.Message):
    __slots__ = ("period", "summary", "timeline")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TIMELINE_FIELD_NUMBER: _ClassVar[int]
    period: CallsPeriod
    summary: CallsSummary
    timeline: _containers.RepeatedCompositeFieldContainer[CallsBucket]
    def __init__(self, period: _Optional[_Union[CallsPeriod, _Mapping]] = ..., summary: _Optional[_Union[CallsSummary, _Mapping]] = ..., timeline: _Optional[_Iterable[_Union[CallsBucket, _Mapping]]] = ...) -> None: ...

class FunnelReportRequest(_message.Message):
    __slots__ = ("days", "source")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    days: int
    source: str
    def __init__(self, days: _Optional[int] = ..., source: _Optional[str] = ...) -> None: ...

class FunnelStage(_message.Message):
    __slots__ = ("stage", "count", "rate_from_top", "dropoff_rate")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    RATE_FROM_TOP_FIELD_NUMBER: _ClassVar[int]
    DROPOFF_RATE_FIELD_NUMBER: _ClassVar[int]
    stage: str
    count: int
    rate_from_top: float
    dropoff_rate: float
    def __init__(self, stage: _Optional[str] = ..., count: _Optional[int] = ..., rate_from_top: _Optional[float] = ..., dropoff_rate: _Optional[float] = ...) -> None: ...

class FunnelReport(_message.Message):
    __slots__ = ("period", "total_leads", "lost", "funnel")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LEADS_FIELD_NUMBER: _ClassVar[int]
    LOST_FIELD_NUMBER: _ClassVar[int]
    FUNNEL_FIELD_NUMBER: _ClassVar[int]
    period: ReportPeriod
    total_leads: int
    lost: int
    funnel: _containers.RepeatedCompositeFieldContainer[FunnelStage]
    def __init__(self, period: _Optional[_Union[ReportPeriod, _Mapping]] = ..., total_leads: _Optional[int] = ..., lost: _Optional[int] = ..., funnel: _Optional[_Iterable[_Union[FunnelStage, _Mapping]]] = ...) -> None: ...

class LeadFigures(_message.Message):
    __slots__ = ("total", "converted", "conversion_rate")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    CONVERTED_FIELD_NUMBER: _ClassVar[int]
    CONVERSION_RATE_FIELD_NUMBER: _ClassVar[int]
    total: int
    converted: int
    conversion_rate: float
    def __init__(self, total: _Optional[int] = ..., converted: _Optional[int] = ..., conversion_rate: _Optional[float] = ...) -> None: ...

class AgentsReportRequest(_message.Message):
    __slots__ = ("days", "agent_id")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    days: int
    agent_id: str
    def __init__(self, days: _Optional[int] = ..., agent_id: _Optional[str] = ...) -> None: ...

class AgentCallFigures(_message.Message):
    __slots__ = ("total", "completed", "avg_duration_seconds", "total_duration_seconds")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    total: int
    completed: int
    avg_duration_seconds: float
    total_duration_seconds: int
    def __init__(self, total: _Optional[int] = ..., completed: _Optional[int] = ..., avg_duration_seconds: _Optional[float] = ..., total_duration_seconds: _Optional[int] = ...) -> None: ...

class AgentFigures(_message.Message):
    __slots__ = ("agent_id", "agent_name", "calls", "leads")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent_name: str
    calls: AgentCallFigures
    leads: LeadFigures
    def __init__(self, agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., calls: _Optional[_Union[AgentCallFigures, _Mapping]] = ..., leads: _Optional[_Union[LeadFigures, _Mapping]] = ...) -> None: ...

class AgentsReport(_message.Message):
    __slots__ = ("period", "agents")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    period: ReportPeriod
    agents: _containers.RepeatedCompositeFieldContainer[AgentFigures]
    def __init__(self, period: _Optional[_Union[ReportPeriod, _Mapping]] = ..., agents: _Optional[_Iterable[_Union[AgentFigures, _Mapping]]] = ...) -> None: ...

class WeeklyReportRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WeekDates(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: str
    end: str
    def __init__(self, start: _Optional[str] = ..., end: _Optional[str] = ...) -> None: ...

class WeekPeriod(_message.Message):
    __slots__ = ("this_week", "last_week")
    THIS_WEEK_FIELD_NUMBER: _ClassVar[int]
    LAST_WEEK_FIELD_NUMBER: _ClassVar[int]
    this_week: WeekDates
    last_week: WeekDates
    def __init__(self, this_week: _Optional[_Union[WeekDates, _Mapping]] = ..., last_week: _Optional[_Union[WeekDates, _Mapping]] = ...) -> None: ...

class WeekOverWeek(_message.Message):
    __slots__ = ("this_week", "last_week", "change")
    THIS_WEEK_FIELD_NUMBER: _ClassVar[int]
    LAST_WEEK_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    this_week: int
    last_week: int
    change: float
    def __init__(self, this_week: _Optional[int] = ..., last_week: _Optional[int] = ..., change: _Optional[float] = ...) -> None: ...

class WeeklyAgent(_message.Message):
    __slots__ = ("agent_id", "agent_name", "total_calls", "total_duration_seconds")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent_name: str
    total_calls: int
    total_duration_seconds: int
    def __init__(self, agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., total_calls: _Optional[int] = ..., total_duration_seconds: _Optional[int] = ...) -> None: ...

class WeeklyReport(_message.Message):
    __slots__ = ("period", "calls", "leads", "top_agents")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    TOP_AGENTS_FIELD_NUMBER: _ClassVar[int]
    period: WeekPeriod
    calls: WeekOverWeek
    leads: WeekOverWeek
    top_agents: _containers.RepeatedCompositeFieldContainer[WeeklyAgent]
    def __init__(self, period: _Optional[_Union[WeekPeriod, _Mapping]] = ..., calls: _Optional[_Union[WeekOverWeek, _Mapping]] = ..., leads: _Optional[_Union[WeekOverWeek, _Mapping]] = ..., top_agents: _Optional[_Iterable[_Union[WeeklyAgent, _Mapping]]] = ...) -> None: ...

class BusinessesReportRequest(_message.Message):
    __slots__ = ("days",)
    DAYS_FIELD_NUMBER: _ClassVar[int]
    days: int
    def __init__(self, days: _Optional[int] = ...) -> None: ...

class BusinessCallFigures(_message.Message):
    __slots__ = ("total", "completed", "avg_duration_seconds")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    total: int
    completed: int
    avg_duration_seconds: float
    def __init__(self, total: _Optional[int] = ..., completed: _Optional[int] = ..., avg_duration_seconds: _Optional[float] = ...) -> None: ...

class BusinessFigures(_message.Message):
    __slots__ = ("business_id", "business_name", "calls", "leads")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_NAME_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    LEADS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    business_name: str
    calls: BusinessCallFigures
    leads: LeadFigures
    def __init__(self, business_id: _Optional[str] = ..., business_name: _Optional[str] = ..., calls: _Optional[_Union[BusinessCallFigures, _Mapping]] = ..., leads: _Optional[_Union[LeadFigures, _Mapping]] = ...) -> None: ...

class BusinessesReport(_message.Message):
    __slots__ = ("period", "businesses")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    period: ReportPeriod
    businesses: _containers.RepeatedCompositeFieldContainer[BusinessFigures]
    def __init__(self, period: _Optional[_Union[ReportPeriod, _Mapping]] = ..., businesses: _Optional[_Iterable[_Union[BusinessFigures, _Mapping]]] = ...) -> None: ...

class BusinessInfoRequest(_message.Message):
    __slots__ = ("business_id", "call_counts")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_COUNTS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    call_counts: bool
    def __init__(self, business_id: _Optional[str] = ..., call_counts: _Optional[bool] = ...) -> None: ...

class BusinessFacts(_message.Message):
    __slots__ = ("id", "name", "status", "subscription_status", "timezone", "created_at", "agent_count", "phone_numbers", "calls_last_7_days", "calls_last_30_days")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    AGENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    CALLS_LAST_7_DAYS_FIELD_NUMBER: _ClassVar[int]
    CALLS_LAST_30_DAYS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    status: str
    subscription_status: str
    timezone: str
    created_at: _timestamp_pb2.Timestamp
    agent_count: int
    phone_numbers: _containers.RepeatedScalarFieldContainer[str]
    calls_last_7_days: int
    calls_last_30_days: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[str] = ..., subscription_status: _Optional[str] = ..., timezone: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_count: _Optional[int] = ..., phone_numbers: _Optional[_Iterable[str]] = ..., calls_last_7_days: _Optional[int] = ..., calls_last_30_days: _Optional[int] = ...) -> None: ...

class BusinessInfo(_message.Message):
    __slots__ = ("businesses",)
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    businesses: _containers.RepeatedCompositeFieldContainer[BusinessFacts]
    def __init__(self, businesses: _Optional[_Iterable[_Union[BusinessFacts, _Mapping]]] = ...) -> None: ...

class GetHealthRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProviderStatuses(_message.Message):
    __slots__ = ("voice", "messaging", "payments")
    VOICE_FIELD_NUMBER: _ClassVar[int]
    MESSAGING_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    voice: str
    messaging: str
    payments: str
    def __init__(self, voice: _Optional[str] = ..., messaging: _Optional[str] = ..., payments: _Optional[str] = ...) -> None: ...

class PlatformHealth(_message.Message):
    __slots__ = ("services", "providers")
    class ServicesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    services: _containers.ScalarMap[str, str]
    providers: ProviderStatuses
    def __init__(self, services: _Optional[_Mapping[str, str]] = ..., providers: _Optional[_Union[ProviderStatuses, _Mapping]] = ...) -> None: ...

class GetAvailabilityRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class Availability(_message.Message):
    __slots__ = ("business_id", "timezone", "weekly_hours", "slot_minutes", "buffer_minutes", "blackout_dates", "horizon_days", "saved", "updated_at")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    WEEKLY_HOURS_FIELD_NUMBER: _ClassVar[int]
    SLOT_MINUTES_FIELD_NUMBER: _ClassVar[int]
    BUFFER_MINUTES_FIELD_NUMBER: _ClassVar[int]
    BLACKOUT_DATES_FIELD_NUMBER: _ClassVar[int]
    HORIZON_DAYS_FIELD_NUMBER: _ClassVar[int]
    SAVED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    timezone: str
    weekly_hours: _struct_pb2.Struct
    slot_minutes: int
    buffer_minutes: int
    blackout_dates: _containers.RepeatedScalarFieldContainer[str]
    horizon_days: int
    saved: bool
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., timezone: _Optional[str] = ..., weekly_hours: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., slot_minutes: _Optional[int] = ..., buffer_minutes: _Optional[int] = ..., blackout_dates: _Optional[_Iterable[str]] = ..., horizon_days: _Optional[int] = ..., saved: _Optional[bool] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PutAvailabilityRequest(_message.Message):
    __slots__ = ("business_id", "weekly_hours", "slot_minutes", "buffer_minutes", "blackout_dates", "horizon_days")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEEKLY_HOURS_FIELD_NUMBER: _ClassVar[int]
    SLOT_MINUTES_FIELD_NUMBER: _ClassVar[int]
    BUFFER_MINUTES_FIELD_NUMBER: _ClassVar[int]
    BLACKOUT_DATES_FIELD_NUMBER: _ClassVar[int]
    HORIZON_DAYS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    weekly_hours: _struct_pb2.Struct
    slot_minutes: int
    buffer_minutes: int
    blackout_dates: _containers.RepeatedScalarFieldContainer[str]
    horizon_days: int
    def __init__(self, business_id: _Optional[str] = ..., weekly_hours: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., slot_minutes: _Optional[int] = ..., buffer_minutes: _Optional[int] = ..., blackout_dates: _Optional[_Iterable[str]] = ..., horizon_days: _Optional[int] = ...) -> None: ...

class ListSlotsRequest(_message.Message):
    __slots__ = ("business_id", "date", "from_date", "to_date")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    FROM_DATE_FIELD_NUMBER: _ClassVar[int]
    TO_DATE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    date: str
    from_date: str
    to_date: str
    def __init__(self, business_id: _Optional[str] = ..., date: _Optional[str] = ..., from_date: _Optional[str] = ..., to_date: _Optional[str] = ...) -> None: ...

class Slot(_message.Message):
    __slots__ = ("starts_at", "ends_at")
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    starts_at: str
    ends_at: str
    def __init__(self, starts_at: _Optional[str] = ..., ends_at: _Optional[str] = ...) -> None: ...

class SlotList(_message.Message):
    __slots__ = ("business_id", "timezone", "slots")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    timezone: str
    slots: _containers.RepeatedCompositeFieldContainer[Slot]
    def __init__(self, business_id: _Optional[str] = ..., timezone: _Optional[str] = ..., slots: _Optional[_Iterable[_Union[Slot, _Mapping]]] = ...) -> None: ...

class Booking(_message.Message):
    __slots__ = ("id", "business_id", "starts_at", "ends_at", "timezone", "status", "name", "phone_number", "email", "notes", "lead_id", "call_id", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
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
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
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
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., starts_at: _Optional[str] = ..., ends_at: _Optional[str] = ..., timezone: _Optional[str] = ..., status: _Optional[str] = ..., name: _Optional[str] = ..., phone_number: _Optional[str] = ..., email: _Optional[str] = ..., notes: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateBookingRequest(_message.Message):
    __slots__ = ("business_id", "starts_at", "name", "phone_number", "email", "notes", "lead_id", "call_id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    starts_at: _timestamp_pb2.Timestamp
    name: str
    phone_number: str
    email: str
    notes: str
    lead_id: str
    call_id: str
    def __init__(self, business_id: _Optional[str] = ..., starts_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., name: _Optional[str] = ..., phone_number: _Optional[str] = ..., email: _Optional[str] = ..., notes: _Optional[str] = ..., lead_id: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class ListBookingsRequest(_message.Message):
    __slots__ = ("id", "business_id", "from_time", "to_time", "status", "page")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_TIME_FIELD_NUMBER: _ClassVar[int]
    TO_TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    from_time: _timestamp_pb2.Timestamp
    to_time: _timestamp_pb2.Timestamp
    status: str
    page: _common_pb2.PageRequest
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., from_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., to_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListBookingsReply(_message.Message):
    __slots__ = ("bookings", "page")
    BOOKINGS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    bookings: _containers.RepeatedCompositeFieldContainer[Booking]
    page: _common_pb2.PageInfo
    def __init__(self, bookings: _Optional[_Iterable[_Union[Booking, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ChangeBookingRequest(_message.Message):
    __slots__ = ("id", "starts_at", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    STARTS_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    starts_at: _timestamp_pb2.Timestamp
    status: str
    def __init__(self, id: _Optional[str] = ..., starts_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[str] = ...) -> None: ...
