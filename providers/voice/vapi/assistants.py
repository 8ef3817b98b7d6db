"""Vapi's assistants from ours: the create and update bodies of an `AssistantSpec`, the overrides that run a
`Conversation` on the live assistant, and what the live assistant runs with."""

from __future__ import annotations

import copy
from typing import Any

from providers.voice.port import (
    AssistantSpec,
    AssistantTool,
    Conversation,
    EndCallTool,
    FunctionTool,
    Json,
    LiveAssistant,
    TransferTool,
)

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
# TransferPlan.mode of a warm transfer and of a blind one (put through at once). A warm one is Vapi's assistant-based
# warm transfer: the caller waits on hold while the destination is dialled and hears who is coming (the plan's
# `message`, else a summary of the call), and it is the mode whose fallbackPlan is documented for every organization
# (a blind transfer's applies where the organization enabled transfer outcome detection: FIDELITY-calls.md).
WARM_TRANSFER, BLIND_TRANSFER = "warm-transfer-experimental", "blind-transfer"
# What a failed transfer comes to: the caller hears TRANSFER_FAILED (TransferFallbackPlan.message) and stays with the
# assistant (endCallEnabled false); a transfer tool call that fails (no destination: our answer's error) has the
# model say a sentence of its own with FAILED_TRANSFER_HINT (ToolMessageFailed, role system: the model answers from
# the failure and the hint).
TRANSFER_FAILED = "I'm sorry, I couldn't put you through just now. I'm still here to help."
FAILED_TRANSFER_HINT = ("The transfer did not go through. Tell the caller in one short sentence that you could not "
                        "put them through right now, then keep helping them.")


def chat_model(model: Json, prompt: str) -> dict[str, Any]:
    return {**model, "messages": [{"role": "system", "content": prompt}]}


def needs_server(spec: AssistantSpec) -> bool:
    """Whether the spec's tools call our server (function tools: their `server` is our messages URL)."""
    return any(isinstance(tool, FunctionTool) for tool in spec.tools)


def tool_body(tool: AssistantTool, server: Json | None) -> dict[str, Any]:
    """One of `model.tools`: a function tool (CreateFunctionToolDTO) answered at `server`, a transferCall tool
    (CreateTransferCallToolDTO: number destinations with their transferPlan) or an endCall tool."""
    if isinstance(tool, FunctionTool):
        if server is None:
            raise RuntimeError("a function tool needs the server that answers it")
        return {"type": "function", "server": dict(server),
                "function": {"name": tool.name, "description": tool.description,
                             "parameters": copy.deepcopy(dict(tool.parameters))}}
    if isinstance(tool, TransferTool):
        return {"type": "transferCall", "destinations": [
            {"type": "number", "number": d.phone_number, "description": d.name, "transferPlan": transfer_plan(d.warm),
             **({"message": d.message} if d.message else {})} for d in tool.destinations],
            "messages": [{"type": "request-failed", "role": "system", "content": FAILED_TRANSFER_HINT}]}
    if isinstance(tool, EndCallTool):
        return {"type": "endCall"}
    raise TypeError(f"not a tool: {tool!r}")


def transfer_plan(warm: bool, introduction: str | None = None) -> dict[str, Any]:
    """A number destination's TransferPlan: warm (the person hears `introduction`, else a summary of the call) or
    blind, and back to the assistant with TRANSFER_FAILED said when it fails."""
    return {"mode": WARM_TRANSFER if warm else BLIND_TRANSFER,
            **({"message": introduction} if warm and introduction else {}),
            "fallbackPlan": {"message": TRANSFER_FAILED, "endCallEnabled": False}}


def assistant_model(spec: AssistantSpec, server: Json | None) -> dict[str, Any]:
    """The assistant's model: the owner's settings, the system prompt and the tools."""
    model = chat_model(spec.model, spec.prompt)
    if spec.tools:
        model["tools"] = [tool_body(tool, server) for tool in spec.tools]
    return model


def analysis_plan(spec: AssistantSpec) -> dict[str, Any]:
    """The owner's analysisPlan with our structured data (`spec.collect`) enforced."""
    plan = dict(spec.settings.get(ANALYSIS_PLAN) or {})
    plan["structuredDataPlan"] = {"enabled": True, "schema": copy.deepcopy(dict(spec.collect))}
    return plan


def create_body(spec: AssistantSpec, server: Json | None = None) -> dict[str, Any]:
    """`POST /assistant` for this spec (`server`: where its function tools are answered, when it has some)."""
    body = {
        **copy.deepcopy(dict(spec.settings)),
        "name": spec.name[:NAME_MAX],
        "firstMessage": spec.first_message,
        "model": assistant_model(spec, server),
        "analysisPlan": analysis_plan(spec),
        "metadata": {"switchboard_agent_id": spec.agent_id, "business_id": spec.business_id},
    }
    if spec.voice:
        body["voice"] = dict(spec.voice)
    return body


def update_body(spec: AssistantSpec, previous: AssistantSpec, server: Json | None = None) -> dict[str, Any]:
    """`PATCH /assistant/{id}` that turns the assistant of `previous` into that of `spec` (what differs only). It
    never holds a null (Vapi's update takes none): a setting group no longer set is sent as its default
    (SETTING_DEFAULTS); a voice or group without one is not sent (the agents service keeps changes from removing
    them: `VoiceProvider.kept_settings`). The model is sent whole (Vapi replaces it whole), with its tools."""
    body: dict[str, Any] = {}
    if spec.name[:NAME_MAX] != previous.name[:NAME_MAX]:
        body["name"] = spec.name[:NAME_MAX]
    if spec.first_message != previous.first_message:
        body["firstMessage"] = spec.first_message
    if (spec.prompt, spec.model, spec.tools) != (previous.prompt, previous.model, previous.tools):
        body["model"] = assistant_model(spec, server)
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
