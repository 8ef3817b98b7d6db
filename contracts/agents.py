"""Agents: what an agent's configuration may hold, and the eval gate's refusal."""
from __future__ import annotations

from contracts import leads
from providers.voice.vapi import vocabulary

DEFAULT_FIRST_MESSAGE = "Hello! How can I help you today?"
DEFAULT_MODEL = {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7}
NAME_MAX = 200
PROMPT_MAX = 50_000
MESSAGE_MAX = 1_000
LLM_MAX = 100

# Setting groups of the provider assistant that callers may pass through `provider_config`.
# Everything else is dropped (and reported back): no webhook redirection (`server`),
# credentials, tools or hooks through this door.
PROVIDER_CONFIG_GROUPS = (
    "startSpeakingPlan", "stopSpeakingPlan", "endCallPhrases", "endCallMessage", "transcriber", "analysisPlan",
    "artifactPlan", "backgroundSpeechDenoisingPlan", "monitorPlan", "maxDurationSeconds", "voicemailMessage",
    "voicemailDetection", "backgroundSound", "firstMessageMode",
)

# Numeric settings and the provider's bounds for them.
PROVIDER_CONFIG_BOUNDS = {"maxDurationSeconds": (10, 43200)}

# The voice and model providers an agent may name: those that need nothing but a voiceId / a model name (the
# others take settings our voice and model objects do not carry).
VOICE_PROVIDERS = tuple(p for p, required in vocabulary.VOICE_REQUIRED.items() if required == ("voiceId",))
MODEL_PROVIDERS = tuple(p for p, required in vocabulary.MODEL_REQUIRED.items() if required in ((), ("model",)))

# The order fields are reported in updated_fields.
FIELD_ORDER = ("name", "inbound_prompt", "outbound_prompt", "sms_prompt", "first_message", "outbound_first_message",
               "outbound_llm", "sms_llm", "voice", "model", "provider_config", "recording_disclosure", "tools")
PERSONA_TEXT_MAX = 5_000
REASON_MAX = 1_000

# The gate's verdicts that refuse the change (a scenario failed, or a run had not ended in time).
GATE_REFUSES = ("failed", "unfinished")


def gate_refusal(status: str, failed: int, total: int, names: list[str]) -> str:
    """The message of a change the eval gate refused."""
    listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    if status == "failed":
        why = f"{failed} of {total} eval runs failed against the new configuration ({listed})"
    else:
        why = f"the eval runs had not all ended in time ({listed} unfinished)"
    return (f"the eval gate refused this change: {why}; nothing changed. Fix the change, or send force: true to "
            "apply it anyway (the version records that it was forced)")


# -- ring-first forwarding ---------------------------------------------------------------------
# An inbound call is first offered to the business's own phone; if nobody picks up there within the ring time,
# the agent answers. Keep the ring time below the forward-to phone's own voicemail delay (often 20-25 s), or its
# voicemail picks up first and the agent never does.
RING_SECONDS = (20, 5, 60)  # default, minimum, maximum

# What the voice provider takes, and so our API: a recording disclosure's message at most this long, and an agent's
# provider_config.voicemailDetection "off" or a plan of one of these providers.
DISCLOSURE_MESSAGE_MAX = vocabulary.RECORDING_CONSENT_MESSAGE_MAX
VOICEMAIL_DETECTION_OFF = vocabulary.VOICEMAIL_DETECTION_OFF
VOICEMAIL_DETECTION_PROVIDERS = vocabulary.VOICEMAIL_DETECTION_PROVIDERS


# -- tools ---------------------------------------------------------------------------------------
# What an agent may do during a call (its `tools`, a list of {type, ...}): each type and what it does (GET
# /api/v1/capabilities lists them as agent_tools). `custom` is the business's own function, called at its URL.
AGENT_TOOLS = {
    "send_sms": "Text the caller (or a number they give) from the agent's number",
    "send_link": "Text the caller one of the agent's saved links (links: [{name, url}]), so no URL is invented",
    "check_availability": "Tell the caller which appointment slots are free on a date",
    "book_appointment": "Book an appointment slot for the caller",
    "update_lead": "Record what the caller said (name, email, interest, notes, status) on the call's lead",
    "transfer_call": "Transfer the call to a person: one of destinations, or the business's phone_forward_to",
    "end_call": "Hang up once the conversation is over",
    "custom": "The business's own function: its arguments are POSTed, signed with the agent's tool secret, to its "
              "https url",
}
CUSTOM_TOOL = "custom"
TOOLS_MAX = 20
LINKS_MAX, LINK_NAME_MAX = 20, 80
DESTINATIONS_MAX, DESTINATION_NAME_MAX, TRANSFER_MESSAGE_MAX = 10, 80, 500
TRANSFER_MODES = ("warm", "blind")  # warm: the person is told who is coming and why; blind: the call is put through
CUSTOM_NAME_PATTERN = vocabulary.FUNCTION_NAME_PATTERN
CUSTOM_DESCRIPTION_MAX = 1000
PARAMETERS_MAX_BYTES = 8 * 1024
# The JSON Schema keywords and types a custom tool's parameters may use: what the voice provider takes.
PARAMETER_KEYWORDS = vocabulary.JSON_SCHEMA_PROPERTIES
PARAMETER_TYPES = vocabulary.JSON_SCHEMA_TYPES
PARAMETER_FORMATS = vocabulary.JSON_SCHEMA_FORMATS
TIMEOUT_MS = (5000, 500, 15000)  # default, minimum, maximum
TOOL_SECRET_PREFIX = "tsec_"


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


# What the model fills in when it calls a built-in tool that runs on our side (JSON Schema); send_link's `name` is
# also limited to the agent's link names.
_TEXT_TO = _text("The number to text in E.164, only if the caller asks for another number than their own")
BUILTIN_PARAMETERS: dict[str, dict[str, object]] = {
    "send_sms": {"type": "object", "properties": {"to": _TEXT_TO, "text": _text("The text to send")},
                 "required": ["text"]},
    "send_link": {"type": "object", "properties": {"name": _text("The name of the link to send"), "to": _TEXT_TO},
                  "required": ["name"]},
    "check_availability": {"type": "object", "properties": {
        "date": {"type": "string", "format": "date", "description": "The day asked about, YYYY-MM-DD"},
        "from": {"type": "string", "format": "date",
                 "description": "Instead of date, the first of several days asked about, YYYY-MM-DD"},
        "to": {"type": "string", "format": "date",
               "description": "With from, the last day asked about (at most 14 days after from)"}}},
    "book_appointment": {"type": "object", "properties": {
        "starts_at": {"type": "string", "format": "date-time",
                      "description": "The start of a free slot, as check_availability gave it"},
        "name": _text("The caller's full name"),
        "phone_number": _text("A number to reach the caller in E.164, if not the one they call from"),
        "notes": _text("What the appointment is about")}, "required": ["starts_at", "name"]},
    "update_lead": {"type": "object", "properties": {
        "name": _text("The caller's full name"), "email": _text("The caller's email address"),
        "interest": _text("What the caller is interested in, in one short sentence"),
        "notes": _text("Anything else the caller asked to have noted"),
        "status": {"type": "string", "enum": list(leads.PATCH_STATUSES),
                   "description": "The lead's new status, if the conversation changed it"}}},
}
