"""The stand-in for the assistant under test in an eval run: it answers the mock conversation's assistant
turns from the assistant's configuration by fixed rules, so a test can write a prompt that passes a scenario
and one that fails it. No language model is involved.

The configuration (`effective_assistant`): the target's assistant (the stored one for `target.assistantId`, or
the transient `target.assistant`) with `target.assistantOverrides` on top. Each top-level key of the overrides
replaces the assistant's (a `model` override replaces the whole model); `tools:append` adds tools to
`model.tools`; `variableValues` fills `{{name}}` placeholders in the firstMessage and the prompt. The stored
assistant is never written.

The prompt: the content of the assistant's `model.messages` of role system, then the system turns of the mock
conversation so far. A prompt line (leading bullets allowed; keywords case-insensitive; no `"` inside the
quotes) of one of these forms is a rule:

    When the caller says "<text>", answer "<reply>".
    When the caller says "<text>", call <tool> with {"json": "arguments"} and answer "<reply>".
    When the caller says "<text>", call <tool>.

An assistant turn is answered (`StandIn.reply`):

1. before any user turn: with the firstMessage (a call opens with it);
2. else with the first rule whose <text> occurs in the last user turn (case-insensitive substring);
3. else, when the assistant has not spoken yet: with the firstMessage;
4. else, and wherever a firstMessage is missing or empty: with `FALLBACK_REPLY`,
   "I'm sorry, I can't help with that."
An assistant whose firstMessageMode is `assistant-waits-for-user` has no firstMessage here (it never opens).

A rule's tool call is made only when the assistant carries a tool of that name: `model.tools[i].function.name`
(function tools), else the tool's `name`, else its `type` (`sms`, `endCall`, `transferCall`, ...); each entry
of `model.toolIds` counts as a tool named by its id. A rule naming a tool the assistant does not carry answers
without the call. In an eval run every tool call is stubbed (see `mock_conversation`): never executed.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

FALLBACK_REPLY = "I'm sorry, I can't help with that."
WAITS_FOR_USER = "assistant-waits-for-user"  # the firstMessageMode of an assistant that never speaks first
OVERRIDE_EXTRAS = frozenset({"variableValues", "tools:append"})  # override keys that are not assistant fields

_RULE = re.compile(r'^[\s\-*•>]*when the caller says\s+"(?P<said>[^"]+)"\s*,?\s*(?P<then>.*)$', re.IGNORECASE)
_CALL = re.compile(r"call\s+(?P<tool>[A-Za-z0-9_.:-]+)\s*", re.IGNORECASE)
_WITH = re.compile(r"with\s+", re.IGNORECASE)
_AND = re.compile(r"(?:and|then|,)\s+", re.IGNORECASE)
_ANSWER = re.compile(r'(?:then\s+)?answer\s+"(?P<reply>[^"]*)"', re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


@dataclass(frozen=True)
class Rule:
    said: str
    reply: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def parse_rule(line: str) -> Rule | None:
    """The rule a prompt line states, or None when it states none."""
    match = _RULE.match(line.strip())
    if not match:
        return None
    rest, tool = match["then"].strip(), None
    arguments: dict[str, Any] = {}
    call = _CALL.match(rest)
    if call:
        tool, rest = call["tool"].rstrip(".,"), rest[call.end():]
        with_ = _WITH.match(rest)
        if with_:
            try:
                decoded, end = json.JSONDecoder().raw_decode(rest[with_.end():])
            except ValueError:
                return None
            if not isinstance(decoded, dict):
                return None
            arguments = decoded
            rest = rest[with_.end() + end:].strip()
        joiner = _AND.match(rest)
        rest = rest[joiner.end():] if joiner else rest
    answer = _ANSWER.match(rest.strip())
    reply = answer["reply"] if answer else None
    if reply is None and tool is None:
        return None
    return Rule(match["said"], reply, tool, arguments)


def parse_rules(text: str) -> list[Rule]:
    return [rule for rule in map(parse_rule, text.splitlines()) if rule is not None]


def _fill(text: str, values: dict[str, Any]) -> str:
    """`{{name}}` placeholders replaced by `values` (unknown names are left as they are)."""
    return _PLACEHOLDER.sub(lambda m: str(values[m[1]]) if m[1] in values else m[0], text)


def effective_assistant(assistant: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The configuration the run uses: a deep copy of `assistant` with `overrides` applied (module docstring)."""
    merged = copy.deepcopy(assistant)
    overrides = copy.deepcopy(overrides or {})
    merged.update({k: v for k, v in overrides.items() if k not in OVERRIDE_EXTRAS})
    if overrides.get("tools:append"):
        extended = merged["model"] = dict(merged.get("model") or {})
        extended["tools"] = [*(extended.get("tools") or []), *overrides["tools:append"]]
    values = overrides.get("variableValues") or {}
    if values:
        if isinstance(merged.get("firstMessage"), str):
            merged["firstMessage"] = _fill(merged["firstMessage"], values)
        model = merged.get("model")
        if isinstance(model, dict) and isinstance(model.get("messages"), list):
            model["messages"] = [{**m, "content": _fill(m["content"], values)} if isinstance(m.get("content"), str)
                                 else m for m in model["messages"]]
    return merged


def tool_name(tool: dict[str, Any]) -> str | None:
    return (tool.get("function") or {}).get("name") or tool.get("name") or tool.get("type")


class StandIn:
    """The assistant under test, answering by the module's rules."""

    def __init__(self, assistant: dict[str, Any]) -> None:
        given = assistant.get("model")
        model: dict[str, Any] = given if isinstance(given, dict) else {}
        waits = assistant.get("firstMessageMode") == WAITS_FOR_USER
        self.first_message = "" if waits else assistant.get("firstMessage") or ""
        self.prompt = "\n".join(m["content"] for m in model.get("messages") or ()
                                if isinstance(m, dict) and m.get("role") == "system"
                                and isinstance(m.get("content"), str))
        self.tools: dict[str, dict[str, Any]] = {}
        for tool in model.get("tools") or ():
            if isinstance(tool, dict) and (name := tool_name(tool)):
                self.tools.setdefault(name, tool)
        for tool_id in model.get("toolIds") or ():
            if isinstance(tool_id, str):
                self.tools.setdefault(tool_id, {"type": "toolId", "id": tool_id})

    def reply(self, history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
        """The next assistant message after `history` (the conversation so far): its content and the tool calls
        it makes (`[{"name", "arguments"}]`, only tools the assistant carries)."""
        users = [m for m in history if m.get("role") == "user"]
        spoken = any(m.get("role") == "assistant" for m in history)
        if not users:
            return self.first_message or FALLBACK_REPLY, []
        said = str(users[-1].get("content") or "").lower()
        prompt = "\n".join([self.prompt, *(str(m.get("content") or "") for m in history if m.get("role") == "system")])
        for rule in parse_rules(prompt):
            if rule.said.lower() in said:
                calls = ([{"name": rule.tool, "arguments": dict(rule.arguments)}]
                         if rule.tool and rule.tool in self.tools else [])
                return rule.reply or "", calls
        if not spoken and self.first_message:
            return self.first_message, []
        return FALLBACK_REPLY, []
