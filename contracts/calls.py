"""Calls: their statuses, directions and limits."""
from __future__ import annotations

DIRECTIONS = ("inbound", "outbound")
COMPLIANCE_MODES = ("skip", "enforce")

# -- statuses ------------------------------------------------------------------------------------
# A call moves forward only: queued -> ringing -> in-progress (-> forwarding) -> ended -> one outcome.
# `ended` means the provider said the call is over and its outcome is not known yet (the end-of-call report
# brings it). The outcomes are final; a message that would move a call backwards changes nothing.
# One exception: in-progress and forwarding may follow each other either way (a call transferred mid-call is
# in-progress then forwarding; a ring-first call nobody picked up at the forward-to phone is forwarding then
# in-progress, the agent answering), so between those two the provider's message times decide.
PROGRESS = ("queued", "ringing", "in-progress", "forwarding", "ended")
OUTCOMES = ("completed", "no-answer", "busy", "voicemail", "failed", "canceled")
STATUSES = (*PROGRESS, *OUTCOMES)
# A tool call of the model during a call: running until its result is written, then what became of it (ok: the tool
# ran; refused: not run, it is not the agent's or not allowed; failed: it ran and failed, timed out or broke).
TOOL_OUTCOMES = ("running", "ok", "refused", "failed")
DEFAULT_MAX_DURATION = 600
MAX_DURATION_BOUNDS = (10, 43200)  # seconds; the provider's bounds of maxDurationSeconds
NAME_MAX, CONTEXT_MAX, FIRST_MESSAGE_MAX = 200, 5000, 1000
TRANSCRIPT_DAYS = (30, 90)  # default and maximum window
RECORDING_URL_TTL_SECONDS = 3600
AUDIO_PATH = "/api/v1/recordings/audio"
