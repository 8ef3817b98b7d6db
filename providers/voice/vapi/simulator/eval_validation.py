"""Request checks of the provider's eval API, as it makes them (CreateEvalDTO, UpdateEvalDTO, CreateEvalRunDTO
and the mock conversation's message DTOs in its OpenAPI document): whitelisted properties, then the fields, with
nested paths in the messages (`messages.1.judgePlan.type must be one of ...`). Each check returns a list of
messages (empty: valid).

A turn is one of: user `{role, content}`; system `{role, content}`; tool `{role, content}` (a mock tool
response) or `{role, judgePlan}` (an ai-judged tool response); assistant `{role, content?, toolCalls?}` (a mock)
or `{role, judgePlan, continuePlan?}` (an evaluated turn). Judge plans: exact and regex with `content` (required)
and `toolCalls` (a regex content must compile), ai with `model: {provider, model, messages}` (EvalOpenAIModel,
EvalAnthropicModel, EvalGoogleModel or EvalCustomModel, which adds `url`).
"""
from __future__ import annotations

import re
from typing import Any

from providers.voice.vapi.simulator import validation
from providers.voice.vapi.simulator.judges import compile_pattern
from providers.voice.vapi.simulator.standin import OVERRIDE_EXTRAS
from providers.voice.vapi.simulator.validation import is_number
from providers.voice.vapi.vocabulary import JUDGE_MODEL_PROVIDERS

EVAL_PROPERTIES = frozenset({"description", "messages", "name", "type"})
EVAL_RUN_PROPERTIES = frozenset({"eval", "evalId", "target", "type"})
EVAL_TARGET_ASSISTANT_PROPERTIES = frozenset({"type", "assistant", "assistantId", "assistantOverrides"})
EVAL_TYPE = "chat.mockConversation"
EVAL_NAME_MAX, EVAL_DESCRIPTION_MAX, CONTENT_MAX, TOOL_NAME_MAX = 80, 500, 1000, 100
ROLES = ("assistant", "system", "tool", "user")
JUDGE_TYPES = ("exact", "regex", "ai")
MODEL_BOUNDS = {"temperature": (0, 2), "maxTokens": (50, 10000), "timeoutSeconds": (20, 600)}
JUDGE_PROPERTIES = {"exact": frozenset({"type", "content", "toolCalls"}),
                    "regex": frozenset({"type", "content", "toolCalls"}),
                    "ai": frozenset({"type", "model", "autoIncludeMessageHistory"})}
MODEL_PROPERTIES = frozenset({"provider", "model", "messages", "temperature", "maxTokens", "url", "headers",
                              "timeoutSeconds", "thinking"})
CONTINUE_PROPERTIES = frozenset({"exitOnFailureEnabled", "contentOverride", "toolCallsOverride"})


def unknown(body: dict[str, Any], allowed: frozenset[str], prefix: str = "") -> list[str]:
    """Properties outside the whitelist, nested as the provider words them: `messages.0.property x should not
    exist` (`prefix` ends with a dot, or is empty at the top level)."""
    return [f"{prefix}property {k} should not exist" for k in sorted(set(body) - allowed)]


def _string(value: object, at: str, high: int | None = None, low: int = 0) -> list[str]:
    if not isinstance(value, str):
        return [f"{at} must be a string"]
    if high is not None and len(value) > high:
        return [f"{at} must be shorter than or equal to {high} characters"]
    if len(value) < low:
        return [f"{at} must be longer than or equal to {low} characters"]
    return []


def _tool_calls(calls: object, at: str) -> list[str]:
    if not isinstance(calls, list):
        return [f"{at} must be an array"]
    errors: list[str] = []
    for j, call in enumerate(calls):
        where = f"{at}.{j}"
        if not isinstance(call, dict):
            errors.append(f"{where} must be an object")
            continue
        errors += unknown(call, frozenset({"name", "arguments"}), f"{where}.")
        errors += _string(call.get("name"), f"{where}.name", TOOL_NAME_MAX, 1)
        if "arguments" in call and not isinstance(call["arguments"], dict):
            errors.append(f"{where}.arguments must be an object")
    return errors


def _judge_plan(plan: object, at: str, types: tuple[str, ...] = JUDGE_TYPES) -> list[str]:
    if not isinstance(plan, dict) or plan.get("type") not in types:
        return [f"{at}.type must be one of the following values: {', '.join(types)}"]
    errors = unknown(plan, JUDGE_PROPERTIES[plan["type"]], f"{at}.")
    if plan["type"] == "ai":
        return errors + _judge_model(plan.get("model"), f"{at}.model")
    errors += _string(plan.get("content"), f"{at}.content", CONTENT_MAX)
    if plan["type"] == "regex" and isinstance(plan.get("content"), str):
        try:
            compile_pattern(plan["content"])
        except re.error as exc:
            errors.append(f"{at}.content must be a valid regular expression ({exc})")
    if "toolCalls" in plan:
        errors += _tool_calls(plan["toolCalls"], f"{at}.toolCalls")
    return errors


