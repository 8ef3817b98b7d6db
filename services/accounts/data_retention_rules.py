"""The retention a business sets for its customers' personal data (issue 56): the rules, with no I/O, shared by the
workspaces part (its settings) and the privacy part (its job).

A business stores only the kinds it set (schema.businesses.retention, {kind: days}); every other kind has its
default (contracts.accounts.RETENTION_DAYS: defaults and limits). An update names the kinds it changes: a number of
days within the kind's limits, or 0 for the default again. The retention job (privacy/data_retention.py) turns the settings
into cutoffs (`cutoffs_of`: what was made before each is past retention) and, after a round, decides when the
business is due again (`next_run`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from contracts.accounts import RETENTION_DAYS, RETENTION_RESET, retention_range
from core.errors import ServiceError

KINDS = tuple(RETENTION_DAYS)
# The day between two rounds of a business; "soon" when a service had more past retention than its round took, and
# the wait after a service failed (the settings' retry) is the job's.
EVERY = timedelta(days=1)


def effective(stored: dict[str, Any] | None) -> dict[str, int]:
    """Every kind's days: the business's setting, else the default."""
    stored = stored or {}
    return {kind: int(stored.get(kind) or RETENTION_DAYS[kind][0]) for kind in KINDS}


def check_days(kind: str, days: object) -> int:
    """A kind's new setting (RETENTION_RESET: the default); validation_error naming the kind and its range
    otherwise."""
    if kind not in RETENTION_DAYS:
        raise ServiceError("validation_error", f"retention.{kind} is not a kind of retention: one of {', '.join(KINDS)}")
    _, least, most = RETENTION_DAYS[kind]
    if isinstance(days, bool) or not isinstance(days, int) or not (days == RETENTION_RESET or least <= days <= most):
        raise ServiceError("validation_error", f"retention.{kind} must be {retention_range(kind)}; got {days!r}")
    return days


def changed(stored: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, int]:
    """The business's stored settings after `update` ({kind: days}; the kinds left out keep theirs): a kind set to
    RETENTION_RESET is forgotten (its default applies, and follows the default if it changes)."""
    after = {kind: int(days) for kind, days in (stored or {}).items() if kind in RETENTION_DAYS}
    for kind, days in update.items():
        if check_days(kind, days) == RETENTION_RESET:
            after.pop(kind, None)
        else:
            after[kind] = days
    return after


@dataclass(frozen=True)
class Cutoffs:
    """What was made before each is past retention (common.proto RetentionRequest's *_before)."""

    recordings_before: datetime
    transcripts_before: datetime
    message_bodies_before: datetime
    webhook_events_before: datetime
    evidence_before: datetime


def cutoffs_of(stored: dict[str, Any] | None, now: datetime) -> Cutoffs:
    days = effective(stored)
    return Cutoffs(**{f"{kind.removesuffix('_days')}_before": now - timedelta(days=days[kind]) for kind in KINDS})


def next_run(now: datetime, *, more: bool, failed: bool, retry: timedelta) -> datetime:
    """When a business is due again after a round: at once when a service had more than its round took (the next
    round goes on), after `retry` when one failed (the others' work is done; it is asked again then), else a day
    later."""
    if more:
        return now
    if failed:
        return now + retry
    return now + EVERY
