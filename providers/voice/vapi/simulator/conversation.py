"""What a simulated call says and the server messages it sends as it goes, in the provider's shapes.

A call that is answered is a few lines said one after the other. As each line starts and stops the provider
sends a `speech-update` (`status` started or stopped, `role` assistant or user, `turn`), and once it is said a
`conversation-update` with the conversation so far (`messages`, `messagesOpenAIFormatted`). The callee
interrupts the greeting once (`user-interrupted`) and the assistant is slow to answer once (`hang`). Each line
is an `artifact.messages` entry with `time` and `endTime` (milliseconds since the epoch) and `secondsFromStart`.

An assistant with a recording consent plan (`compliancePlan.recordingConsentPlan`) first speaks its consent message
as a line of its own (after the callee's "Hello?" when it waits for the user); with the `verbal` type the callee then
says yes, or no to decline. Only a person who answers hears it: what the provider's consent assistant does with a
voicemail box is not documented, so voicemail outcomes play as before (providers/voice/vapi/FIDELITY-calls.md).

Which messages reach the server is the assistant's `serverMessages` (its overrides' first), else the provider's
default list. Voicemail is only noticed with voicemail detection on (`voicemailDetection` a plan, or a voicemail
tool among the model's tools): the provider's default is off, and then a voicemail box is a callee like any other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The provider's default `serverMessages` (CreateAssistantDTO.serverMessages). Of these the simulator sends
# status-update, speech-update, conversation-update, user-interrupted, hang and end-of-call-report, and tool-calls on
# a call with scripted caller lines (`dialogue`); the others need transfers or handoffs (or, assistant.started, have
# no documented shape).
DEFAULT_SERVER_MESSAGES = frozenset({
    "conversation-update", "end-of-call-report", "function-call", "hang", "speech-update", "status-update",
    "tool-calls", "transfer-destination-request", "handoff-destination-request", "user-interrupted",
    "assistant.started"})
BOX_GREETING = "Hi, you've reached voicemail. Please leave a message after the tone."
# An outcome the control plane cannot ask for: a voicemail box answered and detection was off.
UNNOTICED_VOICEMAIL = "unnoticed-voicemail"

Line = tuple[str, str, str | None]  # role (bot or user), what is said, the message sent just before it starts


def lines_for(first_message: str, customer: dict[str, Any], outcome: str) -> list[Line]:
    """What is said on a call of this outcome (one that talks: answered, voicemail or an unnoticed voicemail)."""
    if outcome == "voicemail":
        return [("bot", BOX_GREETING, None), ("bot", first_message, None)]
    if outcome == UNNOTICED_VOICEMAIL:
        return [("bot", first_message, None), ("user", BOX_GREETING, "user-interrupted")]
    name = customer.get("name") or "Jordan Lee"
    return [("bot", first_message, None),
            ("user", f"Hi, this is {name}. I'd like a quote for replacing my water heater.", "user-interrupted"),
            ("bot", "Happy to help. What's the best email to send the quote to?", "hang"),
            ("user", "jordan@example.com. Thanks, bye!", None)]


SPOKEN = ("bot", "user")  # artifact.messages roles that are said (the others: TOOL_CALLS, TOOL_CALL_RESULT)
TOOL_CALLS, TOOL_CALL_RESULT = "tool_calls", "tool_call_result"  # Vapi's ToolCallMessage, ToolCallResultMessage
CALLEE_HELLO = "Hello?"
CONSENT_YES, CONSENT_NO = "Yes, that's fine.", "No, I don't want to be recorded."


def consent_plan(assistant: dict[str, Any]) -> dict[str, Any] | None:
    """The call's recording consent plan, if its assistant has one."""
    plan = (assistant.get("compliancePlan") or {}).get("recordingConsentPlan")
    return plan if isinstance(plan, dict) else None


def consent_lines(plan: dict[str, Any], declines: bool) -> list[Line]:
    """What is said before the call's conversation: the consent message, and the callee's answer to a verbal one.
    A callee who declines a stay-on-line plan hangs up once they have heard it."""
    lines: list[Line] = [("user", CALLEE_HELLO, None)] if plan.get("firstMessageMode") == "assistant-waits-for-user" \
        else []
    lines.append(("bot", plan["message"], None))
    if plan["type"] == "verbal":
        lines.append(("user", CONSENT_NO if declines else CONSENT_YES, None))
    return lines


