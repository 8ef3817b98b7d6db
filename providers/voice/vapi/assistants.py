"""Vapi's assistants from ours: the create and update bodies of an `AssistantSpec`, the overrides that run a
`Conversation` on the live assistant, and what the live assistant runs with."""

from __future__ import annotations

import copy
from typing import Any

from providers.voice.port import AssistantSpec, Conversation, Json, LiveAssistant

# Vapi limits assistant names to 40 characters; ours may be longer.
NAME_MAX = 40
# What a setting group goes back to when it is no longer set: Vapi's update cannot take a null, so we send its
# documented default (an empty plan: every field of these plans has a default). The groups our API takes
# (contracts.agents.PROVIDER_CONFIG_GROUPS) without one here and but analysisPlan are `KEPT`.
SETTING_DEFAULTS: dict[str, Any] = {
    "startSpeakingPlan": {},
    "stopSpeakingPlan": {},
    "artifactPlan": {},
    "backgroundSpeechDenoisingPlan": {},
    "monitorPlan": {},
    "maxDurationSeconds": 600,
    "endCallPhrases": [],
    "voicemailDetection": "off",
    "firstMessageMode": "assistant-speaks-first",
    "backgroundSound": "office",
}
ANALYSIS_PLAN = "analysisPlan"
KEPT = frozenset({"endCallMessage", "transcriber", "voicemailMessage"})
# The firstMessageMode of an assistant that does not open the conversation.
WAITS_FOR_USER = "assistant-waits-for-user"
TOOL_KEYS = ("tools", "toolIds")  # where an assistant's model holds its tools


def chat_model(model: Json, prompt: str) -> dict[str, Any]:
    return {**model, "messages": [{"role": "system", "content": prompt}]}


def analysis_plan(spec: AssistantSpec) -> dict[str, Any]:
    """The owner's analysisPlan with our structured data (`spec.collect`) enforced."""
    plan = dict(spec.settings.get(ANALYSIS_PLAN) or {})
    plan["structuredDataPlan"] = {"enabled": True, "schema": copy.deepcopy(dict(spec.collect))}
    return plan


def create_body(spec: AssistantSpec) -> dict[str, Any]:
    """`POST /assistant` for this spec."""
    body = {
        **copy.deepcopy(dict(spec.settings)),
        "name": spec.name[:NAME_MAX],
        "firstMessage": spec.first_message,
        "model": chat_model(spec.model, spec.prompt),
        "analysisPlan": analysis_plan(spec),
        "metadata": {"switchboard_agent_id": spec.agent_id, "business_id": spec.business_id},
    }
    if spec.voice:
        body["voice"] = dict(spec.voice)
    return body


def update_body(spec: AssistantSpec, previous: AssistantSpec) -> dict[str, Any]:
    """`PATCH /assistant/{id}` that turns the assistant of `previous` into that of `spec` (what differs only). It
    never holds a null (Vapi's update takes none): a setting group no longer set is sent as its default
    (SETTING_DEFAULTS); a voice or group without one is not sent (the agents service keeps changes from removing
    them: `VoiceProvider.kept_settings`)."""
    body: dict[str, Any] = {}
    if spec.name[:NAME_MAX] != previous.name[:NAME_MAX]:
        body["name"] = spec.name[:NAME_MAX]
    if spec.first_message != previous.first_message:
        body["firstMessage"] = spec.first_message
    if (spec.prompt, spec.model) != (previous.prompt, previous.model):
        body["model"] = chat_model(spec.model, spec.prompt)
    if spec.voice != previous.voice and spec.voice:
        body["voice"] = dict(spec.voice)
    if spec.settings != previous.settings:
        body.update(
            {
                group: copy.deepcopy(SETTING_DEFAULTS[group])
                for group in previous.settings
                if group not in spec.settings and group in SETTING_DEFAULTS
            }
        )
        body.update(copy.deepcopy(dict(spec.settings)))
        body[ANALYSIS_PLAN] = analysis_plan(spec)
    return body


def live(assistant: Json) -> LiveAssistant:
    """What an assistant runs with: the system prompt of its model, and its tools."""
    model = assistant.get("model") or {}
    prompt = next(
        (
            m.get("content")
            for m in model.get("messages") or ()
            if m.get("role") == "system" and isinstance(m.get("content"), str)
        ),
        None,
    )
    return LiveAssistant(prompt, {key: model[key] for key in TOOL_KEYS if model.get(key)})


def overrides(conversation: Conversation) -> dict[str, Any]:
    """The assistantOverrides that run `conversation` on the live assistant. An override's model replaces the
    assistant's whole model, so it carries the live assistant's tools (stubbed in an eval run)."""
    model = {**chat_model(conversation.model, conversation.prompt), **conversation.tools}
    if not conversation.speaks_first:
        return {"firstMessageMode": WAITS_FOR_USER, "model": model}
    return {"firstMessage": conversation.first_message, "model": model}
