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

class EvalScenario(_message.Message):
    __slots__ = ("id", "agent_id", "business_id", "provider_eval_id", "name", "description", "messages", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EVAL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    business_id: str
    provider_eval_id: str
    name: str
    description: str
    messages: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., business_id: _Optional[str] = ..., provider_eval_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateEvalRequest(_message.Message):
    __slots__ = ("agent_id", "business_id", "name", "description", "messages")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    business_id: str
    name: str
    description: str
    messages: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, agent_id: _Optional[str] = ..., business_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class ListEvalsRequest(_message.Message):
    __slots__ = ("agent_id", "page")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page: _common_pb2.PageRequest
    def __init__(self, agent_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListEvalsReply(_message.Message):
    __slots__ = ("evals", "page")
    EVALS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    evals: _containers.RepeatedCompositeFieldContainer[EvalScenario]
    page: _common_pb2.PageInfo
    def __init__(self, evals: _Optional[_Iterable[_Union[EvalScenario, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class GetEvalRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class UpdateEvalRequest(_message.Message):
    __slots__ = ("id", "name", "description", "messages_given", "messages")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_GIVEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    messages_given: bool
    messages: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., messages_given: _Optional[bool] = ..., messages: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class DeleteEvalRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteEvalReply(_message.Message):
    __slots__ = ("success", "id")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    success: bool
    id: str
    def __init__(self, success: _Optional[bool] = ..., id: _Optional[str] = ...) -> None: ...

class RunEvalRequest(_message.Message):
    __slots__ = ("eval_id", "agent_id", "wait", "max_wait_ms")
    EVAL_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    MAX_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    eval_id: str
    agent_id: str
    wait: bool
    max_wait_ms: int
    def __init__(self, eval_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., wait: _Optional[bool] = ..., max_wait_ms: _Optional[int] = ...) -> None: ...

class EvalRun(_message.Message):
    __slots__ = ("run_id", "provider_run_id", "status", "passed", "results", "eval_id", "name", "agent_id", "ended_reason", "created_at", "ended_at", "trigger", "channel", "stubbed_tool_calls")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    EVAL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENDED_REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    STUBBED_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    provider_run_id: str
    status: str
    passed: bool
    results: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    eval_id: str
    name: str
    agent_id: str
    ended_reason: str
    created_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    trigger: str
    channel: str
    stubbed_tool_calls: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, run_id: _Optional[str] = ..., provider_run_id: _Optional[str] = ..., status: _Optional[str] = ..., passed: _Optional[bool] = ..., results: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ..., eval_id: _Optional[str] = ..., name: _Optional[str] = ..., agent_id: _Optional[str] = ..., ended_reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trigger: _Optional[str] = ..., channel: _Optional[str] = ..., stubbed_tool_calls: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class EvalFanOut(_message.Message):
    __slots__ = ("total", "completed", "passed", "failed", "results")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    total: int
    completed: int
    passed: int
    failed: int
    results: _containers.RepeatedCompositeFieldContainer[EvalRun]
    def __init__(self, total: _Optional[int] = ..., completed: _Optional[int] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., results: _Optional[_Iterable[_Union[EvalRun, _Mapping]]] = ...) -> None: ...

class RunEvalReply(_message.Message):
    __slots__ = ("run", "fan_out")
    RUN_FIELD_NUMBER: _ClassVar[int]
    FAN_OUT_FIELD_NUMBER: _ClassVar[int]
    run: EvalRun
    fan_out: EvalFanOut
    def __init__(self, run: _Optional[_Union[EvalRun, _Mapping]] = ..., fan_out: _Optional[_Union[EvalFanOut, _Mapping]] = ...) -> None: ...

class GetEvalRunsRequest(_message.Message):
    __slots__ = ("run_id", "provider_run_id", "agent_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    provider_run_id: str
    agent_id: str
    def __init__(self, run_id: _Optional[str] = ..., provider_run_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class EvalRuns(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[EvalRun]
    def __init__(self, runs: _Optional[_Iterable[_Union[EvalRun, _Mapping]]] = ...) -> None: ...

class GateTarget(_message.Message):
    __slots__ = ("channel", "overrides")
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    channel: str
    overrides: _struct_pb2.Struct
    def __init__(self, channel: _Optional[str] = ..., overrides: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class GateEvalRequest(_message.Message):
    __slots__ = ("agent_id", "provider_assistant_id", "targets", "max_wait_ms")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    MAX_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    provider_assistant_id: str
    targets: _containers.RepeatedCompositeFieldContainer[GateTarget]
    max_wait_ms: int
    def __init__(self, agent_id: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., targets: _Optional[_Iterable[_Union[GateTarget, _Mapping]]] = ..., max_wait_ms: _Optional[int] = ...) -> None: ...

class EvalGateOutcome(_message.Message):
    __slots__ = ("status", "batch_id", "total", "completed", "passed", "failed", "runs", "forced_by")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    FORCED_BY_FIELD_NUMBER: _ClassVar[int]
    status: str
    batch_id: str
    total: int
    completed: int
    passed: int
    failed: int
    runs: _containers.RepeatedCompositeFieldContainer[EvalRun]
    forced_by: str
    def __init__(self, status: _Optional[str] = ..., batch_id: _Optional[str] = ..., total: _Optional[int] = ..., completed: _Optional[int] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., runs: _Optional[_Iterable[_Union[EvalRun, _Mapping]]] = ..., forced_by: _Optional[str] = ...) -> None: ...
