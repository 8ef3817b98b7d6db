"""The assistant's tool calls in the provider's shapes: the `tool-calls` server message (ServerMessageToolCalls), its
answer (ServerMessageResponseToolCalls) read back, and the `artifact.messages` entries that record a call and its
result (ToolCallMessage, role `tool_calls`; ToolCallResultMessage, role `tool_call_result`).

Which tool does what (what the provider documents): a `function` tool is answered by a server, the first of the
tool's `server`, the assistant's (its overrides' first), the phone number's (ServerMessageToolCalls'
toolWithToolCallList, FunctionToolWithToolCall.server: "{{tool.server.url}}, {{assistant.server.url}},
{{phoneNumber.server.url}}, {{org.server.url}}"; the simulator has no organization URL), which has the server's
`timeoutSeconds` (default 20) to answer, with no retry (`backoffPlan` undefined). `endCall` and `transferCall` are
the provider's own: no server is asked. Any other tool the stand-in calls (a `toolIds` reference, `sms`, ...) is
recorded and not executed (the simulator has no /tool resources)."""
from __future__ import annotations

import json
import uuid
from typing import Any

from providers.voice.vapi.simulator.conversation import TOOL_CALL_RESULT, TOOL_CALLS

TOOL_CALLS_TYPE = "tool-calls"
SERVER_TIMEOUT_SECONDS = 20.0  # Server.timeoutSeconds' default
# Simulator assumption (the provider does not document what the model is given when the server does not answer,
# answers an error status or no result for the call): this result.
NO_RESULT = "No result returned."
# The provider's own tools that end the assistant's part of the call, and the call's endedReason then. A transfer is
# kept simple: the assistant's leg ends as forwarded (no forwarding status, no destination leg is played).
ENDING_TOOLS = {"endCall": "assistant-ended-call", "transferCall": "assistant-forwarded-call"}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ToolCall with a new id: `{id, type: "function", function: {name, arguments}}`, the arguments a JSON string
    (the OpenAPI document's ToolCallFunction.arguments)."""
    return {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool_calls_message(tool: dict[str, Any], call: dict[str, Any], said: list[dict[str, Any]]) -> dict[str, Any]:
    """The `tool-calls` server message of one tool call (`call`: its ToolCall) of the function tool `tool` (its
    configuration, as in model.tools), with the conversation so far as the live artifact. The sender adds the
    message's `call` and `timestamp`, as to every server message."""
    return {"type": TOOL_CALLS_TYPE, "toolCallList": [call], "toolWithToolCallList": [{**tool, "toolCall": call}],
            "artifact": {"messages": list(said)}}


def calls_entry(calls: list[dict[str, Any]], stamp: dict[str, Any]) -> dict[str, Any]:
    """The `artifact.messages` entry of the model's tool calls (`stamp`: its time and secondsFromStart)."""
    return {"role": TOOL_CALLS, "toolCalls": calls, "message": "", **stamp}


def result_entry(call: dict[str, Any], result: str, stamp: dict[str, Any]) -> dict[str, Any]:
    """The `artifact.messages` entry of a tool call's result."""
    return {"role": TOOL_CALL_RESULT, "toolCallId": call["id"], "name": call["function"]["name"], "result": result,
            **stamp}


def result_of(answer: object, call_id: str) -> str:
    """What a server's answer to tool-calls gives the model for the call `call_id`: the `results` entry's `result`
    (a non-string one as JSON, as the provider adds it to the conversation), else its `error`, else NO_RESULT."""
    results = answer.get("results") if isinstance(answer, dict) else None
    for item in results if isinstance(results, list) else ():
        if isinstance(item, dict) and item.get("toolCallId") == call_id:
            for key in ("result", "error"):
                if isinstance(item.get(key), str):
                    return str(item[key])
                if item.get(key) is not None:
                    return json.dumps(item[key])
    return NO_RESULT


def timeout_of(server: dict[str, Any]) -> float:
    """How long the server has to answer (Server.timeoutSeconds, default 20)."""
    seconds = server.get("timeoutSeconds")
    return float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0 \
        else SERVER_TIMEOUT_SECONDS
