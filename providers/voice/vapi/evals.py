"""Vapi's evals from ours and back: a scenario mirrored as a chat mock conversation, a run of it against an
assistant, and the run read into our `EvalRun`."""

from __future__ import annotations

from typing import Any

from providers.voice.port import Conversation, EvalRun, EvalSpec, Json, RunStatus
from providers.voice.vapi.assistants import overrides

NAME_MAX, DESCRIPTION_MAX = 80, 500  # CreateEvalDTO's limits: ours may be longer and are cut to fit
# A mock turn's content (ChatEvalUserMessageMock, ChatEvalAssistantMessageMock): our API's limit is within it.
TURN_CONTENT_MAX = 1000
EVAL_TYPE = "chat.mockConversation"  # a mock conversation played as chat
RUN_STATUSES: dict[str, RunStatus] = {"queued": "queued", "running": "in-progress", "ended": "ended"}
DONE_REASON = "mockConversation.done"  # the ending of a mock conversation played to its end


def eval_body(spec: EvalSpec) -> dict[str, Any]:
    """`POST /eval` (and its update): our turns as they are."""
    return {
        "type": EVAL_TYPE,
        "name": spec.name[:NAME_MAX],
        "description": spec.description[:DESCRIPTION_MAX],
        "messages": [dict(m) for m in spec.messages],
    }


def update_body(spec: EvalSpec) -> dict[str, Any]:
    """`PATCH /eval/{id}`: Vapi's update takes no type."""
    return {key: value for key, value in eval_body(spec).items() if key != "type"}


def run_body(eval_id: str, assistant_id: str, conversation: Conversation | None) -> dict[str, Any]:
    """`POST /eval/run` of a scenario against an assistant (with `conversation`: a configuration not yet live)."""
    target: dict[str, Any] = {"type": "assistant", "assistantId": assistant_id}
    if conversation is not None:
        target["assistantOverrides"] = overrides(conversation)
    return {"type": "eval", "evalId": eval_id, "target": target}


def run_of(run: Json) -> EvalRun:
    """Our view of Vapi's run: its status, and once ended whether every result passed (a run that ended any other
    way than played to its end did not pass), the results as `{status, messages}` and the tool calls made."""
    status = RUN_STATUSES.get(run.get("status") or "", "queued")
    if status != "ended":
        return EvalRun(str(run.get("id") or ""), status)
    reason = run.get("endedReason")
    results = [{"status": r.get("status"), "messages": r.get("messages", [])} for r in run.get("results") or []]
    passed = reason == DONE_REASON and bool(results) and all(r["status"] == "pass" for r in results)
    return EvalRun(
        str(run.get("id") or ""),
        "ended",
        passed,
        results,
        reason if isinstance(reason, str) else None,
        tool_calls_made(results),
    )


def tool_calls_made(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`{turn, name, arguments}` for each tool call of an assistant message in the results (`turn`: the message's
    index). Vapi's run has no list of them: its result messages carry each call (EvalRunResult)."""
    return [
        {"turn": turn, "name": call.get("name"), "arguments": call.get("arguments") or {}}
        for result in results
        for turn, message in enumerate(result["messages"])
        if isinstance(message, dict) and message.get("role") == "assistant"
        for call in message.get("toolCalls") or ()
        if isinstance(call, dict)
    ]
