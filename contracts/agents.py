"""Agents: what an agent's configuration may hold, and the eval gate's refusal."""
from __future__ import annotations

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
               "outbound_llm", "sms_llm", "voice", "model", "provider_config", "recording_disclosure")
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
