"""Accounts: keys, sessions, workspaces and their lifecycle."""
from __future__ import annotations

from datetime import timedelta

DEFAULT_KEY_NAME = "Untitled Key"
KEY_NAME_MAX = 100
WORKSPACE_NAME_MAX = 200
TRIAL_DAYS = 7
MAGIC_LINK_TTL = timedelta(hours=24)
# A dashboard session ends SESSION_TTL after sign-in, or sooner once unused for SESSION_IDLE (sliding).
SESSION_TTL = timedelta(days=7)
SESSION_IDLE = timedelta(hours=12)
DEFAULT_TIMEZONE = "UTC"

# Workspace lifecycle. `active` is the normal state. `pause` stops service but
# keeps everything; `resume` brings a paused workspace back. `cancel` ends the
# subscription (from active or paused) but keeps data; a canceled workspace can
# be resumed (re-subscribed) until it is torn down. `teardown` releases the
# workspace's resources for good and leaves it `inactive`, from which there is
# no way back. Repeating the action that led to the current state is a no-op.
LIFECYCLE_ACTIONS = ("pause", "resume", "cancel", "teardown")


# How long a business keeps its customers' personal data, in days per kind (services.accounts.privacy's retention
# job deletes or redacts what is older, here and at the providers): (default, minimum, maximum). The content kinds
# default to a year; the webhook event history (a delivery log, replayable) to 30 days; the compliance decision and
# consent logs (kept as evidence, redacted of content past it) to 4 years, TCPA's statute of limitations, which is
# also their minimum. 0 in an update sets a kind back to its default.
RETENTION_DAYS: dict[str, tuple[int, int, int]] = {
    "recordings_days": (365, 1, 3650),
    "transcripts_days": (365, 1, 3650),
    "message_bodies_days": (365, 1, 3650),
    "webhook_events_days": (30, 1, 3650),
    "evidence_days": (1461, 1461, 3650),
}
RETENTION_RESET = 0


def retention_range(kind: str) -> str:
    """What a kind's setting may be, for the error that refuses another value."""
    default, least, most = RETENTION_DAYS[kind]
    return f"{RETENTION_RESET} (back to the default, {default}) or {least} to {most} days"
