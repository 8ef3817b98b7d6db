"""Account rules as plain functions: scopes, keys, signup validation, workspace lifecycle."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import available_timezones

from contracts.accounts import (
    DEFAULT_KEY_NAME,
    DEFAULT_TIMEZONE,
    KEY_NAME_MAX,
    LIFECYCLE_ACTIONS,
    SESSION_IDLE,
    TRIAL_DAYS,
    WORKSPACE_NAME_MAX,
)
from core import plans
from core.catalogue import NotInCatalogue, subset
from core.contact import normalize_e164, normalize_email
from core.errors import ServiceError, invalid, refused_move
from core.scopes import ALL_SCOPES
from core.urls import split_url
from switchboard.v1 import events_pb2

KEY_PREFIX = "svc_live_"
KEY_DISPLAY_CHARS = 12  # "svc_live_" plus three characters of the secret
SIGNUP_KEY_NAME = "Signup Key"


def trial_length() -> timedelta:
    return timedelta(days=TRIAL_DAYS)


SIGNUP_WINDOW = timedelta(hours=1)
# A session's last use is written at most once per SESSION_TOUCH_EVERY, so a busy session costs no write per
# request (its idle limit: contracts.accounts.SESSION_IDLE).
SESSION_TOUCH_EVERY = timedelta(minutes=1)


def session_live(expires_at: datetime, last_used_at: datetime, now: datetime) -> bool:
    return expires_at > now and last_used_at > now - SESSION_IDLE


def session_touch_due(last_used_at: datetime, now: datetime) -> bool:
    """Whether a use now moves the session's last use on (it is recorded to the minute, not to the request)."""
    return last_used_at <= now - SESSION_TOUCH_EVERY


def check_scopes(scopes: list[str]) -> list[str]:
    """The requested scopes, deduplicated in order; unknown names are refused by name."""
    try:
        scopes = subset(scopes, ALL_SCOPES)
    except NotInCatalogue as exc:
        raise invalid(f"unknown scope(s): {exc}; known scopes: {', '.join(ALL_SCOPES)}") from None
    if not scopes:
        raise invalid("scopes must name at least one scope")
    return scopes


def check_new_key_name(name: str | None) -> str:
    """A new key's name: trimmed, DEFAULT_KEY_NAME when empty."""
    name = (name or "").strip()
    if len(name) > KEY_NAME_MAX:
        raise invalid(f"name must be at most {KEY_NAME_MAX} characters")
    return name or DEFAULT_KEY_NAME


def check_key_name(name: str) -> str:
    """A key's new name (renaming cannot empty it)."""
    if not name.strip() or len(name) > KEY_NAME_MAX:
        raise invalid(f"name must be 1 to {KEY_NAME_MAX} characters")
    return name.strip()


def check_workspace_name(name: str, *, creating: bool) -> str:
    name = name.strip()
    if not name or len(name) > WORKSPACE_NAME_MAX:
        raise invalid(f"name is required (1 to {WORKSPACE_NAME_MAX} characters)" if creating else
                      f"name must be 1 to {WORKSPACE_NAME_MAX} characters")
    return name


# The IANA zones a business may use: region names (America/New_York, Etc/GMT+5) and UTC. Abbreviations such as EST
# or PST are left out: they are ambiguous, and not what a business owner means by their time.
TIMEZONES = (*sorted(z for z in available_timezones() if "/" in z and not z.startswith(("posix/", "right/"))),
             DEFAULT_TIMEZONE)


def check_timezone(name: str) -> str:
    if name not in TIMEZONES:
        raise invalid(f"timezone must be an IANA time zone name such as America/New_York or UTC (got {name!r})")
    return name


def new_secret_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def new_api_key() -> tuple[str, str]:
    """A fresh key and its display prefix."""
    key = KEY_PREFIX + new_secret_token(30)
    return key, key[:KEY_DISPLAY_CHARS]


