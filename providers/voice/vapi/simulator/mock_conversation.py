"""Executing an eval's mock conversation against the stand-in assistant (`standin`), judging its turns
(`judges`). The simulator never executes a tool (see below).

The eval's messages are played in order:

- `user` and `system` turns, and `tool` turns with `content` (mock tool responses), join the conversation as
  written; so does an `assistant` turn without a judge plan (a mock of what the assistant said, with its
  `toolCalls`).
- An `assistant` turn with a `judgePlan` is produced by the stand-in from the conversation so far, then judged.
  Its `continuePlan` applies after the verdict: `exitOnFailureEnabled` ends the conversation on a fail (later
  turns are not played), `contentOverride` / `toolCallsOverride` replace what the conversation carries forward
  (the result still shows what the assistant produced).
- A `tool` turn with a `judgePlan` (ai only) judges the tool response the assistant received for its last tool
  call: here STUB_RESULT.

Simulator-only: the provider does not document whether a tool the assistant calls during an eval run is executed
(its guides answer tool calls with mock `tool` turns, which the eval's messages carry right after the assistant
turn that calls). The simulator never executes one: no server (no tool-calls message), SMS, booking or
configuration write is reached. The calls show in the result's assistant messages (`toolCalls`), and the mock
tool responses that answered them in the `tool` messages that follow, as the provider's EvalRunResult carries
them.

The result is the provider's EvalRunResult: `{"status": "pass"|"fail", "messages", "startedAt", "endedAt"}`,
where `messages` is the conversation as played and each judged turn carries `judge: {"status",
"failureReason"?}`. The result passes when every judged turn passed.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from providers.voice.vapi.simulator.judges import JudgeError, Judges
from providers.voice.vapi.simulator.standin import StandIn
from providers.voice.vapi.simulator.state import now_iso

STUB_RESULT = "Tool call not executed by the simulator."
DONE, ERROR = "mockConversation.done", "error"  # the provider's endedReason values used here


@dataclass
class Outcome:
    result: dict[str, Any]
    ended_reason: str = DONE
    ended_message: str | None = None


def _spoken(message: dict[str, Any]) -> dict[str, Any]:
    """What a message contributes to the conversation (and to a judge's `{{messages}}`)."""
    said = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("toolCalls"):
        said["toolCalls"] = message["toolCalls"]
    return said


async def execute(messages: list[dict[str, Any]], standin: StandIn, judges: Judges,
                  pause: Callable[[], Awaitable[None]]) -> Outcome:
    """Play `messages` (an eval's); `pause` is awaited before each produced turn (the assistant "thinking")."""
    started = now_iso()
    history: list[dict[str, Any]] = []  # the conversation as the assistant and the judges see it
    played: list[dict[str, Any]] = []  # the result's messages
    passed, ended_reason, ended_message = True, DONE, None
    for turn in messages:
        plan = turn.get("judgePlan")
        if plan is None:
            history.append(_spoken(turn))
            played.append(_spoken(turn))
            continue
        await pause()
        if turn["role"] == "assistant":
            content, calls = standin.reply(history)
            produced = {"role": "assistant", "content": content, **({"toolCalls": calls} if calls else {})}
        else:  # a tool response evaluation: the simulator's answer to the assistant's last call
            made = history[-1].get("toolCalls") if history and history[-1]["role"] == "assistant" else None
            produced = {"role": "tool", "content": STUB_RESULT if made else ""}
        try:
            verdict = await judges.verdict(plan, produced, [*history, produced])
        except JudgeError as exc:
            played.append(produced)
            passed, ended_reason, ended_message = False, ERROR, str(exc)
            break
        played.append({**produced, "judge": verdict})
        passed = passed and verdict["status"] == "pass"
        carried = dict(produced)
        follow = turn.get("continuePlan") or {}
        if "contentOverride" in follow:
            carried["content"] = follow["contentOverride"]
        if "toolCallsOverride" in follow:
            carried["toolCalls"] = follow["toolCallsOverride"]
        history.append(_spoken(carried))
        if verdict["status"] != "pass" and follow.get("exitOnFailureEnabled"):
            break
    result = {"status": "pass" if passed else "fail", "messages": played, "startedAt": started, "endedAt": now_iso()}
    return Outcome(result, ended_reason, ended_message)
