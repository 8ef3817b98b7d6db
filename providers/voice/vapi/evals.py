"""Vapi's evals from ours and back: a scenario mirrored as a chat mock conversation, a run of it against an
assistant, and the run read into our `EvalRun`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from providers.voice.port import Conversation, EvalRun, EvalSpec, Json, RunStatus
from providers.voice.vapi import calls
from providers.voice.vapi.assistants import overrides

NAME_MAX, DESCRIPTION_MAX = 80, 500  # CreateEvalDTO's limits: ours may be longer and are cut to fit
# A mock turn's content (ChatEvalUserMessageMock, ChatEvalAssistantMessageMock): our API's limit is within it.
TURN_CONTENT_MAX = 1000
EVAL_TYPE = "chat.mockConversation"  # a mock conversation played as chat
RUN_STATUSES: dict[str, RunStatus] = {"queued": "queued", "running": "in-progress", "ended": "ended"}
DONE_REASON = "mockConversation.done"  # the ending of a mock conversation played to its end
RUNS_PAGE = 100  # `GET /eval/run`'s page size when looking for a run


def eval_body(spec: EvalSpec) -> dict[str, Any]:
    """`POST /eval` (and its update): our turns as they are, each turn that expects tool calls followed by a mock
    tool response (ChatEvalToolResponseMessageMock, `{role: "tool", content}`) per call carrying its stub: Vapi's
    documented way to answer a tool call in a mock conversation, so the assistant reads our stub."""
    messages: list[dict[str, Any]] = []
    for index, turn in enumerate(spec.messages):
        messages.append(dict(turn))
        messages.extend({"role": "tool", "content": stub} for stub in spec.stubs.get(index, ()))
    return {
        "type": EVAL_TYPE,
        "name": spec.name[:NAME_MAX],
        "description": spec.description[:DESCRIPTION_MAX],
        "messages": messages,
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


def runs_since(listed: list[Json], eval_id: str, assistant_id: str, since: datetime) -> tuple[list[EvalRun], bool]:
    """Of a page of `GET /eval/run` (newest first): the runs of `eval_id` against `assistant_id` (by id, as
    `run_body` targets it) created at or after `since`, and whether the page reached a run created before it."""
    found: list[EvalRun] = []
    for run in listed:
        created = calls._time(run.get("createdAt"))  # the provider's ISO instants, read once
        if created is not None and created < since:
            return found, True
        target = run.get("target") or {}
        if run.get("evalId") == eval_id and target.get("assistantId") == assistant_id:
            found.append(run_of(run))
    return found, False


def tool_calls_made(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`{turn, name, arguments, result}` for each tool call of an assistant message in the results (`turn`: the
    message's index; `result`: the content of the tool message answering it, the k-th of those right after the
    message for its k-th call, else None). Vapi's run has no list of them: its result messages carry each call and
    the tool responses the assistant got (EvalRunResult)."""
    made = []
    for result in results:
        messages = result["messages"]
        for turn, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            answers = []
            for after in messages[turn + 1:]:
                if not isinstance(after, dict) or after.get("role") != "tool":
                    break
                answers.append(after.get("content"))
            calls = [c for c in message.get("toolCalls") or () if isinstance(c, dict)]
            made += [{"turn": turn, "name": call.get("name"), "arguments": call.get("arguments") or {},
                      "result": answers[k] if k < len(answers) and isinstance(answers[k], str) else None}
                     for k, call in enumerate(calls)]
    return made
