"""Eval scenario rules as plain functions: what a scenario's turns must be, and the scenario as the provider mirrors it.

A scenario is a scripted mock conversation: user turns `{role: "user", content}` and assistant turns
`{role: "assistant", judgePlan}` that alternate. The judge plan grades the assistant's reply at that turn:
- `exact`: the reply equals `content`; `regex`: the reply matches the regular expression `content` (searched);
  `content` is required (the provider requires it; `.*` checks nothing), and both may also name `toolCalls` the
  reply must make (`[{name, arguments?}]`, in order), as the provider's plans do: an exact plan's `arguments` must
  equal the call's, a regex plan's are regular expressions each searched in the value of that argument (the
  arguments a plan leaves out are not checked). A call's name is the tool's as the assistant calls it
  (`send_sms`, `book_appointment`, a custom tool's name). In a run no tool runs: each expected call is answered
  with test mode's stub (`test_mode`);
- `ai`: a language model reads the rubric `model.messages` (with `{{messages[-1]}}`, the last turn, and
  `{{messages}}`, the whole conversation, filled in) and must answer exactly `pass` or `fail`, so the rubric has to
  say both words.
Every refusal names the turn and the field, e.g. `messages[3].judgePlan.content is required`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contracts.evals import (
    CONTENT_MAX,
    DESCRIPTION_MAX,
    ENDED,
    JUDGE_PROVIDERS,
    JUDGE_TYPES,
    MAX_WAIT_MS,
    NAME_MAX,
    ROLES,
    TURNS_MAX,
)
from core.errors import invalid
from core.text import optional_text
from providers.voice.port import EvalRun, EvalSpec
from services.evals import test_mode

RUBRIC_MAX = 4000  # a rubric message: the provider sets no limit
TEMPLATE_VARIABLES = ("{{messages[-1]}}", "{{messages}}")
_TEMPLATE = re.compile(r"\{\{.*?\}\}")


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    messages: list[dict[str, Any]]


def check_name(name: str) -> str:
    text = (name or "").strip()
    if not text or len(text) > NAME_MAX:
        raise invalid(f"name is required (1 to {NAME_MAX} characters), e.g. booking.asks_for_phone")
    return text


def check_description(description: str | None) -> str:
    return optional_text(description, "description", DESCRIPTION_MAX) or ""


def _text(value: object, where: str, limit: int = CONTENT_MAX) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid(f"{where} is required: a non-empty string")
    if len(value) > limit:
        raise invalid(f"{where} must be at most {limit} characters")
    return value


def _extra_keys(turn: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(turn) - allowed)
    if extra:
        raise invalid(f"{where} has unknown field(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


def _tool_calls(value: object, where: str, patterns: bool) -> list[dict[str, Any]]:
    """The tool calls a reply must make, in order; `patterns`: a regex plan's, whose argument values are regular
    expressions searched in the values the call gave."""
    if not isinstance(value, list) or not value:
        raise invalid(f"{where} must be a non-empty array of {{name, arguments?}}")
    for i, call in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(call, dict):
            raise invalid(f"{at} must be an object {{name, arguments?}}")
        _extra_keys(call, {"name", "arguments"}, at)
        _text(call.get("name"), f"{at}.name", 100)
        if "arguments" in call and not isinstance(call["arguments"], dict):
            raise invalid(f"{at}.arguments must be an object")
        for key, pattern in (call.get("arguments") or {}).items() if patterns else ():
            _pattern(pattern, f"{at}.arguments.{key}")
    return value


def _pattern(value: object, where: str) -> None:
    content = _text(value, where)
    try:
        re.compile(content)
    except re.error as exc:
        raise invalid(f"{where} is not a valid regular expression: {exc}") from None


def _rubric(model: object, where: str) -> None:
    if not isinstance(model, dict):
        raise invalid(f"{where} is required: {{provider, model, messages: [{{role, content}}]}}")
    _extra_keys(model, {"provider", "model", "messages", "temperature", "maxTokens"}, where)
    if model.get("provider") not in JUDGE_PROVIDERS:
        raise invalid(f"{where}.provider must be one of {', '.join(JUDGE_PROVIDERS)}")
    _text(model.get("model"), f"{where}.model", 200)
    messages = model.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid(f"{where}.messages must be a non-empty array of {{role, content}}")
    rubric = []
    for i, message in enumerate(messages):
        at = f"{where}.messages[{i}]"
        if not isinstance(message, dict):
            raise invalid(f"{at} must be an object {{role, content}}")
        _extra_keys(message, {"role", "content"}, at)
        if message.get("role") not in ("system", "user", "assistant"):
            raise invalid(f"{at}.role must be system, user or assistant")
        content = _text(message.get("content"), f"{at}.content", RUBRIC_MAX)
        unknown = [v for v in _TEMPLATE.findall(content) if v not in TEMPLATE_VARIABLES]
        if unknown:
            raise invalid(f"{at}.content uses {unknown[0]}; the rubric may use only "
                          f"{' and '.join(TEMPLATE_VARIABLES)}")
        rubric.append(content.lower())
    text = " ".join(rubric)
    if not (re.search(r"\bpass\b", text) and re.search(r"\bfail\b", text)):
        raise invalid(f"{where}.messages must make the judge answer exactly pass or fail: say both words")


def _judge_plan(plan: object, where: str) -> None:
    if not isinstance(plan, dict):
        raise invalid(f"{where} is required: an object with type {', '.join(JUDGE_TYPES)}")
    kind = plan.get("type")
    if kind not in JUDGE_TYPES:
        raise invalid(f"{where}.type must be one of {', '.join(JUDGE_TYPES)}")
    if kind == "ai":
        _extra_keys(plan, {"type", "model"}, where)
        _rubric(plan.get("model"), f"{where}.model")
        return
    _extra_keys(plan, {"type", "content", "toolCalls"}, where)
    if "content" not in plan:
        raise invalid(f"{where}.content is required (the voice provider requires it); to check only toolCalls use "
                      "a regex plan with content .*")
    if kind == "regex":
        _pattern(plan["content"], f"{where}.content")
    else:
        _text(plan["content"], f"{where}.content")
    if "toolCalls" in plan:
        _tool_calls(plan["toolCalls"], f"{where}.toolCalls", patterns=kind == "regex")


def check_messages(messages: object) -> list[dict[str, Any]]:
    """The turns as given, once each is checked; refusals name the turn and the field."""
    if not isinstance(messages, list) or not messages:
        raise invalid("messages is required: a non-empty array of turns")
    if len(messages) > TURNS_MAX:
        raise invalid(f"messages may have at most {TURNS_MAX} turns")
    previous = None
    for i, turn in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(turn, dict):
            raise invalid(f"{where} must be an object with role user or assistant")
        role = turn.get("role")
        if role not in ROLES:
            raise invalid(f"{where}.role must be user or assistant")
        if role == previous:
            raise invalid(f"{where}.role: turns alternate user and assistant; two {role} turns follow each other")
        previous = role
        if role == "user":
            _extra_keys(turn, {"role", "content"}, where)
            _text(turn.get("content"), f"{where}.content")
        else:
            _extra_keys(turn, {"role", "judgePlan"}, where)
            _judge_plan(turn.get("judgePlan"), f"{where}.judgePlan")
    if not any(t["role"] == "assistant" for t in messages):
        raise invalid("messages must have at least one assistant turn with a judgePlan: nothing is graded otherwise")
    return messages


def new_scenario(name: str, description: str | None, messages: object) -> Scenario:
    return Scenario(check_name(name), check_description(description), check_messages(messages))


def eval_spec(scenario: Scenario) -> EvalSpec:
    """The scenario as the provider mirrors it, with test mode's stubs for the tool calls it expects."""
    return EvalSpec(scenario.name, scenario.description, scenario.messages, test_mode.stubs(scenario.messages))


