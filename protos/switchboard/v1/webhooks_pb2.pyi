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

class Subscription(_message.Message):
    __slots__ = ("id", "url", "events", "description", "is_active", "webhook_secret_masked", "failure_count", "last_triggered_at", "disabled_reason", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    IS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_MASKED_FIELD_NUMBER: _ClassVar[int]
    FAILURE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_TRIGGERED_AT_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    url: str
    events: _containers.RepeatedScalarFieldContainer[str]
    description: str
    is_active: bool
    webhook_secret_masked: str
    failure_count: int
    last_triggered_at: _timestamp_pb2.Timestamp
    disabled_reason: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., url: _Optional[str] = ..., events: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., is_active: _Optional[bool] = ..., webhook_secret_masked: _Optional[str] = ..., failure_count: _Optional[int] = ..., last_triggered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., disabled_reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SaveSubscriptionRequest(_message.Message):
    __slots__ = ("business_id", "url", "events", "description")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    url: str
    events: _containers.RepeatedScalarFieldContainer[str]
    description: str
    def __init__(self, business_id: _Optional[str] = ..., url: _Optional[str] = ..., events: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ...) -> None: ...

class SaveSubscriptionReply(_message.Message):
    __slots__ = ("business_id", "webhook", "webhook_secret", "events", "message", "created")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    webhook: Subscription
    webhook_secret: str
    events: _containers.RepeatedScalarFieldContainer[str]
    message: str
    created: bool
    def __init__(self, business_id: _Optional[str] = ..., webhook: _Optional[_Union[Subscription, _Mapping]] = ..., webhook_secret: _Optional[str] = ..., events: _Optional[_Iterable[str]] = ..., message: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...

class ListSubscriptionsRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class ListSubscriptionsReply(_message.Message):
    __slots__ = ("business_id", "webhooks", "events")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    webhooks: _containers.RepeatedCompositeFieldContainer[Subscription]
    events: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, business_id: _Optional[str] = ..., webhooks: _Optional[_Iterable[_Union[Subscription, _Mapping]]] = ..., events: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteSubscriptionRequest(_message.Message):
    __slots__ = ("business_id", "id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    id: str
    def __init__(self, business_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class DeleteSubscriptionReply(_message.Message):
    __slots__ = ("success", "id")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    success: bool
    id: str
    def __init__(self, success: _Optional[bool] = ..., id: _Optional[str] = ...) -> None: ...

class SendTestRequest(_message.Message):
    __slots__ = ("business_id", "id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    id: str
    def __init__(self, business_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class TestResult(_message.Message):
    __slots__ = ("webhook_id", "delivered", "status_code", "latency_ms", "error")
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    webhook_id: str
    delivered: bool
    status_code: int
    latency_ms: int
    error: str
    def __init__(self, webhook_id: _Optional[str] = ..., delivered: _Optional[bool] = ..., status_code: _Optional[int] = ..., latency_ms: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class SendTestReply(_message.Message):
    __slots__ = ("business_id", "event_id", "results")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    event_id: str
    results: _containers.RepeatedCompositeFieldContainer[TestResult]
    def __init__(self, business_id: _Optional[str] = ..., event_id: _Optional[str] = ..., results: _Optional[_Iterable[_Union[TestResult, _Mapping]]] = ...) -> None: ...

class RotateSecretRequest(_message.Message):
    __slots__ = ("business_id", "id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    id: str
    def __init__(self, business_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RotateSecretReply(_message.Message):
    __slots__ = ("id", "webhook_secret", "webhook_secret_masked", "previous_secret_expires_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_MASKED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    webhook_secret: str
    webhook_secret_masked: str
    previous_secret_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., webhook_secret: _Optional[str] = ..., webhook_secret_masked: _Optional[str] = ..., previous_secret_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StoredEvent(_message.Message):
    __slots__ = ("event_id", "type", "business_id", "occurred_at", "data")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    type: str
    business_id: str
    occurred_at: _timestamp_pb2.Timestamp
    data: _struct_pb2.Struct
    def __init__(self, event_id: _Optional[str] = ..., type: _Optional[str] = ..., business_id: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("business_id", "type", "since", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    type: str
    since: _timestamp_pb2.Timestamp
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., type: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListEventsReply(_message.Message):
    __slots__ = ("events", "page")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[StoredEvent]
    page: _common_pb2.PageInfo
    def __init__(self, events: _Optional[_Iterable[_Union[StoredEvent, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class Delivery(_message.Message):
    __slots__ = ("id", "webhook_id", "event_id", "event_type", "status", "attempts", "last_status_code", "last_error", "last_latency_ms", "next_attempt_at", "delivered_at", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    webhook_id: str
    event_id: str
    event_type: str
    status: str
    attempts: int
    last_status_code: int
    last_error: str
    last_latency_ms: int
    next_attempt_at: _timestamp_pb2.Timestamp
    delivered_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., webhook_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_type: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., last_status_code: _Optional[int] = ..., last_error: _Optional[str] = ..., last_latency_ms: _Optional[int] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delivered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListDeliveriesRequest(_message.Message):
    __slots__ = ("business_id", "webhook_id", "event_id", "status", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    webhook_id: str
    event_id: str
    status: str
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., webhook_id: _Optional[str] = ..., event_id: _Optional[str] = ..., status: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListDeliveriesReply(_message.Message):
    __slots__ = ("deliveries", "page")
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[Delivery]
    page: _common_pb2.PageInfo
    def __init__(self, deliveries: _Optional[_Iterable[_Union[Delivery, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ReplayRequest(_message.Message):
    __slots__ = ("business_id", "webhook_id", "event_ids", "since", "until")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    webhook_id: str
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., webhook_id: _Optional[str] = ..., event_ids: _Optional[_Iterable[str]] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReplayReply(_message.Message):
    __slots__ = ("queued", "delivery_ids")
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_IDS_FIELD_NUMBER: _ClassVar[int]
    queued: int
    delivery_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, queued: _Optional[int] = ..., delivery_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CallSecretRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class CallSecret(_message.Message):
    __slots__ = ("business_id", "webhook_secret", "webhook_secret_masked", "created_at", "previous_secret_expires_at")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_MASKED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    webhook_secret: str
    webhook_secret_masked: str
    created_at: _timestamp_pb2.Timestamp
    previous_secret_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, business_id: _Optional[str] = ..., webhook_secret: _Optional[str] = ..., webhook_secret_masked: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., previous_secret_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
