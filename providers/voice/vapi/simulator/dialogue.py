"""A call whose caller says given lines (the control plane's `caller`), answered by the stand-in assistant.

The assistant opens with its first message (unless it waits for the caller), then each caller line is answered by
the stand-in's rules (`standin`: the call's assistant with its overrides). A rule's tool call is recorded in
`artifact.messages` (`tool_calls`), then made (`tool_calls`: a function tool's server is sent a `tool-calls`
message and its answer awaited; `endCall` and `transferCall` are the provider's own), its result recorded
(`tool_call_result`), and the assistant says the rule's answer, or the tool's result when the rule has none.
`endCall` and `transferCall` end the call once the answer is said; otherwise the caller hangs up after their last
line. Simulator-only: the provider's assistant is a language model, not these rules."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from providers.voice.vapi.simulator.conversation import Timeline
from providers.voice.vapi.simulator.standin import StandIn
from providers.voice.vapi.simulator.tool_calls import ENDING_TOOLS, calls_entry, result_entry, tool_call

CALLER_MAX_LINES = 50
CALLER_LINE_MAX = 1000  # characters
LINE_SECONDS = 3.0  # how long each line lasts (seconds of the call, before the time scale)

# Sends a function tool's call (the tool as configured, its ToolCall) to its server; what the model is given back.
Ask = Callable[[dict[str, Any], dict[str, Any]], Awaitable[str]]


def caller_errors(value: object) -> list[str]:
    """Why `caller` is not a list of 1 to CALLER_MAX_LINES non-empty lines of at most CALLER_LINE_MAX characters."""
    if not isinstance(value, list) or not value:
        return [f"caller must be a list of 1 to {CALLER_MAX_LINES} lines, each a non-empty string"]
    if len(value) > CALLER_MAX_LINES:
        return [f"caller must hold at most {CALLER_MAX_LINES} lines"]
    errors = []
    for i, line in enumerate(value):
        if not isinstance(line, str) or not line.strip():
            errors.append(f"caller[{i}] must be a non-empty string")
        elif len(line) > CALLER_LINE_MAX:
            errors.append(f"caller[{i}] must be at most {CALLER_LINE_MAX} characters")
    return errors


async def converse(timeline: Timeline, standin: StandIn, caller: list[str], opening: str | None, started: float,
                   ask: Ask) -> str | None:
    """Play the caller's lines on `timeline` (`opening`: the assistant's first line, None when it waits for the
    caller; `started`: the call's start, Unix seconds). Returns the endedReason when the assistant ended the call
    (endCall, transferCall), None when the caller hung up after their last line."""
    history: list[dict[str, Any]] = []  # the conversation as the stand-in reads it
    if opening:
        timeline.say(("bot", opening, None), LINE_SECONDS, started)
        history.append({"role": "assistant", "content": opening})
    for line in caller:
        timeline.say(("user", line, None), LINE_SECONDS, started)
        history.append({"role": "user", "content": line})
        reply, wanted = standin.reply(history)
        ended, results = None, []
        made = [(standin.tools[c["name"]], tool_call(c["name"], c["arguments"])) for c in wanted]
        if made:
            timeline.note(calls_entry([call for _, call in made], timeline.stamp(started)))
        for tool, call in made:
            kind = tool.get("type")
            if kind in ENDING_TOOLS:
                ended = ended or ENDING_TOOLS[kind]
                continue
            if kind != "function":  # not executed: the simulator has no /tool resources nor sms
                continue
            result = await ask(tool, call)
            results.append(result)
            timeline.note(result_entry(call, result, timeline.stamp(started)))
            history.append({"role": "tool", "content": result})
        said = reply or (results[0] if results else "")
        if said:
            timeline.say(("bot", said, None), LINE_SECONDS, started)
            history.append({"role": "assistant", "content": said})
        if ended:
            return ended
    return None