# -- runs ---------------------------------------------------------------------------------------------------------

RUNS_LISTED = 50
# What started a run: POST /api/v1/evals/run, or an agent's eval gate on a configuration change.
REQUEST, EVAL_GATE = "request", "eval_gate"


def check_max_wait(max_wait_ms: int | None) -> int:
    if max_wait_ms is None:
        return MAX_WAIT_MS[0]
    if not 0 <= max_wait_ms <= MAX_WAIT_MS[1]:
        raise invalid(f"max_wait_ms must be 0 to {MAX_WAIT_MS[1]}")
    return max_wait_ms


def failed_to_start(reason: str) -> EvalRun:
    """A run the provider never took (refused, or its rate limit outlasted our retries)."""
    return EvalRun("", "ended", False, (), reason[:500])


# -- the eval gate ------------------------------------------------------------------------------------------------

GATE_PASSED, GATE_FAILED, GATE_UNFINISHED, NO_SCENARIOS = "passed", "failed", "unfinished", "no_scenarios"


@dataclass(frozen=True)
class GateVerdict:
    """An eval gate's verdict on its runs; `shown` are the runs that explain a refusal (failed or unfinished)."""

    status: str
    total: int
    completed: int
    passed: int
    failed: int
    shown: list[Any]


def gate_verdict(runs: list[Any]) -> GateVerdict:
    """failed when any run ended without passing, else unfinished when any has not ended, else passed; with no
    runs at all (the agent has no scenarios) no_scenarios: there is nothing to hold the change to."""
    if not runs:
        return GateVerdict(NO_SCENARIOS, 0, 0, 0, 0, [])
    ended = [r for r in runs if r.status == ENDED]
    passed = sum(1 for r in ended if r.passed)
    failing = [r for r in ended if not r.passed]
    unfinished = [r for r in runs if r.status != ENDED]
    status = GATE_FAILED if failing else GATE_UNFINISHED if unfinished else GATE_PASSED
    return GateVerdict(status, len(runs), len(ended), passed, len(failing), failing + unfinished)