def transcript(said: list[dict[str, Any]]) -> str:
    """The provider's transcript of `artifact.messages`: "AI:" and "User:" lines (tool calls and their results are
    not spoken: they are in `messages` only)."""
    return "\n".join(f"{'AI' if m['role'] == 'bot' else 'User'}: {m['message']}" for m in said
                     if m["role"] in SPOKEN)


def openai_formatted(said: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messagesOpenAIFormatted` of `artifact.messages`: each line as an OpenAI chat message; a tool_calls entry as
    the assistant's message with `tool_calls`, a tool_call_result as a `tool` message (OpenAI's chat format, which
    Vapi's OpenAIMessage schema names only by role and content: providers/voice/vapi/FIDELITY-calls.md)."""
    formatted: list[dict[str, Any]] = []
    for m in said:
        if m["role"] == TOOL_CALLS:
            formatted.append({"role": "assistant", "content": "", "tool_calls": m["toolCalls"]})
        elif m["role"] == TOOL_CALL_RESULT:
            formatted.append({"role": "tool", "content": m["result"], "tool_call_id": m["toolCallId"]})
        else:
            formatted.append({"role": "assistant" if m["role"] == "bot" else "user", "content": m["message"]})
    return formatted


def detects_voicemail(assistant: dict[str, Any]) -> bool:
    """Whether the call's assistant has voicemail detection on (the provider's default is off)."""
    tools = (assistant.get("model") or {}).get("tools") or []
    return isinstance(assistant.get("voicemailDetection"), dict) or any(
        isinstance(tool, dict) and tool.get("type") == "voicemail" for tool in tools)


def server_messages(assistant: dict[str, Any]) -> frozenset[str]:
    """The message types the call's server is sent."""
    listed = assistant.get("serverMessages")
    return frozenset(listed) if isinstance(listed, list) else DEFAULT_SERVER_MESSAGES


@dataclass
class Timeline:
    """A call's messages in order, each after a delay (seconds of the call) from the one before; `at` is when the
    last one happens, from the start of the call. `said` is `artifact.messages` so far; `take` hands over the
    messages added since the last take (a call that waits on its server mid-way sends them before it waits)."""

    steps: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    at: float = 0.0
    said: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    taken: int = 0

    def add(self, delay: float, message: dict[str, Any]) -> None:
        self.at += delay
        self.steps.append((delay, message))

    def take(self) -> list[tuple[float, dict[str, Any]]]:
        steps, self.taken = self.steps[self.taken:], len(self.steps)
        return steps

    def talk(self, lines: list[Line], seconds: float, started: float) -> list[dict[str, Any]]:
        """The lines said one after the other over `seconds`, with their messages; returns `artifact.messages`
        (`started`: the call's start, Unix seconds)."""
        each = seconds / len(lines)
        for line in lines:
            self.say(line, each, started)
        return self.said

    def say(self, line: Line, seconds: float, started: float) -> None:
        """One line said over `seconds`: its speech updates, its `artifact.messages` entry and a
        conversation-update."""
        role, text, before = line
        if before:
            self.add(0, {"type": before})
        start, turn = self.at, self.turns
        self.turns += 1
        speaker = "assistant" if role == "bot" else "user"
        self.add(0, {"type": "speech-update", "status": "started", "role": speaker, "turn": turn})
        self.add(seconds, {"type": "speech-update", "status": "stopped", "role": speaker, "turn": turn})
        self.note({"role": role, "message": text, "time": round((started + start) * 1000),
                   "endTime": round((started + self.at) * 1000), "secondsFromStart": round(start, 3)})

    def note(self, entry: dict[str, Any]) -> None:
        """An `artifact.messages` entry (a line, a tool call, a tool's result) and the conversation-update after it."""
        self.said.append(entry)
        self.add(0, {"type": "conversation-update", "messages": list(self.said),
                     "messagesOpenAIFormatted": openai_formatted(self.said)})

    def stamp(self, started: float) -> dict[str, Any]:
        """`time` and `secondsFromStart` of an entry noted now (`started`: the call's start, Unix seconds)."""
        return {"time": round((started + self.at) * 1000), "secondsFromStart": round(self.at, 3)}
