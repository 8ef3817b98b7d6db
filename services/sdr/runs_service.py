"""Communication run use cases: validate, preview, create (idempotent), read, pause/resume/cancel, and the jobs
and attempts. Execution is the scheduler's (services.sdr.runs_scheduler); call outcomes are applied by
services.sdr.runs_outcomes. The caller's tenant comes from core.tenant.

Validation checks the whole run and reports every problem with its touch; the agents named (or the business's one
agent with a number) are looked up in the agents service. A preview asks the messaging service for what it knows of
each callee (do-not-call, consent, calls in the last 24 hours) in one call and runs the pure compliance decision on
every touch. Creation plans the run the same way and stores the run and all its jobs in one transaction, each job
with what its decision says (a deferred touch is due when the decision allows it, with the rule and why); its
Idempotency-Key is claimed by the run's own insert (unique per business), so two racing requests with one key
create one run.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError

from contracts import runs as runs_contract
from core import tenant
from core.compliance import decision as compliance
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.text import check_idempotency_key
from core.uow import UnitOfWork
from services.sdr import runs_domain as rules
from services.sdr.ports import Neighbours
from services.sdr.records import Run
from services.sdr.repository import RunsRepository, SdrUnit
from services.sdr.runs_events import run_ended

RUNS_PAGE, JOBS_PAGE, ATTEMPTS_PAGE = (20, 100), (50, 500), (50, 100)


@dataclass(frozen=True)
class Checked:
    """A run with no problems, for the caller's business, with the agent of each touch and its number."""

    run: rules.Run
    business_id: str
    agent_id: str  # the run's agent: it places the touches that name none
    senders: dict[str, str]  # agent id -> its phone number


@dataclass(frozen=True)
class RunView:
    row: Run
    jobs: dict[str, int]
    replayed: bool = False


def parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise invalid("the body must be a JSON object (a communication run)") from None


