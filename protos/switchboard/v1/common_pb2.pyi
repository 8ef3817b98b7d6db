import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PageRequest(_message.Message):
    __slots__ = ("limit", "after", "cursor")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    limit: int
    after: _timestamp_pb2.Timestamp
    cursor: str
    def __init__(self, limit: _Optional[int] = ..., after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cursor: _Optional[str] = ...) -> None: ...

class PageInfo(_message.Message):
    __slots__ = ("has_more", "next_cursor")
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    has_more: bool
    next_cursor: str
    def __init__(self, has_more: _Optional[bool] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class BusinessZone(_message.Message):
    __slots__ = ("business_id", "timezone")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    timezone: str
    def __init__(self, business_id: _Optional[str] = ..., timezone: _Optional[str] = ...) -> None: ...

class AggregateRequest(_message.Message):
    __slots__ = ("zones", "days", "weeks", "group_by", "agent_id", "limit", "as_of")
    ZONES_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    WEEKS_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    zones: _containers.RepeatedCompositeFieldContainer[BusinessZone]
    days: int
    weeks: int
    group_by: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    limit: int
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, zones: _Optional[_Iterable[_Union[BusinessZone, _Mapping]]] = ..., days: _Optional[int] = ..., weeks: _Optional[int] = ..., group_by: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ..., limit: _Optional[int] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AggregateRow(_message.Message):
    __slots__ = ("business_id", "agent_id", "day", "week", "status", "count", "completed", "duration", "converted")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    WEEK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    CONVERTED_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    agent_id: str
    day: str
    week: str
    status: str
    count: int
    completed: int
    duration: int
    converted: int
    def __init__(self, business_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., day: _Optional[str] = ..., week: _Optional[str] = ..., status: _Optional[str] = ..., count: _Optional[int] = ..., completed: _Optional[int] = ..., duration: _Optional[int] = ..., converted: _Optional[int] = ...) -> None: ...

class Aggregates(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[AggregateRow]
    def __init__(self, rows: _Optional[_Iterable[_Union[AggregateRow, _Mapping]]] = ...) -> None: ...

class BusinessHours(_message.Message):
    __slots__ = ("start_hour", "end_hour")
    START_HOUR_FIELD_NUMBER: _ClassVar[int]
    END_HOUR_FIELD_NUMBER: _ClassVar[int]
    start_hour: int
    end_hour: int
    def __init__(self, start_hour: _Optional[int] = ..., end_hour: _Optional[int] = ...) -> None: ...

class ComplianceDecision(_message.Message):
    __slots__ = ("id", "business_id", "channel", "phone", "lead_id", "outcome", "rule", "source", "code", "message", "not_before", "actor", "reference", "inputs", "decided_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    LEAD_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    channel: str
    phone: str
    lead_id: str
    outcome: str
    rule: str
    source: str
    code: str
    message: str
    not_before: _timestamp_pb2.Timestamp
    actor: str
    reference: str
    inputs: _struct_pb2.Struct
    decided_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., channel: _Optional[str] = ..., phone: _Optional[str] = ..., lead_id: _Optional[str] = ..., outcome: _Optional[str] = ..., rule: _Optional[str] = ..., source: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., not_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actor: _Optional[str] = ..., reference: _Optional[str] = ..., inputs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ErasureRequest(_message.Message):
    __slots__ = ("business_id", "erasure_id", "phones", "emails", "lead_ids", "call_ids", "message_ids", "suppress", "whole_business")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ERASURE_ID_FIELD_NUMBER: _ClassVar[int]
    PHONES_FIELD_NUMBER: _ClassVar[int]
    EMAILS_FIELD_NUMBER: _ClassVar[int]
    LEAD_IDS_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    SUPPRESS_FIELD_NUMBER: _ClassVar[int]
    WHOLE_BUSINESS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    erasure_id: str
    phones: _containers.RepeatedScalarFieldContainer[str]
    emails: _containers.RepeatedScalarFieldContainer[str]
    lead_ids: _containers.RepeatedScalarFieldContainer[str]
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    suppress: bool
    whole_business: bool
    def __init__(self, business_id: _Optional[str] = ..., erasure_id: _Optional[str] = ..., phones: _Optional[_Iterable[str]] = ..., emails: _Optional[_Iterable[str]] = ..., lead_ids: _Optional[_Iterable[str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., message_ids: _Optional[_Iterable[str]] = ..., suppress: _Optional[bool] = ..., whole_business: _Optional[bool] = ...) -> None: ...

class ErasedItem(_message.Message):
    __slots__ = ("what", "action", "count")
    WHAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    what: str
    action: str
    count: int
    def __init__(self, what: _Optional[str] = ..., action: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class ErasureReport(_message.Message):
    __slots__ = ("items", "lead_ids", "call_ids", "message_ids", "more")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    LEAD_IDS_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ErasedItem]
    lead_ids: _containers.RepeatedScalarFieldContainer[str]
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    more: bool
    def __init__(self, items: _Optional[_Iterable[_Union[ErasedItem, _Mapping]]] = ..., lead_ids: _Optional[_Iterable[str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., message_ids: _Optional[_Iterable[str]] = ..., more: _Optional[bool] = ...) -> None: ...

class RetentionRequest(_message.Message):
    __slots__ = ("business_id", "run_id", "recordings_before", "transcripts_before", "message_bodies_before", "webhook_events_before", "evidence_before", "batch")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDINGS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPTS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_BODIES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_EVENTS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    run_id: str
    recordings_before: _timestamp_pb2.Timestamp
    transcripts_before: _timestamp_pb2.Timestamp
    message_bodies_before: _timestamp_pb2.Timestamp
    webhook_events_before: _timestamp_pb2.Timestamp
    evidence_before: _timestamp_pb2.Timestamp
    batch: int
    def __init__(self, business_id: _Optional[str] = ..., run_id: _Optional[str] = ..., recordings_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., transcripts_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message_bodies_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., webhook_events_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., evidence_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., batch: _Optional[int] = ...) -> None: ...

class RetentionReport(_message.Message):
    __slots__ = ("items", "more")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ErasedItem]
    more: bool
    def __init__(self, items: _Optional[_Iterable[_Union[ErasedItem, _Mapping]]] = ..., more: _Optional[bool] = ...) -> None: ...

class ExportPageRequest(_message.Message):
    __slots__ = ("business_id", "export_id", "kind", "after", "limit")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXPORT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    export_id: str
    kind: str
    after: str
    limit: int
    def __init__(self, business_id: _Optional[str] = ..., export_id: _Optional[str] = ..., kind: _Optional[str] = ..., after: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ExportPageReply(_message.Message):
    __slots__ = ("lines", "next_after")
    LINES_FIELD_NUMBER: _ClassVar[int]
    NEXT_AFTER_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedScalarFieldContainer[str]
    next_after: str
    def __init__(self, lines: _Optional[_Iterable[str]] = ..., next_after: _Optional[str] = ...) -> None: ...
