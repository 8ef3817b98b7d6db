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