class Runs:
    def __init__(self, uow: UnitOfWork[SdrUnit], others: Neighbours, policy: compliance.Policy):
        self.uow, self.others, self.policy = uow, others, policy  # others asked as the caller (services.sdr.ports)

    # -- checking -------------------------------------------------------------------------------------------

    async def check(self, body: Any) -> tuple[Checked | None, list[rules.Problem], int]:
        """The checked run, or its problems; and how many touches it has."""
        run, problems = rules.check_run(body, utcnow())
        count = len(body.get("touches") or []) if isinstance(body, dict) and isinstance(body.get("touches"), list) \
            else 0
        if run is None:
            return None, problems, count
        business_id = tenant.pick_business(tenant.require_account(), run.business_id)
        numbers = await self.others.agents.numbers(business_id)
        default, problems = rules.agent_problems(run, numbers)
        if problems:
            return None, problems, count
        assert default is not None  # a problem otherwise
        senders = {a: n for a, n in numbers.items() if n}
        return Checked(run, business_id, default, senders), [], count

    async def checked(self, body: Any) -> Checked:
        checked, problems, _ = await self.check(body)
        if checked is None:
            raise rules.problems_error(problems)
        return checked

    # -- preview --------------------------------------------------------------------------------------------

    async def preview(self, body: Any) -> list[rules.Planned]:
        return await self._plan(await self.checked(body))

    async def _plan(self, checked: Checked) -> list[rules.Planned]:
        """Each touch with the decision it would get at its time, as things stand now (nothing stored or sent): what
        the messaging service knows of each callee (asked before any transaction), their leads, the business's
        calling hours."""
        phones = sorted({t.phone for t in checked.run.touches})
        standings, recent = await self._standings(checked.business_id, phones)
        async with self.uow.read() as work:
            known = await work.runs.callees(checked.business_id, phones)
            business_hours = await work.runs.business_hours(checked.business_id)
        touches = tuple(t if t.agent_id else replace(t, agent_id=checked.agent_id) for t in checked.run.touches)
        return rules.plan(replace(checked.run, touches=touches), utcnow(), standings, recent, known,
                          checked.senders, self.policy, business_hours)

    async def _standings(self, business_id: str, phones: list[str]
                         ) -> tuple[dict[str, compliance.Standing], dict[str, list[compliance.Counted]]]:
        found = await self.others.messaging.standings(business_id, phones)
        return ({p: standing for p, (standing, _) in found.items()},
                {p: list(counted) for p, (_, counted) in found.items()})

    # -- creation -------------------------------------------------------------------------------------------

    async def create(self, body: Any, idempotency_key: str | None) -> RunView:
        key = _checked_key(idempotency_key)
        checked = await self.checked(body)
        who = tenant.require_account()
        who.require_good_standing(checked.business_id, "scheduling outreach")
        planned = await self._plan(checked)
        run, now, run_id = checked.run, utcnow(), new_id()
        fingerprint = rules.request_hash(body)
        jobs = [_job_row(p, run_id, checked, now) for p in planned]
        try:
            async with self.uow.transaction() as work:
                row = await work.runs.add_run(
                    id=run_id, business_id=checked.business_id, account_id=who.account_id,
                    external_ref=run.external_ref, idempotency_key=key, request_hash=fingerprint,
                    status=runs_contract.SCHEDULED, agent_id=checked.agent_id, retry=run.retry.to_json(),
                    touches=len(run.touches), created_at=now, updated_at=now)
                if row is None:
                    return await self._replay(work.runs, checked.business_id, key, fingerprint)
                await work.runs.add_jobs(jobs)
        except IntegrityError as exc:
            if "communication_runs_external_ref" not in str(exc.orig):
                raise
            raise ServiceError("conflict", f"external_ref {run.external_ref!r} names another run of the business "
                               "(created with another Idempotency-Key); give each run its own external_ref") from None
        return RunView(row, dict(Counter(job["status"] for job in jobs)))

    @staticmethod
    async def _replay(runs: RunsRepository, business_id: str, key: str, fingerprint: str) -> RunView:
        first = await runs.run_by_key(business_id, key)
        assert first is not None  # the run's insert was refused for this key: the business has a run with it
        if first.request_hash != fingerprint:
            raise ServiceError("conflict", "this Idempotency-Key was used with another run body; use a new key for "
                               "a new run")
        counts = await runs.job_counts([str(first.id)])
        return RunView(first, counts.get(str(first.id), {}), replayed=True)

    # -- reading and changing -------------------------------------------------------------------------------

    async def list(self, run_id: str | None, external_ref: str | None, business_id: str | None,
                   page: Page) -> tuple[Paged, dict[str, dict[str, int]]]:
        who = tenant.require_account()
        scope = (tenant.pick_business(who, business_id),) if business_id else who.business_ids
        if run_id:
            require_uuid(run_id, "id")
        async with self.uow.read() as work:
            paged = await work.runs.run_page(scope, run_id, external_ref, page)
            counts = await work.runs.job_counts([str(r.id) for r in paged.rows]) if paged.rows else {}
        if run_id and not paged.rows:
            raise not_found("communication run")
        return paged, counts

    async def change(self, run_id: str, action: str) -> RunView:
        who = tenant.require_account()
        require_uuid(run_id, "id")
        now = utcnow()
        async with self.uow.transaction() as work:
            row = await work.runs.lock_run(run_id, who.business_ids)
            if row is None:
                raise not_found("communication run")
            if action == "resume":
                who.require_good_standing(str(row.business_id), "resuming outreach")
            status = rules.run_after(row.status, action, row.started_at is not None)
            values: dict[str, Any] = {"status": status, "updated_at": now}
            if action == "pause":
                await work.runs.move_jobs(run_id, runs_contract.WAITING, {"status": runs_contract.JOB_PAUSED, "updated_at": now})
            elif action == "resume":
                # Re-planned from now: each is claimed at once if its time passed, and decided again then.
                await work.runs.move_jobs(run_id, (runs_contract.JOB_PAUSED,), {"status": runs_contract.PENDING, "updated_at": now},
                                          due_no_earlier_than=now)
            else:
                await work.runs.move_jobs(run_id, (*runs_contract.WAITING, runs_contract.JOB_PAUSED), {
                    "status": runs_contract.JOB_CANCELED, "reason": "the run was canceled", "ended_at": now,
                    "updated_at": now})
                values["ended_at"] = now
            row = await work.runs.change_run(run_id, values)
            counts = (await work.runs.job_counts([run_id])).get(run_id, {})
            if action == "cancel":
                work.emit(run_ended(row, counts), str(row.business_id))
        return RunView(row, counts)

    async def jobs(self, run_id: str | None, channel: str | None, status: str | None, job_id: str | None,
                   page: Page) -> Paged:
        """The caller's jobs (`ListedJob`s) that pass the filters, in scheduled order, newest first."""
        who = tenant.require_account()
        for value, name in ((run_id, "communication_run_id"), (job_id, "id")):
            if value:
                require_uuid(value, name)
        if channel and channel not in runs_contract.CHANNELS:
            raise invalid(f"channel must be one of {', '.join(runs_contract.CHANNELS)}")
        if status and status not in runs_contract.JOB_STATES:
            raise invalid(f"status must be one of {', '.join(runs_contract.JOB_STATES)}")
        async with self.uow.read() as work:
            return await work.runs.job_page(who.business_ids, run_id, channel, status, job_id, page)

    async def attempts(self, run_id: str | None, status: str | None, page: Page) -> Paged:
        """The caller's call attempts (`ListedAttempt`s) that pass the filters, newest first."""
        who = tenant.require_account()
        if run_id:
            require_uuid(run_id, "sequence_id")
        if status and status not in runs_contract.ATTEMPT_STATES:
            raise invalid(f"status must be one of {', '.join(runs_contract.ATTEMPT_STATES)}")
        async with self.uow.read() as work:
            return await work.runs.attempt_page(who.business_ids, run_id, status, page)


def _checked_key(key: str | None) -> str:
    if not key:
        raise ServiceError("bad_request", "the Idempotency-Key header is required: a unique value per run (e.g. a "
                           "UUID), so that a retried request never creates a second run")
    return check_idempotency_key(key)


def _job_row(planned: rules.Planned, run_id: str, checked: Checked, now: datetime) -> dict[str, Any]:
    """The job of a planned touch: planned_at (its due_at) and status as the decision at creation says."""
    touch = planned.touch
    return {"id": new_id(), "run_id": run_id, "business_id": checked.business_id, "touch_index": touch.index,
            "touch_id": touch.touch_id, "channel": touch.channel, "phone": touch.phone, "timezone": touch.timezone,
            "agent_id": touch.agent_id or checked.agent_id, "context": touch.context,
            "scheduled_at": touch.scheduled_at, **rules.as_created(planned), "created_at": now, "updated_at": now}
