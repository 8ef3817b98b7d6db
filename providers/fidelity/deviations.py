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
    },
}