def key_usable(revoked_at: datetime | None, expires_at: datetime | None, now: datetime) -> bool:
    return revoked_at is None and (expires_at is None or expires_at > now)


def signup_allowed(attempts_in_window: int, limit: int) -> bool:
    """At most `limit` signups per address per SIGNUP_WINDOW (sliding)."""
    return attempts_in_window < limit


def signup_retry_after(oldest_attempt: datetime, now: datetime) -> int:
    """Whole seconds until the oldest attempt in the window leaves it (the limit then clears by one)."""
    return max(1, int((oldest_attempt + SIGNUP_WINDOW - now).total_seconds()) + 1)


@dataclass(frozen=True)
class SignupForm:
    business_name: str
    email: str
    business_type: str | None
    website: str | None
    phone_forward_to: str | None
    plan_id: str


def _validation(message: str) -> ServiceError:
    return ServiceError("validation_error", message)


def validate_signup(business_name: str, email: str, business_type: str = "", website: str = "",
                    phone_forward_to: str = "", plan_id: str = "", prices: dict[str, str] | None = None) -> SignupForm:
    name = business_name.strip()
    if not name:
        raise _validation("business_name is required")
    if len(name) > 200:
        raise _validation("business_name must be at most 200 characters")
    if not email.strip():
        raise _validation("email is required")
    normalized_email = normalize_email(email, "email", _validation)
    site = website.strip() or None
    if site is not None:
        parsed = split_url(site, "website", _validation)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise _validation("website must be an http(s) URL such as https://example.com")
    forward = phone_forward_to.strip() or None
    if forward is not None:
        forward = normalize_e164(forward, "phone_forward_to", _validation)
    plan = plans.plan_for(plan_id, prices or {})
    if plan is None:
        raise _validation(f"plan_id must be a plan ({', '.join(plans.PLANS)}) or an offered checkout price id "
                          f"({', '.join(prices or {}) or 'none configured'})")
    kind = business_type.strip() or None
    if kind is not None and len(kind) > 100:
        raise _validation("business_type must be at most 100 characters")
    return SignupForm(name, normalized_email, kind, site, forward, plan)


TRANSITIONS: dict[tuple[str, str], str] = {
    ("active", "pause"): "paused",
    ("paused", "resume"): "active",
    ("canceled", "resume"): "active",
    ("active", "cancel"): "canceled",
    ("paused", "cancel"): "canceled",
    ("canceled", "teardown"): "inactive",
}
NO_OPS = {("paused", "pause"), ("active", "resume"), ("canceled", "cancel"), ("inactive", "teardown")}
# The event payload each lifecycle action emits (core.events).
ACTION_EVENTS = {"pause": events_pb2.WorkspacePaused, "cancel": events_pb2.WorkspaceCanceled,
                 "teardown": events_pb2.WorkspaceTeardownCompleted}


def data_deletion_due(now: datetime, grace: timedelta) -> dict[str, Any]:
    """The columns a teardown sets: its customers' personal data deleted (and that first attempted) at the end of the
    grace period (TEARDOWN_GRACE_DAYS; privacy.teardown_deletion)."""
    return {"data_deletion_due_at": now + grace, "data_deletion_next_at": now + grace, "data_deletion_steps": {},
            "data_deletion_attempts": 0, "data_deletion_error": None}


def next_lifecycle_state(current: str, action: str) -> tuple[str, bool]:
    """(new state, changed) for an action; a refused move is an error that names it."""
    if action not in LIFECYCLE_ACTIONS:
        raise invalid(f"action must be one of {', '.join(LIFECYCLE_ACTIONS)}")
    if (current, action) in NO_OPS:
        return current, False
    try:
        return TRANSITIONS[(current, action)], True
    except KeyError:
        hint = " (cancel it first)" if action == "teardown" else ""
        raise refused_move(f"cannot {action} a workspace that is {current}{hint}") from None


def billed_minutes(duration_seconds: int) -> int:
    """A call's minutes: every started minute counts."""
    return -(-max(0, duration_seconds) // 60)
