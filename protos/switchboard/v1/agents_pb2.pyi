import datetime

from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchboard.v1 import common_pb2 as _common_pb2
from switchboard.v1 import evals_pb2 as _evals_pb2
from switchboard.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetAgentToolsRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class AgentTools(_message.Message):
    __slots__ = ("agent_id", "business_id", "tools")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    business_id: str
    tools: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, agent_id: _Optional[str] = ..., business_id: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class RunCustomToolRequest(_message.Message):
    __slots__ = ("agent_id", "name", "tool_call_id", "arguments_json", "call")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    tool_call_id: str
    arguments_json: str
    call: _struct_pb2.Struct
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., arguments_json: _Optional[str] = ..., call: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class CustomToolRun(_message.Message):
    __slots__ = ("outcome", "result")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    outcome: str
    result: str
    def __init__(self, outcome: _Optional[str] = ..., result: _Optional[str] = ...) -> None: ...

class RouteNumberRequest(_message.Message):
    __slots__ = ("phone_number",)
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    phone_number: str
    def __init__(self, phone_number: _Optional[str] = ...) -> None: ...

class NumberRoute(_message.Message):
    __slots__ = ("phone_number", "business_id", "agent_id", "agent_name", "provider_assistant_id", "recording_disclosure")
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    phone_number: str
    business_id: str
    agent_id: str
    agent_name: str
    provider_assistant_id: str
    recording_disclosure: RecordingDisclosure
    def __init__(self, phone_number: _Optional[str] = ..., business_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., recording_disclosure: _Optional[_Union[RecordingDisclosure, _Mapping]] = ...) -> None: ...

class RecordingDisclosure(_message.Message):
    __slots__ = ("mode", "message", "consent")
    MODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CONSENT_FIELD_NUMBER: _ClassVar[int]
    mode: str
    message: str
    consent: str
    def __init__(self, mode: _Optional[str] = ..., message: _Optional[str] = ..., consent: _Optional[str] = ...) -> None: ...

class GetCallingProfileRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class CallingProfile(_message.Message):
    __slots__ = ("agent_id", "name", "business_id", "provider_assistant_id", "phone_number", "provider_phone_number_id", "prompt", "first_message", "model", "own_voicemail_detection", "recording_disclosure", "tools")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_PHONE_NUMBER_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OWN_VOICEMAIL_DETECTION_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    business_id: str
    provider_assistant_id: str
    phone_number: str
    provider_phone_number_id: str
    prompt: str
    first_message: str
    model: _struct_pb2.Struct
    own_voicemail_detection: bool
    recording_disclosure: RecordingDisclosure
    tools: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., provider_phone_number_id: _Optional[str] = ..., prompt: _Optional[str] = ..., first_message: _Optional[str] = ..., model: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., own_voicemail_detection: _Optional[bool] = ..., recording_disclosure: _Optional[_Union[RecordingDisclosure, _Mapping]] = ..., tools: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class AgentSummary(_message.Message):
    __slots__ = ("id", "name", "business_id", "created_at", "phone_number", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    business_id: str
    created_at: _timestamp_pb2.Timestamp
    phone_number: str
    status: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., phone_number: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ("business_id", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListAgentsReply(_message.Message):
    __slots__ = ("agents", "page")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[AgentSummary]
    page: _common_pb2.PageInfo
    def __init__(self, agents: _Optional[_Iterable[_Union[AgentSummary, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class AgentDirectoryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LookupAgentsRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class InboundPrompt(_message.Message):
    __slots__ = ("prompt", "llm")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    llm: str
    def __init__(self, prompt: _Optional[str] = ..., llm: _Optional[str] = ...) -> None: ...

class OutboundPrompt(_message.Message):
    __slots__ = ("prompt", "llm", "first_message")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    llm: str
    first_message: str
    def __init__(self, prompt: _Optional[str] = ..., llm: _Optional[str] = ..., first_message: _Optional[str] = ...) -> None: ...

class SmsPrompt(_message.Message):
    __slots__ = ("prompt", "llm")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    llm: str
    def __init__(self, prompt: _Optional[str] = ..., llm: _Optional[str] = ...) -> None: ...

class Prompts(_message.Message):
    __slots__ = ("inbound", "outbound", "sms")
    INBOUND_FIELD_NUMBER: _ClassVar[int]
    OUTBOUND_FIELD_NUMBER: _ClassVar[int]
    SMS_FIELD_NUMBER: _ClassVar[int]
    inbound: InboundPrompt
    outbound: OutboundPrompt
    sms: SmsPrompt
    def __init__(self, inbound: _Optional[_Union[InboundPrompt, _Mapping]] = ..., outbound: _Optional[_Union[OutboundPrompt, _Mapping]] = ..., sms: _Optional[_Union[SmsPrompt, _Mapping]] = ...) -> None: ...

class Agent(_message.Message):
    __slots__ = ("id", "name", "business_id", "provider_assistant_id", "phone_number", "status", "created_at", "updated_at", "prompts", "voice", "model", "first_message", "metadata", "provider_config", "version", "eval_gate", "recording_disclosure", "tools", "tool_secret_masked")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CONFIG_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_SECRET_MASKED_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    business_id: str
    provider_assistant_id: str
    phone_number: str
    status: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    prompts: Prompts
    voice: _struct_pb2.Struct
    model: _struct_pb2.Struct
    first_message: str
    metadata: _struct_pb2.Struct
    provider_config: _struct_pb2.Struct
    version: int
    eval_gate: bool
    recording_disclosure: RecordingDisclosure
    tools: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    tool_secret_masked: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., status: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., prompts: _Optional[_Union[Prompts, _Mapping]] = ..., voice: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., first_message: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_config: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., version: _Optional[int] = ..., eval_gate: _Optional[bool] = ..., recording_disclosure: _Optional[_Union[RecordingDisclosure, _Mapping]] = ..., tools: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ..., tool_secret_masked: _Optional[str] = ...) -> None: ...

class ToolList(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, tools: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...

class CreateAgentRequest(_message.Message):
    __slots__ = ("business_id", "name", "system_prompt", "first_message", "voice", "model", "metadata", "request_id", "eval_gate", "recording_disclosure", "tools")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    name: str
    system_prompt: str
    first_message: str
    voice: _struct_pb2.Struct
    model: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    request_id: str
    eval_gate: bool
    recording_disclosure: _struct_pb2.Struct
    tools: ToolList
    def __init__(self, business_id: _Optional[str] = ..., name: _Optional[str] = ..., system_prompt: _Optional[str] = ..., first_message: _Optional[str] = ..., voice: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., request_id: _Optional[str] = ..., eval_gate: _Optional[bool] = ..., recording_disclosure: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tools: _Optional[_Union[ToolList, _Mapping]] = ...) -> None: ...

class AgentCreated(_message.Message):
    __slots__ = ("id", "name", "business_id", "provider_assistant_id", "created_at", "version", "tool_secret")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TOOL_SECRET_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    business_id: str
    provider_assistant_id: str
    created_at: _timestamp_pb2.Timestamp
    version: int
    tool_secret: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., tool_secret: _Optional[str] = ...) -> None: ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ("id", "name", "inbound_prompt", "system_prompt", "outbound_prompt", "sms_prompt", "first_message", "outbound_first_message", "outbound_llm", "sms_llm", "voice", "model", "metadata", "provider_config", "expected_version", "eval_gate", "force", "recording_disclosure", "tools")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    INBOUND_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    OUTBOUND_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SMS_PROMPT_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTBOUND_FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTBOUND_LLM_FIELD_NUMBER: _ClassVar[int]
    SMS_LLM_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CONFIG_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    RECORDING_DISCLOSURE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    inbound_prompt: str
    system_prompt: str
    outbound_prompt: str
    sms_prompt: str
    first_message: str
    outbound_first_message: str
    outbound_llm: str
    sms_llm: str
    voice: _struct_pb2.Struct
    model: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    provider_config: _struct_pb2.Struct
    expected_version: int
    eval_gate: bool
    force: bool
    recording_disclosure: _struct_pb2.Struct
    tools: ToolList
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., inbound_prompt: _Optional[str] = ..., system_prompt: _Optional[str] = ..., outbound_prompt: _Optional[str] = ..., sms_prompt: _Optional[str] = ..., first_message: _Optional[str] = ..., outbound_first_message: _Optional[str] = ..., outbound_llm: _Optional[str] = ..., sms_llm: _Optional[str] = ..., voice: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_config: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., expected_version: _Optional[int] = ..., eval_gate: _Optional[bool] = ..., force: _Optional[bool] = ..., recording_disclosure: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tools: _Optional[_Union[ToolList, _Mapping]] = ...) -> None: ...

class AgentUpdated(_message.Message):
    __slots__ = ("id", "name", "business_id", "provider_assistant_id", "updated", "updated_fields", "version", "ignored_provider_config", "rollback_of", "eval_gate", "tool_secret")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ASSISTANT_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    IGNORED_PROVIDER_CONFIG_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_OF_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_SECRET_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    business_id: str
    provider_assistant_id: str
    updated: bool
    updated_fields: _containers.RepeatedScalarFieldContainer[str]
    version: int
    ignored_provider_config: _containers.RepeatedScalarFieldContainer[str]
    rollback_of: int
    eval_gate: _evals_pb2.EvalGateOutcome
    tool_secret: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., provider_assistant_id: _Optional[str] = ..., updated: _Optional[bool] = ..., updated_fields: _Optional[_Iterable[str]] = ..., version: _Optional[int] = ..., ignored_provider_config: _Optional[_Iterable[str]] = ..., rollback_of: _Optional[int] = ..., eval_gate: _Optional[_Union[_evals_pb2.EvalGateOutcome, _Mapping]] = ..., tool_secret: _Optional[str] = ...) -> None: ...

class RotateToolSecretRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ToolSecretRotated(_message.Message):
    __slots__ = ("id", "tool_secret", "previous_secret_expires_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_SECRET_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tool_secret: str
    previous_secret_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tool_secret: _Optional[str] = ..., previous_secret_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Persona(_message.Message):
    __slots__ = ("lead_name", "scenario", "objective", "script", "persona_traits", "callback_number", "facts_to_reveal", "facts_to_withhold")
    LEAD_NAME_FIELD_NUMBER: _ClassVar[int]
    SCENARIO_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    PERSONA_TRAITS_FIELD_NUMBER: _ClassVar[int]
    CALLBACK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FACTS_TO_REVEAL_FIELD_NUMBER: _ClassVar[int]
    FACTS_TO_WITHHOLD_FIELD_NUMBER: _ClassVar[int]
    lead_name: str
    scenario: str
    objective: str
    script: str
    persona_traits: str
    callback_number: str
    facts_to_reveal: _containers.RepeatedScalarFieldContainer[str]
    facts_to_withhold: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lead_name: _Optional[str] = ..., scenario: _Optional[str] = ..., objective: _Optional[str] = ..., script: _Optional[str] = ..., persona_traits: _Optional[str] = ..., callback_number: _Optional[str] = ..., facts_to_reveal: _Optional[_Iterable[str]] = ..., facts_to_withhold: _Optional[_Iterable[str]] = ...) -> None: ...

class LoadPersonaRequest(_message.Message):
    __slots__ = ("agent_id", "persona", "voice", "model", "first_message", "expected_version", "force")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PERSONA_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    persona: Persona
    voice: _struct_pb2.Struct
    model: _struct_pb2.Struct
    first_message: str
    expected_version: int
    force: bool
    def __init__(self, agent_id: _Optional[str] = ..., persona: _Optional[_Union[Persona, _Mapping]] = ..., voice: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., first_message: _Optional[str] = ..., expected_version: _Optional[int] = ..., force: _Optional[bool] = ...) -> None: ...

class PersonaSummary(_message.Message):
    __slots__ = ("lead_name", "objective")
    LEAD_NAME_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    lead_name: str
    objective: str
    def __init__(self, lead_name: _Optional[str] = ..., objective: _Optional[str] = ...) -> None: ...

class PersonaLoaded(_message.Message):
    __slots__ = ("id", "updated", "persona_loaded", "persona_summary", "updated_fields", "version", "eval_gate")
    ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    PERSONA_LOADED_FIELD_NUMBER: _ClassVar[int]
    PERSONA_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    updated: bool
    persona_loaded: bool
    persona_summary: PersonaSummary
    updated_fields: _containers.RepeatedScalarFieldContainer[str]
    version: int
    eval_gate: _evals_pb2.EvalGateOutcome
    def __init__(self, id: _Optional[str] = ..., updated: _Optional[bool] = ..., persona_loaded: _Optional[bool] = ..., persona_summary: _Optional[_Union[PersonaSummary, _Mapping]] = ..., updated_fields: _Optional[_Iterable[str]] = ..., version: _Optional[int] = ..., eval_gate: _Optional[_Union[_evals_pb2.EvalGateOutcome, _Mapping]] = ...) -> None: ...

class UpdateSmsPromptRequest(_message.Message):
    __slots__ = ("agent_id", "sms_prompt", "reason", "force")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SMS_PROMPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    sms_prompt: str
    reason: str
    force: bool
    def __init__(self, agent_id: _Optional[str] = ..., sms_prompt: _Optional[str] = ..., reason: _Optional[str] = ..., force: _Optional[bool] = ...) -> None: ...

class UpdateSmsPromptReply(_message.Message):
    __slots__ = ("success", "agent_id", "message", "version", "eval_gate")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    agent_id: str
    message: str
    version: int
    eval_gate: _evals_pb2.EvalGateOutcome
    def __init__(self, success: _Optional[bool] = ..., agent_id: _Optional[str] = ..., message: _Optional[str] = ..., version: _Optional[int] = ..., eval_gate: _Optional[_Union[_evals_pb2.EvalGateOutcome, _Mapping]] = ...) -> None: ...

class AgentVersion(_message.Message):
    __slots__ = ("version", "content_hash", "parent_version", "rollback_of", "source", "changed_fields", "created_at", "config_snapshot", "eval_gate")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    PARENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_OF_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVAL_GATE_FIELD_NUMBER: _ClassVar[int]
    version: int
    content_hash: str
    parent_version: int
    rollback_of: int
    source: str
    changed_fields: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    config_snapshot: _struct_pb2.Struct
    eval_gate: _evals_pb2.EvalGateOutcome
    def __init__(self, version: _Optional[int] = ..., content_hash: _Optional[str] = ..., parent_version: _Optional[int] = ..., rollback_of: _Optional[int] = ..., source: _Optional[str] = ..., changed_fields: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., config_snapshot: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., eval_gate: _Optional[_Union[_evals_pb2.EvalGateOutcome, _Mapping]] = ...) -> None: ...

class ListVersionsRequest(_message.Message):
    __slots__ = ("agent_id", "version", "page")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: int
    page: _common_pb2.PageRequest
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[int] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListVersionsReply(_message.Message):
    __slots__ = ("agent_id", "versions", "page")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    versions: _containers.RepeatedCompositeFieldContainer[AgentVersion]
    page: _common_pb2.PageInfo
    def __init__(self, agent_id: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[AgentVersion, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class RollbackAgentRequest(_message.Message):
    __slots__ = ("agent_id", "version", "expected_version", "force")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: int
    expected_version: int
    force: bool
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[int] = ..., expected_version: _Optional[int] = ..., force: _Optional[bool] = ...) -> None: ...

class NumberCapabilities(_message.Message):
    __slots__ = ("voice_inbound", "voice_outbound", "sms_inbound", "sms_outbound", "mms")
    VOICE_INBOUND_FIELD_NUMBER: _ClassVar[int]
    VOICE_OUTBOUND_FIELD_NUMBER: _ClassVar[int]
    SMS_INBOUND_FIELD_NUMBER: _ClassVar[int]
    SMS_OUTBOUND_FIELD_NUMBER: _ClassVar[int]
    MMS_FIELD_NUMBER: _ClassVar[int]
    voice_inbound: bool
    voice_outbound: bool
    sms_inbound: bool
    sms_outbound: bool
    mms: bool
    def __init__(self, voice_inbound: _Optional[bool] = ..., voice_outbound: _Optional[bool] = ..., sms_inbound: _Optional[bool] = ..., sms_outbound: _Optional[bool] = ..., mms: _Optional[bool] = ...) -> None: ...

class A2pEnrollment(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: str
    def __init__(self, status: _Optional[str] = ...) -> None: ...

class EmergencyAddress(_message.Message):
    __slots__ = ("status", "address")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    status: str
    address: str
    def __init__(self, status: _Optional[str] = ..., address: _Optional[str] = ...) -> None: ...

class NumberCompliance(_message.Message):
    __slots__ = ("a2p", "emergency_address")
    A2P_FIELD_NUMBER: _ClassVar[int]
    EMERGENCY_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    a2p: A2pEnrollment
    emergency_address: EmergencyAddress
    def __init__(self, a2p: _Optional[_Union[A2pEnrollment, _Mapping]] = ..., emergency_address: _Optional[_Union[EmergencyAddress, _Mapping]] = ...) -> None: ...

class PhoneNumber(_message.Message):
    __slots__ = ("id", "phone_number", "agent_id", "business_id", "created_at", "country", "area_code", "capabilities", "blocked", "block_reason", "compliance", "provider_phone_number_id", "forwarding")
    ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    COUNTRY_FIELD_NUMBER: _ClassVar[int]
    AREA_CODE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_FIELD_NUMBER: _ClassVar[int]
    BLOCK_REASON_FIELD_NUMBER: _ClassVar[int]
    COMPLIANCE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_PHONE_NUMBER_ID_FIELD_NUMBER: _ClassVar[int]
    FORWARDING_FIELD_NUMBER: _ClassVar[int]
    id: str
    phone_number: str
    agent_id: str
    business_id: str
    created_at: _timestamp_pb2.Timestamp
    country: str
    area_code: str
    capabilities: NumberCapabilities
    blocked: bool
    block_reason: str
    compliance: NumberCompliance
    provider_phone_number_id: str
    forwarding: Forwarding
    def __init__(self, id: _Optional[str] = ..., phone_number: _Optional[str] = ..., agent_id: _Optional[str] = ..., business_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., country: _Optional[str] = ..., area_code: _Optional[str] = ..., capabilities: _Optional[_Union[NumberCapabilities, _Mapping]] = ..., blocked: _Optional[bool] = ..., block_reason: _Optional[str] = ..., compliance: _Optional[_Union[NumberCompliance, _Mapping]] = ..., provider_phone_number_id: _Optional[str] = ..., forwarding: _Optional[_Union[Forwarding, _Mapping]] = ...) -> None: ...

class Forwarding(_message.Message):
    __slots__ = ("to", "ring_seconds")
    TO_FIELD_NUMBER: _ClassVar[int]
    RING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    to: str
    ring_seconds: int
    def __init__(self, to: _Optional[str] = ..., ring_seconds: _Optional[int] = ...) -> None: ...

class ListPhoneNumbersRequest(_message.Message):
    __slots__ = ("business_id", "phone_number", "all_businesses", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ALL_BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_number: str
    all_businesses: bool
    page: _common_pb2.PageRequest
    def __init__(self, business_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., all_businesses: _Optional[bool] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListPhoneNumbersReply(_message.Message):
    __slots__ = ("business_id", "phone_numbers", "page")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_numbers: _containers.RepeatedCompositeFieldContainer[PhoneNumber]
    page: _common_pb2.PageInfo
    def __init__(self, business_id: _Optional[str] = ..., phone_numbers: _Optional[_Iterable[_Union[PhoneNumber, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class AvailableNumber(_message.Message):
    __slots__ = ("phone_number", "country", "area_code", "locality", "capabilities")
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    COUNTRY_FIELD_NUMBER: _ClassVar[int]
    AREA_CODE_FIELD_NUMBER: _ClassVar[int]
    LOCALITY_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    phone_number: str
    country: str
    area_code: str
    locality: str
    capabilities: NumberCapabilities
    def __init__(self, phone_number: _Optional[str] = ..., country: _Optional[str] = ..., area_code: _Optional[str] = ..., locality: _Optional[str] = ..., capabilities: _Optional[_Union[NumberCapabilities, _Mapping]] = ...) -> None: ...

class ListAvailableNumbersRequest(_message.Message):
    __slots__ = ("country", "area_code", "capability", "limit", "after")
    COUNTRY_FIELD_NUMBER: _ClassVar[int]
    AREA_CODE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    country: str
    area_code: str
    capability: str
    limit: int
    after: str
    def __init__(self, country: _Optional[str] = ..., area_code: _Optional[str] = ..., capability: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ...) -> None: ...

class NumberPurchase(_message.Message):
    __slots__ = ("country", "area_code", "status", "requested_at", "message")
    COUNTRY_FIELD_NUMBER: _ClassVar[int]
    AREA_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    country: str
    area_code: str
    status: str
    requested_at: _timestamp_pb2.Timestamp
    message: str
    def __init__(self, country: _Optional[str] = ..., area_code: _Optional[str] = ..., status: _Optional[str] = ..., requested_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ...) -> None: ...

class ListAvailableNumbersReply(_message.Message):
    __slots__ = ("numbers", "page", "purchase")
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    PURCHASE_FIELD_NUMBER: _ClassVar[int]
    numbers: _containers.RepeatedCompositeFieldContainer[AvailableNumber]
    page: _common_pb2.PageInfo
    purchase: NumberPurchase
    def __init__(self, numbers: _Optional[_Iterable[_Union[AvailableNumber, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ..., purchase: _Optional[_Union[NumberPurchase, _Mapping]] = ...) -> None: ...

class AssignPhoneNumberRequest(_message.Message):
    __slots__ = ("business_id", "phone_number", "agent_id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_number: str
    agent_id: str
    def __init__(self, business_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class UpdatePhoneNumberRequest(_message.Message):
    __slots__ = ("business_id", "phone_number", "agent_id", "forwarding", "update_mask")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    FORWARDING_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_number: str
    agent_id: str
    forwarding: Forwarding
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, business_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., agent_id: _Optional[str] = ..., forwarding: _Optional[_Union[Forwarding, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class ReleasePhoneNumberRequest(_message.Message):
    __slots__ = ("business_id", "phone_number")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_number: str
    def __init__(self, business_id: _Optional[str] = ..., phone_number: _Optional[str] = ...) -> None: ...

class ReleasePhoneNumberReply(_message.Message):
    __slots__ = ("success", "phone_number", "business_id")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    success: bool
    phone_number: str
    business_id: str
    def __init__(self, success: _Optional[bool] = ..., phone_number: _Optional[str] = ..., business_id: _Optional[str] = ...) -> None: ...

class CountPhoneNumbersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BusinessNumberCount(_message.Message):
    __slots__ = ("business_id", "phone_numbers")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone_numbers: int
    def __init__(self, business_id: _Optional[str] = ..., phone_numbers: _Optional[int] = ...) -> None: ...

class PhoneNumberCounts(_message.Message):
    __slots__ = ("businesses",)
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    businesses: _containers.RepeatedCompositeFieldContainer[BusinessNumberCount]
    def __init__(self, businesses: _Optional[_Iterable[_Union[BusinessNumberCount, _Mapping]]] = ...) -> None: ...

class CheckVoiceProviderRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class VoiceProviderStatus(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: str
    def __init__(self, status: _Optional[str] = ...) -> None: ...
