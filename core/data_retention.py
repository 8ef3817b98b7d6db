"""What a service's ApplyRetention reads of its request (common.proto RetentionRequest) and how it answers: the
retention a business set (issue 56), applied by each service holding personal data when the accounts service's
retention job asks. Not core.retention, which prunes the platform's own bookkeeping rows.

A cutoff left unset keeps that kind of record; `batch` bounds the records of each kind one call changes, and the
report says `more` when some kind had more past its cutoff (the job asks again). The caller is the job acting for the
business (core.tenant.acting_for): it may only name that business."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from core import tenant
from core.errors import invalid
from core.ids import require_uuid
from core.pagination import opt_datetime
from switchboard.v1 import common_pb2

MAX_BATCH = 5000  # records of one kind one call changes at most


@dataclass(frozen=True)
class Asked:
    """A retention request, checked: each cutoff an aware datetime or None (that kind kept)."""

    business_id: str
    run_id: str
    recordings_before: datetime | None
    transcripts_before: datetime | None
    message_bodies_before: datetime | None
    webhook_events_before: datetime | None
    evidence_before: datetime | None
    batch: int


def asked(request: common_pb2.RetentionRequest) -> Asked:
    """The request checked: the business a UUID (of the caller's, when the caller acts for businesses), the batch
    between 1 and MAX_BATCH."""
    who = tenant.current()
    business_id = (tenant.require_business(who, request.business_id) if who.business_ids
                   else require_uuid(request.business_id, "business_id"))
    if not 1 <= request.batch <= MAX_BATCH:
        raise invalid(f"batch must be between 1 and {MAX_BATCH} (records of each kind per call), not {request.batch}")
    return Asked(business_id, request.run_id.strip(), opt_datetime(request, "recordings_before"),
                 opt_datetime(request, "transcripts_before"), opt_datetime(request, "message_bodies_before"),
                 opt_datetime(request, "webhook_events_before"), opt_datetime(request, "evidence_before"),
                 request.batch)


def report(items: Iterable[tuple[str, str, int]], more: bool) -> common_pb2.RetentionReport:
    """The answer: a line (what, action, count) per kind of record, as an erasure's report has them."""
    return common_pb2.RetentionReport(
        items=[common_pb2.ErasedItem(what=what, action=action, count=count) for what, action, count in items],
        more=more)


def summary(items: Iterable[tuple[str, str, int]]) -> str:
    """The report's lines for a log line ("nothing" when every count is zero)."""
    return ", ".join(f"{what} {action} {n}" for what, action, n in items if n) or "nothing"
