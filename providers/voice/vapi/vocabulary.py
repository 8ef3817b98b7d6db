"""What the provider's OpenAPI document (Vapi, `fern/apis/api/openapi.json` of VapiAI/docs) enumerates for the
assistant settings we send: the services refuse early what it would refuse, and the simulator refuses it as the
provider does. The per-provider model and voice-id lists are left out on purpose (they change monthly): see
providers/voice/vapi/FIDELITY.md."""
from __future__ import annotations

# CreateAssistantDTO.voice: each voice provider and what it requires besides `provider`.
VOICE_REQUIRED: dict[str, tuple[str, ...]] = {
    **{provider: ("voiceId",) for provider in (
        "azure", "cartesia", "deepgram", "11labs", "hume", "lmnt", "openai", "playht", "wellsaid", "rime-ai",
        "smallest-ai", "tavus", "vapi", "inworld", "minimax", "xai", "microsoft")},
    "custom-voice": ("server",), "neuphonic": ("voiceId", "language"), "sesame": ("voiceId", "model"),
}
# CreateAssistantDTO.model: each model provider and what it requires besides `provider`.
MODEL_REQUIRED: dict[str, tuple[str, ...]] = {
    **{provider: ("model",) for provider in (
        "anthropic", "anthropic-bedrock", "anyscale", "cerebras", "deepinfra", "deep-seek", "google", "groq",
        "inflection-ai", "minimax", "openai", "openrouter", "perplexity-ai", "together-ai", "xai")},
    "custom-llm": ("model", "url"), "vapi": (),
}
# CreateAssistantDTO.voicemailDetection: "off", or a plan of one of these providers.
VOICEMAIL_DETECTION_OFF = "off"
VOICEMAIL_DETECTION_PROVIDERS = ("google", "openai", "twilio", "vapi")
# The eval judge models (AssistantMessageJudgePlanAI.model): EvalOpenAIModel, EvalAnthropicModel, EvalGoogleModel,
# EvalCustomModel (which adds `url`).
JUDGE_MODEL_PROVIDERS = ("openai", "anthropic", "google", "custom-llm")
# CompliancePlan.recordingConsentPlan (RecordingConsentPlanStayOnLine, RecordingConsentPlanVerbal): the consent
# message's limit (its types are core.compliance.recording_rules.CONSENT_TYPES, compared by providers/fidelity).
RECORDING_CONSENT_MESSAGE_MAX = 1000
RECORDING_CONSENT_WAIT_SECONDS = (1, 6)  # stay-on-line: how long the line is held before the call goes on
# JsonSchema (a structured-data plan's schema, a function tool's parameters): its properties and types.
JSON_SCHEMA_PROPERTIES = frozenset({"type", "items", "properties", "description", "pattern", "format", "required",
                                    "enum", "title"})
JSON_SCHEMA_TYPES = ("string", "number", "integer", "boolean", "array", "object")
JSON_SCHEMA_FORMATS = ("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
# OpenAIFunction.name (a function tool's name): its pattern.
FUNCTION_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