def _judge_model(model: object, at: str) -> list[str]:
    if not isinstance(model, dict):
        return [f"{at} must be an object"]
    errors = unknown(model, MODEL_PROPERTIES, f"{at}.")
    if model.get("provider") not in JUDGE_MODEL_PROVIDERS:
        errors.append(f"{at}.provider must be one of the following values: {', '.join(JUDGE_MODEL_PROVIDERS)}")
    errors += _string(model.get("model"), f"{at}.model", 100, 1)
    if model.get("provider") == "custom-llm":
        errors += _string(model.get("url"), f"{at}.url", low=1)
    messages = model.get("messages")
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages):
        errors.append(f"{at}.messages must be a non-empty array of {{role, content}} objects")
    for field, (low, high) in MODEL_BOUNDS.items():
        if field in model and not (is_number(model[field]) and low <= model[field] <= high):
            errors.append(f"{at}.{field} must be a number from {low} to {high}")
    return errors


def _turn(turn: object, at: str) -> list[str]:
    if not isinstance(turn, dict) or turn.get("role") not in ROLES:
        return [f"{at}.role must be one of the following values: {', '.join(ROLES)}"]
    role = turn["role"]
    if role in ("user", "system"):
        return unknown(turn, frozenset({"role", "content"}), f"{at}.") + \
            _string(turn.get("content"), f"{at}.content", CONTENT_MAX if role == "user" else None)
    if role == "tool":
        if "judgePlan" in turn:
            return unknown(turn, frozenset({"role", "judgePlan"}), f"{at}.") + \
                _judge_plan(turn["judgePlan"], f"{at}.judgePlan", ("ai",))
        return unknown(turn, frozenset({"role", "content"}), f"{at}.") + _string(turn.get("content"), f"{at}.content")
    if "judgePlan" not in turn:  # a mock of what the assistant said
        errors = unknown(turn, frozenset({"role", "content", "toolCalls"}), f"{at}.")
        if "content" in turn:
            errors += _string(turn["content"], f"{at}.content", CONTENT_MAX)
        if "toolCalls" in turn:
            errors += _tool_calls(turn["toolCalls"], f"{at}.toolCalls")
        return errors
    errors = unknown(turn, frozenset({"role", "judgePlan", "continuePlan"}), f"{at}.")
    errors += _judge_plan(turn["judgePlan"], f"{at}.judgePlan")
    follow = turn.get("continuePlan")
    if follow is not None:
        if not isinstance(follow, dict):
            return [*errors, f"{at}.continuePlan must be an object"]
        errors += unknown(follow, CONTINUE_PROPERTIES, f"{at}.continuePlan.")
        if "exitOnFailureEnabled" in follow and not isinstance(follow["exitOnFailureEnabled"], bool):
            errors.append(f"{at}.continuePlan.exitOnFailureEnabled must be a boolean value")
        if "contentOverride" in follow:
            errors += _string(follow["contentOverride"], f"{at}.continuePlan.contentOverride", CONTENT_MAX)
        if "toolCallsOverride" in follow:
            errors += _tool_calls(follow["toolCallsOverride"], f"{at}.continuePlan.toolCallsOverride")
    return errors


def eval_(body: dict[str, Any], *, updating: bool = False, prefix: str = "") -> list[str]:
    errors = unknown(body, EVAL_PROPERTIES, prefix)
    if not updating or "messages" in body:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            errors.append(f"{prefix}messages must be a non-empty array")
        else:
            for i, turn in enumerate(messages):
                errors += _turn(turn, f"{prefix}messages.{i}")
    if (not updating or "type" in body) and body.get("type") != EVAL_TYPE:
        errors.append(f"{prefix}type must be one of the following values: {EVAL_TYPE}")
    if "name" in body:
        errors += _string(body["name"], f"{prefix}name", EVAL_NAME_MAX, 1)
    if "description" in body:
        errors += _string(body["description"], f"{prefix}description", EVAL_DESCRIPTION_MAX)
    return errors


def _assistant(body: object, at: str, overrides: bool = False) -> list[str]:
    """A transient assistant or assistant overrides: the assistant's own checks, under `at`."""
    if not isinstance(body, dict):
        return [f"{at} must be an object"]
    errors: list[str] = []
    if overrides:
        if "variableValues" in body and not isinstance(body["variableValues"], dict):
            errors.append(f"{at}.variableValues must be an object")
        if "tools:append" in body and not (isinstance(body["tools:append"], list)
                                           and all(isinstance(t, dict) for t in body["tools:append"])):
            errors.append(f"{at}.tools:append must be an array of objects")
        body = {k: v for k, v in body.items() if k not in OVERRIDE_EXTRAS}
    return [f"{at}.{m}" for m in validation.assistant(body)] + errors


def eval_run(body: dict[str, Any]) -> list[str]:
    errors = unknown(body, EVAL_RUN_PROPERTIES)
    if body.get("type") != "eval":
        errors.append("type must be one of the following values: eval")
    target = body.get("target")
    if not isinstance(target, dict) or target.get("type") != "assistant":
        errors.append("target.type must be one of the following values: assistant")
    else:
        errors += unknown(target, EVAL_TARGET_ASSISTANT_PROPERTIES, "target.")
        if isinstance(target.get("assistant"), dict):
            errors += _assistant(target["assistant"], "target.assistant")
        elif not isinstance(target.get("assistantId"), str):
            errors.append("target.assistantId or target.assistant must be given")
        if "assistantOverrides" in target:
            errors += _assistant(target["assistantOverrides"], "target.assistantOverrides", overrides=True)
    if isinstance(body.get("eval"), dict):
        errors += eval_(body["eval"], prefix="eval.")
    elif not isinstance(body.get("evalId"), str):
        errors.append("evalId or eval must be given")
    return errors
