"""Test mode: what a tool call answers in an eval run. Nothing runs: no text is sent, no slot read or booked, no
lead written, no call transferred, no custom tool's URL fetched. The assistant gets a stub instead, a sentence
saying what a live call would have done, made here from the tool's name and arguments.

The stubs reach the provider as the scenario's mock tool responses (the provider's documented way to answer a
tool call in a mock conversation): after an assistant turn whose judge plan names the tool calls it expects, one
stub per expected call, in order (`stubs`). An exact plan's arguments are the call's; a regex plan's are patterns,
so its stubs leave them out. A run's `stubbed_tool_calls` then shows each call with the stub the provider reports
the assistant got (none when the scenario expected no call at that turn).
"""
from __future__ import annotations

from typing import Any

from contracts.evals import CONTENT_MAX

PREFIX = "(test mode)"


def _said(arguments: dict[str, Any], key: str) -> str:
    value = arguments.get(key)
    return value.strip() if isinstance(value, str) else ""


def stub_result(name: str, arguments: dict[str, Any]) -> str:
    """The sentence a tool call answers in an eval run: what it would have done, and that nothing was done."""
    to = _said(arguments, "to") or "the caller"
    if name == "send_sms":
        text = _said(arguments, "text")
        done = f"A text would be sent to {to}" + (f': "{text}"' if text else "") + ". Nothing was sent."
    elif name == "send_link":
        link = _said(arguments, "name")
        done = f"The link {link or 'asked for'} would be texted to the caller. Nothing was sent."
    elif name == "check_availability":
        date = _said(arguments, "date")
        done = f"The free slots{' on ' + date if date else ''} would be looked up. Nothing was read."
    elif name == "book_appointment":
        when, who = _said(arguments, "starts_at"), _said(arguments, "name")
        done = (f"An appointment{' at ' + when if when else ''}{' for ' + who if who else ''} would be booked. "
                "Nothing was booked.")
    elif name == "update_lead":
        fields = ", ".join(f"{k}: {v}" for k, v in arguments.items() if isinstance(v, str) and v.strip())
        done = f"The caller's lead would be updated{' (' + fields + ')' if fields else ''}. Nothing was written."
    elif name == "transfer_call":
        done = "The call would be transferred to a person. Nothing was transferred."
    elif name == "end_call":
        done = "The call would end here."
    else:  # the business's own tool, or one the provider names
        done = f"The tool {name} would be called. Nothing was sent to it."
    return f"{PREFIX} {done}"[:CONTENT_MAX]


def stubs(messages: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Turn index -> the stubs answering the tool calls that turn's judge plan expects (module docstring)."""
    found: dict[int, list[str]] = {}
    for index, turn in enumerate(messages):
        plan = turn.get("judgePlan") if turn.get("role") == "assistant" else None
        if not isinstance(plan, dict) or not plan.get("toolCalls"):
            continue
        exact = plan.get("type") == "exact"
        found[index] = [stub_result(call["name"], (call.get("arguments") or {}) if exact else {})
                        for call in plan["toolCalls"]]
    return found
