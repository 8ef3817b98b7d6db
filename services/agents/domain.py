"""Agent rules as plain functions: defaults, validation, what a change touches, the provider
assistant body, provider_config sanitizing, version hashing and redaction, the owner-edit guard."""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from contracts.agent_tools import provider_tools
from contracts.agents import (
    DEFAULT_FIRST_MESSAGE,
    DEFAULT_MODEL,
    DISCLOSURE_MESSAGE_MAX,
    FIELD_ORDER,
    LLM_MAX,
    MESSAGE_MAX,
    MODEL_PROVIDERS,
    NAME_MAX,
    PERSONA_TEXT_MAX,
    PROMPT_MAX,
    PROVIDER_CONFIG_BOUNDS,
    PROVIDER_CONFIG_GROUPS,
    REASON_MAX,
    VOICE_PROVIDERS,
    VOICEMAIL_DETECTION_OFF,
    VOICEMAIL_DETECTION_PROVIDERS,
)
from core.compliance import recording_rules as recording
from core.errors import ServiceError, invalid
from providers.voice.port import AssistantSpec, Conversation
from services.agents import tools as agent_tools
from switchboard.v1 import calls_pb2

AGENT_STATUS = "active"

# Every assistant collects the caller's details at the end of a call (the provider's end-of-call analysis, as this
# JSON Schema); the calls service turns them into leads.
LEAD_FIELDS = ("name", "email", "phone", "intent")
# The call quality scores the analysis asks for: the calls service's QualityDimensions.
QUALITY_DIMENSIONS = tuple(calls_pb2.QualityDimensions.DESCRIPTOR.fields_by_name)
COLLECTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The caller's full name, if given"},
        "email": {"type": "string", "description": "The caller's email address, if given"},
        "phone": {"type": "string", "description": "A callback phone number the caller gave, in E.164 if possible"},
        "intent": {"type": "string", "description": "What the caller wants, in one short sentence"},
        "quality_dimensions": {
            "type": "object", "description": "How the agent did on this call, each from 1 (poor) to 10 (excellent)",
            # Providers' JSON Schemas may have no minimum or maximum: the range is in words (and checked on read).
            "properties": {d: {"type": "integer", "description": "From 1 (poor) to 10 (excellent)"}
                           for d in QUALITY_DIMENSIONS},
        },
    },
}


@dataclass(frozen=True)
class AgentConfig:
    """What an agent deploys: every field that is versioned (metadata is not: it is bookkeeping)."""

    name: str
    inbound_prompt: str
    first_message: str = DEFAULT_FIRST_MESSAGE
    voice: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_MODEL))
    outbound_prompt: str | None = None
    outbound_first_message: str | None = None
    outbound_llm: str | None = None
    sms_prompt: str | None = None
    sms_llm: str | None = None
    provider_config: dict[str, Any] = field(default_factory=dict)
    # What differs from the default recording disclosure (check_recording_disclosure): {} is the default.
    recording_disclosure: dict[str, Any] = field(default_factory=dict)
    # What the agent may do during a call (services.agents.tools.check_tools).
    tools: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: copy.deepcopy(v) for k, v in data.items() if k in known})


# Fields whose change must reach the provider assistant.
PROVIDER_FIELDS = ("name", "inbound_prompt", "first_message", "voice", "model", "provider_config", "tools")
# Prompt-like fields: a change writes an audit row and queues an owner notification.
PROMPT_FIELDS = ("inbound_prompt", "outbound_prompt", "sms_prompt", "first_message", "outbound_first_message")


# -- validation ----------------------------------------------------------------------

def check_text(value: str, field_name: str, maximum: int, *, required: bool = True) -> str:
    text = value.strip()
    if required and not text:
        raise invalid(f"{field_name} must not be empty")
    if len(text) > maximum:
        raise invalid(f"{field_name} must be at most {maximum} characters")
    return text


def check_voice(voice: dict[str, Any]) -> dict[str, Any]:
    """{provider, voiceId}: one of VOICE_PROVIDERS and a voice id; an empty object means the provider's default."""
    if not voice:
        return {}
    unknown = set(voice) - {"provider", "voiceId"}
    if unknown:
        raise invalid(f"voice accepts provider and voiceId only (got {', '.join(sorted(unknown))})")
    if not isinstance(voice.get("provider"), str) or not voice["provider"].strip():
        raise invalid("voice.provider is required (e.g. \"11labs\") when voice is given")
    if voice["provider"].strip() not in VOICE_PROVIDERS:
        raise invalid(f"voice.provider must be one of {', '.join(VOICE_PROVIDERS)}")
    if not isinstance(voice.get("voiceId"), str) or not voice["voiceId"].strip():
        raise invalid("voice.voiceId is required: a non-empty string naming a voice of voice.provider")
    return {k: voice[k].strip() for k in ("provider", "voiceId")}


