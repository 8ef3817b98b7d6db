"""Communication runs: their states, touches, attempts and retries."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

MAX_TOUCHES = 10_000
HORIZON = timedelta(days=90)  # how far ahead a touch may be scheduled
REF_MAX = 200  # external_ref, touch_id
SMS_BODY_MAX = 1_600  # the messaging provider's limit (ten segments)
FIRST_MESSAGE_MAX = 1_000
CHANNELS = ("call", "sms")

# Runs: scheduled (nothing executed yet) -> running (a touch was claimed) -> completed (every job ended);
# paused from scheduled or running, back by resume; canceled from any state but the two ends.
SCHEDULED, RUNNING, PAUSED, COMPLETED, CANCELED = "scheduled", "running", "paused", "completed", "canceled"
RUN_STATES = (SCHEDULED, RUNNING, PAUSED, COMPLETED, CANCELED)
RUN_ACTIVE = (SCHEDULED, RUNNING)
RUN_MOVES = {  # action: (states it applies to, the state it leads to; None: scheduled or running as before)
    "pause": ((SCHEDULED, RUNNING), PAUSED),
    "resume": ((PAUSED,), None),
    "cancel": ((SCHEDULED, RUNNING, PAUSED), CANCELED),
}
ACTIONS = tuple(RUN_MOVES)

# Jobs (one per touch): waiting (pending, deferred by the compliance decision, retrying after an attempt),
# executing (claimed by a scheduler, being placed), in_progress (a call placed, its outcome awaited), paused
# (its run is), and the ends: succeeded, failed, refused (by the compliance decision), canceled.
PENDING, DEFERRED, RETRYING, EXECUTING, IN_PROGRESS = "pending", "deferred", "retrying", "executing", "in_progress"
JOB_PAUSED, SUCCEEDED, FAILED, REFUSED, JOB_CANCELED = "paused", "succeeded", "failed", "refused", "canceled"
JOB_STATES = (PENDING, DEFERRED, RETRYING, EXECUTING, IN_PROGRESS, JOB_PAUSED, SUCCEEDED, FAILED, REFUSED,
              JOB_CANCELED)
WAITING = (PENDING, DEFERRED, RETRYING)  # claimable once due, while the run is active
JOB_ENDS = (SUCCEEDED, FAILED, REFUSED, JOB_CANCELED)

# Call attempts: placed, then the call's outcome.
PLACED = "placed"
CALL_OUTCOMES = ("completed", "voicemail", "no-answer", "busy", "failed", "canceled")
ATTEMPT_STATES = (PLACED, *CALL_OUTCOMES)
ANSWERED = ("completed", "voicemail")  # a conversation or a voicemail box: the touch succeeded
RETRYABLE = ("no-answer", "busy", "failed")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of a call touch whose attempt ended in one of `retry_on`: at most `max_retries`, the n-th after
    `backoff_seconds[n-1]` (the last figure for any further one), each inside the callee's legal window (the
    compliance decision moves it)."""

    max_retries: int = 3
    backoff_seconds: tuple[int, ...] = (1800, 3600, 7200)
    retry_on: tuple[str, ...] = RETRYABLE

    def to_json(self) -> dict[str, Any]:
        return {"max_retries": self.max_retries, "backoff_seconds": list(self.backoff_seconds),
                "retry_on": list(self.retry_on)}

    @classmethod
    def of(cls, stored: dict[str, Any]) -> RetryPolicy:
        """The policy as to_json stored it."""
        return cls(stored["max_retries"], tuple(stored["backoff_seconds"]), tuple(stored["retry_on"]))

    def delay(self, retry: int) -> timedelta:
        return timedelta(seconds=self.backoff_seconds[min(retry, len(self.backoff_seconds)) - 1])
RETRY_BOUNDS = {"max_retries": (0, 10), "backoff_seconds": (1, 7 * 86_400)}
