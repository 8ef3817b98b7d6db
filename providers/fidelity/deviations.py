"""Differences from the providers' documents that are deliberate, each with why (keys as `compare` writes them).

The check fails on a difference not listed here, and on a listed one that no longer occurs, so the list stays
true. Behaviour that no schema states (who answers STOP, when a renewal is charged, ...) is compared by hand in
each provider's FIDELITY.md, which also gives these deviations' tests."""
from __future__ import annotations

# provider -> difference key -> why
DEVIATIONS: dict[str, dict[str, str]] = {
    "voice": {
        "CreateAssistantDTO: uses 'analysisPlan', which the provider marks deprecated":
            "Vapi still accepts it; moving lead collection to structured outputs changes how end-of-call reports are "
            "read (providers/voice/vapi/FIDELITY.md, 'analysisPlan itself')",
        "ServerMessageEndOfCallReport.artifact: uses 'recordingUrl', which the provider marks deprecated":
            "read only when a report has no artifact.recording (older reports carry only recordingUrl; "
            "providers/voice/vapi/FIDELITY-calls.md, Recordings)",
        "OpenAIMessage: accepts 'tool_calls', which the provider does not define":
            "the simulator's messagesOpenAIFormatted shows a tool call as OpenAI's chat format does (the assistant's "
            "message with tool_calls), which Vapi's OpenAIMessage schema names only by role and content; nothing of "
            "ours reads it (providers/voice/vapi/FIDELITY-calls.md, Tool calls)",
        "OpenAIMessage: accepts 'tool_call_id', which the provider does not define":
            "likewise, a tool's result as OpenAI's `tool` message with its tool_call_id "
            "(providers/voice/vapi/FIDELITY-calls.md, Tool calls)",
    },
}