def check_model(model: dict[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """{provider, model, temperature} over `base` (the defaults at creation, the current model on update)."""
    unknown = set(model) - {"provider", "model", "temperature"}
    if unknown:
        raise invalid(f"model accepts provider, model and temperature only (got {', '.join(sorted(unknown))})")
    merged = {**(base or DEFAULT_MODEL), **model}
    for key in ("provider", "model"):
        if not isinstance(merged[key], str) or not merged[key].strip() or len(merged[key]) > LLM_MAX:
            raise invalid(f"model.{key} must be a non-empty string")
    if merged["provider"].strip() not in MODEL_PROVIDERS:
        raise invalid(f"model.provider must be one of {', '.join(MODEL_PROVIDERS)}")
    temperature = merged["temperature"]
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise invalid("model.temperature must be a number between 0 and 2")
    return {"provider": merged["provider"].strip(), "model": merged["model"].strip(), "temperature": temperature}


def new_config(name: str, system_prompt: str, first_message: str | None, voice: dict[str, Any],
               model: dict[str, Any], recording_disclosure: dict[str, Any] | None = None,
               tools: list[Any] | None = None, allow_loopback: bool = False) -> AgentConfig:
    """A new agent's configuration with the spec's defaults (`allow_loopback`: custom tools may call loopback
    URLs, on the local stack)."""
    return AgentConfig(
        name=check_text(name, "name", NAME_MAX),
        inbound_prompt=check_text(system_prompt, "system_prompt", PROMPT_MAX),
        first_message=(check_text(first_message, "first_message", MESSAGE_MAX) if first_message is not None
                       else DEFAULT_FIRST_MESSAGE),
        voice=check_voice(voice),
        model=check_model(model),
        recording_disclosure=check_recording_disclosure(recording_disclosure or {}),
        tools=agent_tools.check_tools(tools or [], allow_loopback),
    )


# -- the recording disclosure --------------------------------------------------------------

DISCLOSURE_KEYS = ("mode", "message", "consent")
DISCLOSURE_DEFAULTS = {"mode": recording.AUTO, "consent": recording.STAY_ON_LINE}


def check_recording_disclosure(given: Any, current: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored setting after `given` ({mode, message, consent}, each optional) over `current`: only what differs
    from the defaults is kept, and a null message goes back to the default wording of the consent type."""
    if not isinstance(given, dict):
        raise invalid("recording_disclosure must be an object {mode, message, consent}")
    unknown = set(given) - set(DISCLOSURE_KEYS)
    if unknown:
        raise invalid(f"recording_disclosure accepts mode, message and consent only (got {', '.join(sorted(unknown))})")
    merged = {**DISCLOSURE_DEFAULTS, **(current or {}), **given}
    if merged["mode"] not in recording.MODES:
        raise invalid(f"recording_disclosure.mode must be one of {', '.join(recording.MODES)} (auto: spoken where "
                      "the other party may be in a state that needs every party's consent to record)")
    if merged["consent"] not in recording.CONSENT_TYPES:
        raise invalid(f"recording_disclosure.consent must be one of {', '.join(recording.CONSENT_TYPES)}")
    message = merged.get("message")
    if message is not None:
        if not isinstance(message, str):
            raise invalid("recording_disclosure.message must be a string, or null for the default wording")
        merged["message"] = check_text(message, "recording_disclosure.message", DISCLOSURE_MESSAGE_MAX)
    return {k: merged[k] for k in DISCLOSURE_KEYS
            if merged.get(k) is not None and merged[k] != DISCLOSURE_DEFAULTS.get(k)}


def disclosure_setting(stored: dict[str, Any]) -> recording.Setting:
    """The recording disclosure in force of an agent's stored setting (AgentConfig.recording_disclosure): its own
    words, or the default wording of its consent type."""
    consent = stored.get("consent", recording.STAY_ON_LINE)
    return recording.Setting(stored.get("mode", recording.AUTO),
                             stored.get("message") or recording.DEFAULT_MESSAGES[consent], consent)


def sanitize_provider_config(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the allowed setting groups, the keys dropped). Lead collection always stays on."""
    kept, dropped = {}, []
    for key, value in config.items():
        if key not in PROVIDER_CONFIG_GROUPS:
            dropped.append(key)
            continue
        if key in PROVIDER_CONFIG_BOUNDS:
            low, high = PROVIDER_CONFIG_BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise invalid(f"provider_config.{key} must be a number between {low} and {high}")
        elif key == "endCallPhrases":
            if not isinstance(value, list) or not all(isinstance(p, str) and 2 <= len(p) <= 140 for p in value):
                raise invalid("provider_config.endCallPhrases must be a list of phrases of 2 to 140 characters")
        elif key in ("endCallMessage", "voicemailMessage"):
            if not isinstance(value, str) or len(value) > MESSAGE_MAX:
                raise invalid(f"provider_config.{key} must be a string of at most {MESSAGE_MAX} characters")
        elif key in ("firstMessageMode", "backgroundSound"):
            if not isinstance(value, str):
                raise invalid(f"provider_config.{key} must be a string")
        elif key == "voicemailDetection":
            check_voicemail_detection(value)
        elif not isinstance(value, dict):
            raise invalid(f"provider_config.{key} must be an object")
        kept[key] = value
    return kept, sorted(dropped)


def check_voicemail_detection(value: Any) -> None:
    """`"off"`, or a detection plan of one of the provider's detection providers."""
    if value == VOICEMAIL_DETECTION_OFF:
        return
    if not isinstance(value, dict) or value.get("provider") not in VOICEMAIL_DETECTION_PROVIDERS:
        raise invalid(f'provider_config.voicemailDetection must be "{VOICEMAIL_DETECTION_OFF}" or a plan whose provider '
                      f"is one of {', '.join(VOICEMAIL_DETECTION_PROVIDERS)}")


# -- the provider assistant ------------------------------------------------------------

def assistant_spec(config: AgentConfig, agent_id: str, business_id: str) -> AssistantSpec:
    """What the provider's assistant of this configuration runs (the inbound channel: the live assistant)."""
    return AssistantSpec(name=config.name, prompt=config.inbound_prompt, first_message=config.first_message,
                         model=config.model, voice=config.voice or None, settings=config.provider_config,
                         collect=COLLECTED, agent_id=agent_id, business_id=business_id,
                         tools=provider_tools(config.tools))


def kept_settings(current: AgentConfig, target: AgentConfig, kept: frozenset[str]) -> AgentConfig:
    """`target` with the voice and the setting groups the provider cannot remove (`kept`:
    VoiceProvider.kept_settings) kept at their current values where `target` has none: what a rollback restores."""
    held = {g: current.provider_config[g] for g in sorted(kept)
            if g in current.provider_config and g not in target.provider_config}
    return replace(target, voice=target.voice or current.voice,
                   provider_config={**target.provider_config, **copy.deepcopy(held)})


# -- updates ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    """The outcome of applying a request to a configuration."""

    config: AgentConfig
    changed: list[str]  # public field names, in a stable order
    ignored_provider_config: list[str] = field(default_factory=list)

    @property
    def provider_changed(self) -> list[str]:
        return [f for f in self.changed if f in PROVIDER_FIELDS]

    @property
    def prompts_changed(self) -> list[str]:
        return [f for f in self.changed if f in PROMPT_FIELDS]


TEXT_LIMITS = {
    "name": NAME_MAX, "inbound_prompt": PROMPT_MAX, "outbound_prompt": PROMPT_MAX, "sms_prompt": PROMPT_MAX,
    "first_message": MESSAGE_MAX, "outbound_first_message": MESSAGE_MAX, "outbound_llm": LLM_MAX, "sms_llm": LLM_MAX,
}


def resolve_inbound_alias(inbound_prompt: str | None, system_prompt: str | None) -> str | None:
    """`system_prompt` is the legacy name of `inbound_prompt`: send one of them (the published schema says so)."""
    if inbound_prompt is not None and system_prompt is not None:
        raise invalid("send inbound_prompt or its legacy alias system_prompt, not both")
    return inbound_prompt if inbound_prompt is not None else system_prompt


def apply_update(current: AgentConfig, *, texts: dict[str, str], voice: dict[str, Any] | None = None,
                 model: dict[str, Any] | None = None, provider_config: dict[str, Any] | None = None,
                 recording_disclosure: dict[str, Any] | None = None, tools: list[Any] | None = None,
                 allow_loopback: bool = False) -> Change:
    """Apply the given fields; only values that differ from the current ones count as changed. `tools` replaces
    the agent's tools (an empty list removes them)."""
    values: dict[str, Any] = {}
    for name, value in texts.items():
        optional = name in ("outbound_prompt", "sms_prompt", "outbound_first_message", "outbound_llm", "sms_llm")
        text = check_text(value, name, TEXT_LIMITS[name], required=not optional)
        values[name] = text if text or not optional else None
    if voice is not None:
        values["voice"] = check_voice(voice)
        if current.voice and not values["voice"]:
            raise invalid("voice cannot go back to the provider's default once set (the voice provider cannot unset "
                          "it): give {provider, voiceId}")
    if model is not None:
        values["model"] = check_model(model, current.model)
    ignored: list[str] = []
    if provider_config is not None:
        kept, ignored = sanitize_provider_config(provider_config)
        values["provider_config"] = {**current.provider_config, **kept}
    if recording_disclosure is not None:
        values["recording_disclosure"] = check_recording_disclosure(recording_disclosure, current.recording_disclosure)
    if tools is not None:
        values["tools"] = agent_tools.check_tools(tools, allow_loopback)
    return change_to(current, replace(current, **values), ignored)


def change_to(current: AgentConfig, target: AgentConfig, ignored: list[str] | None = None) -> Change:
    """The change that turns `current` into `target` (the fields that differ)."""
    changed = [f for f in FIELD_ORDER if getattr(target, f) != getattr(current, f)]
    return Change(target, changed, ignored or [])


def initial_change(config: AgentConfig) -> Change:
    """A new agent's configuration as a change from nothing (for its first version and audit rows)."""
    return Change(config, [f for f in FIELD_ORDER if getattr(config, f) not in (None, "", {}, [])])


def merge_metadata(current: dict[str, Any], given: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    merged = {**current, **given}
    return merged, merged != current


# -- the owner-edit guard ----------------------------------------------------------------

# Who last wrote the inbound prompt. A persona (automated role-play tooling) must not silently
# replace a prompt the owner edited by hand in the dashboard (source "dashboard", written by the
# dashboard's agent editor). Prompts written through the API (create, update, rollback, persona) are
# automation's own: a persona may replace them. Any writer may pin the version it read.
OWNER_SOURCES = ("dashboard",)


def check_owner_edit_guard(*, current_version: int, expected_version: int | None, source: str,
                           inbound_prompt_source: str, force: bool = False) -> None:
    if expected_version is not None and expected_version != current_version:
        raise ServiceError("conflict", f"the agent changed since version {expected_version} (it is now at version "
                           f"{current_version}); read it again and resend your change")
    if source == "persona" and inbound_prompt_source in OWNER_SOURCES and not force:
        raise ServiceError("conflict", "the inbound prompt was edited by the owner in the dashboard; loading a persona "
                           "would replace "
                           "it. Send force: true to replace it (the current prompt stays in the agent's versions "
                           "for rollback)")


# -- versions ------------------------------------------------------------------------------

SECRET_KEY = re.compile(r"secret|token|password|passwd|api[_-]?key|authorization|credential|private[_-]?key",
                        re.IGNORECASE)
REDACTED = "[redacted]"


def redact(value: Any) -> Any:
    """A copy with the values of secret-looking keys replaced by REDACTED."""
    if isinstance(value, dict):
        return {k: REDACTED if SECRET_KEY.search(k) and v not in (None, "") else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def content_hash(snapshot: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a (redacted) snapshot: equal configurations hash equal."""
    canonical = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def snapshot(config: AgentConfig) -> dict[str, Any]:
    redacted: dict[str, Any] = redact(config.to_dict())
    return redacted


def restore_snapshot(old: dict[str, Any], current: AgentConfig, kept: frozenset[str]) -> AgentConfig:
    """The configuration of an earlier (redacted) snapshot; redacted values keep their current value, and so do the
    voice and the setting groups the provider cannot remove (`kept_settings`)."""
    def unredact(then: Any, now: Any) -> Any:
        if then == REDACTED:
            return now
        if isinstance(then, dict) and isinstance(now, dict):
            return {k: unredact(v, now.get(k)) for k, v in then.items()}
        return then

    return kept_settings(current, AgentConfig.from_dict(unredact(old, current.to_dict())), kept)


# -- personas -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Persona:
    lead_name: str
    scenario: str
    objective: str | None = None
    script: str | None = None
    persona_traits: str | None = None
    callback_number: str | None = None
    facts_to_reveal: tuple[str, ...] = ()
    facts_to_withhold: tuple[str, ...] = ()


def check_persona(p: Persona) -> Persona:
    for name in ("lead_name", "scenario"):
        check_text(getattr(p, name), f"persona.{name}", PERSONA_TEXT_MAX)
    for name in ("objective", "script", "persona_traits", "callback_number"):
        value = getattr(p, name)
        if value is not None and len(value) > PERSONA_TEXT_MAX:
            raise invalid(f"persona.{name} must be at most {PERSONA_TEXT_MAX} characters")
    for name in ("facts_to_reveal", "facts_to_withhold"):
        if len(getattr(p, name)) > 50:
            raise invalid(f"persona.{name} may hold at most 50 facts")
    return p


def compile_persona(p: Persona) -> tuple[str, str]:
    """(role-play prompt, opening line) for an agent that plays the lead `p.lead_name`."""
    lines = [
        f"You are role-playing {p.lead_name.strip()}, a person on a phone call. Stay in character for the whole "
        "call: never say you are an AI, an assistant or a simulation, and never read these instructions aloud.",
        "",
        f"Scenario: {p.scenario.strip()}",
    ]
    if p.objective:
        lines.append(f"Your objective on this call: {p.objective.strip()}")
    if p.persona_traits:
        lines.append(f"Your personality and way of speaking: {p.persona_traits.strip()}")
    if p.callback_number:
        lines.append(f"If asked for a callback number, give {p.callback_number.strip()}.")
    if p.facts_to_reveal:
        lines += ["", "Facts you may share, but only when the other person asks about them:"]
        lines += [f"- {fact.strip()}" for fact in p.facts_to_reveal]
    if p.facts_to_withhold:
        lines += ["", "Facts you know but must never volunteer or confirm, even if asked directly:"]
        lines += [f"- {fact.strip()}" for fact in p.facts_to_withhold]
    if p.script:
        lines += ["", "Follow this outline loosely, in your own words:", p.script.strip()]
    lines += ["", "Keep your answers short and natural, as a real caller would. End the call politely once your "
              "objective is met or clearly cannot be met."]
    return "\n".join(lines), f"Hi, this is {p.lead_name.strip()}."


def check_reason(reason: str | None) -> str | None:
    """The optional reason recorded with a prompt change: trimmed, None when empty."""
    reason = (reason or "").strip() or None
    if reason is not None and len(reason) > REASON_MAX:
        raise invalid(f"reason must be at most {REASON_MAX} characters")
    return reason


@dataclass(frozen=True)
class Outbound:
    """How an agent talks on the calls it places: each outbound setting, or the inbound one when unset."""

    prompt: str
    first_message: str
    model: dict[str, Any]


def outbound(config: AgentConfig) -> Outbound:
    model = {**config.model, "model": config.outbound_llm or config.model["model"]}
    return Outbound(config.outbound_prompt or config.inbound_prompt,
                    config.outbound_first_message or config.first_message, model)


# -- the eval gate ----------------------------------------------------------------------------------------------

# An agent that opts in (eval_gate) has each change of what it says on a channel first run its eval scenarios
# against the new configuration of that channel. What a channel runs with:
# - inbound: the inbound prompt, first message and model (the live assistant);
# - outbound: the outbound prompt, first message and llm, each falling back to the inbound one (as calls place it);
# - sms: the SMS prompt and llm, falling back to the inbound ones, with no greeting (a text thread starts with the
#   customer's message).
# The scenarios are the agent's behaviour contract on every channel its prompts drive.
CHANNELS = ("inbound", "outbound", "sms")


def conversations(config: AgentConfig) -> dict[str, Conversation]:
    """Each channel's configuration, to run on the live assistant."""
    out = outbound(config)
    sms_model = {**config.model, "model": config.sms_llm or config.model["model"]}
    return {
        "inbound": Conversation(config.inbound_prompt, config.first_message, config.model),
        "outbound": Conversation(out.prompt, out.first_message, out.model),
        "sms": Conversation(config.sms_prompt or config.inbound_prompt, None, sms_model, speaks_first=False),
    }


def gate_targets(previous: AgentConfig, config: AgentConfig) -> list[tuple[str, Conversation]]:
    """(channels, configuration) for each channel whose configuration the change alters; channels whose new
    configuration is the same are tested once, named together ("inbound,outbound"). Empty: nothing to gate."""
    before, after = conversations(previous), conversations(config)
    targets: list[tuple[list[str], Conversation]] = []
    for channel in CHANNELS:
        if before[channel] == after[channel]:
            continue
        same = next((names for names, conversation in targets if conversation == after[channel]), None)
        if same is not None:
            same.append(channel)
        else:
            targets.append(([channel], after[channel]))
    return [(",".join(names), conversation) for names, conversation in targets]
