"""The sales pipeline's scheduled runner: every two hours, each business with SDR enabled has its pipeline worked
once (services.sdr.pipeline_run, origin runner) and gets a briefing.

Windows are the two-hour spans of UTC from midnight. A business's run of a window is claimed by one runner
(runner_windows, unique per business and window, under a lease): two replicas never run it twice, and a runner
that died halfway is taken over once its lease runs out, skipping the leads the window's run already acted on
(their activity entries carry the window). The run acts as the business's owner. Its briefing (what was done, the
leads that need the owner and why) is stored, queued to the owner by email through the email queue and emitted as
dispatcher.briefing_created, in the transaction that completes the window.

Triggered by the `sdr-runner` worker (core.registry) every SDR_RUNNER_POLL_SECONDS, or by POST /api/sdr/runner with
the server secret (for a Kubernetes CronJob, or an operator).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core import standings, tenant
from core.background import Periodic
from core.errors import ServiceError
from core.grpc_server import Runtime, main
from core.ids import new_id, rfc3339, utcnow
from core.tenant import Tenant
from core.uow import UnitOfWork
from services.sdr.pipeline_actions import Actions
from services.sdr.pipeline_run import PipelineRun, RunOutcome
from services.sdr.pipeline_service import Pipeline
from services.sdr.ports import Neighbours, grpc_neighbours
from services.sdr.repository import SdrUnit, sql_unit
from services.sdr.schema import outbox
from switchboard.v1 import events_pb2

log = logging.getLogger(__name__)
WINDOW = timedelta(hours=2)
LEASE = timedelta(minutes=10)  # a run longer than this is taken over by another runner


def window_of(now: datetime) -> datetime:
    """The start of the two-hour window (of UTC, from midnight) holding `now`."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + WINDOW * ((now - day) // WINDOW)


def briefing_text(business_name: str, window_start: datetime, outcome: RunOutcome) -> str:
    """The briefing as the owner reads it."""
    s = outcome.summary
    lines = [f"Your sales pipeline at {business_name}, {window_start:%Y-%m-%d %H:%M} UTC:", "",
             f"- calls placed: {s['calls_queued']}", f"- texts sent: {s['sms_sent']}",
             f"- emails queued: {s['emails_queued']}", f"- touches that failed: {s['failed']}",
             f"- leads left alone for now: {outcome.skipped}", ""]
    owner = [r for r in outcome.results if r.action == "escalate"]
    if owner:
        lines.append(f"{len(owner)} lead(s) need you:")
        lines += [f"- {r.name or r.lead_id}: {r.detail.removeprefix('needs the owner: ')}" for r in owner]
    else:
        lines.append("Nothing needs you right now.")
    failed = outcome.errors
    if failed:
        lines += ["", "Touches that failed:"] + [f"- {r.name or r.lead_id} ({r.action}): {r.detail}" for r in failed]
    return "\n".join(lines)


@dataclass(frozen=True)
class WindowRun:
    business_id: str
    status: str  # ran, taken (another runner holds it), held (not in good standing: nothing done)
    briefing_id: str | None = None
    outcome: RunOutcome | None = None


class ScheduledRunner:
    def __init__(self, uow: UnitOfWork[SdrUnit], run: PipelineRun, others: Neighbours):
        self.uow, self.run, self.others = uow, run, others

    async def run_window(self, now: datetime, business_id: str | None = None) -> tuple[datetime, list[WindowRun]]:
        """Work every due business of the window holding `now` (or only `business_id`), one after the other."""
        window_start = window_of(now)
        async with self.uow.read() as work:
            due = await work.pipeline.businesses_due(window_start, business_id)
        runs = []
        for business in due:
            runs.append(await self._business(business, window_start))
        return window_start, runs

    async def _business(self, business_id: str, window_start: datetime) -> WindowRun:
        with tenant.acting_as(tenant.acting_for(business_id, "sdr-runner")):
            if not await self.run.actions.standings.is_good(business_id):
                return WindowRun(business_id, "held")  # not claimed: it runs in this window if it is back in time
        token, now = new_id(), utcnow()
        async with self.uow.transaction() as work:
            claimed = await work.pipeline.claim_window(business_id, window_start, token, now + LEASE, now)
            worked = await work.pipeline.leads_worked(str(claimed.id)) if claimed is not None else frozenset()
        if claimed is None:
            return WindowRun(business_id, "taken")
        with tenant.acting_as(tenant.acting_for(business_id, "sdr-runner")):
            owner = await self.others.accounts.owner(business_id)
        with tenant.acting_as(Tenant(account_id=owner.account_id, business_ids=(business_id,))):
            outcome = await self.run.run(business_id, False, "runner", worked, str(claimed.id))
            text = briefing_text(owner.business_name, window_start, outcome)
            email_id = await self._email(owner.email, window_start, text)
        briefing_id = new_id()
        async with self.uow.transaction() as work:
            if not await work.pipeline.complete_window(str(claimed.id), token, utcnow()):
                return WindowRun(business_id, "taken")  # our lease ran out: the runner that took over briefs
            needs_owner = [{"lead_id": r.lead_id, "name": r.name, "reason": r.detail} for r in outcome.results
                           if r.action == "escalate"]
            await work.pipeline.add_briefing(id=briefing_id, business_id=business_id, window_id=str(claimed.id),
                                     summary={**outcome.summary, "skipped": outcome.skipped},
                                     needs_owner=needs_owner, text=text, email_id=email_id, created_at=utcnow())
            work.emit(events_pb2.BriefingCreated(
                briefing_id=briefing_id, window_start=rfc3339(window_start),
                skipped=outcome.skipped, email_id=email_id, **outcome.summary,
                needs_owner=[events_pb2.BriefingLead(**lead) for lead in needs_owner]), business_id)
        return WindowRun(business_id, "ran", briefing_id, outcome)

    async def _email(self, to: str, window_start: datetime, text: str) -> str | None:
        """The briefing queued to the owner; None when the queue refused it (the briefing is stored anyway)."""
        try:
            email = await self.others.messaging.queue_email(
                to, f"Your sales pipeline: {window_start:%Y-%m-%d %H:%M} UTC", text)
        except ServiceError as err:
            log.warning("sdr runner: the briefing email to the owner was refused: %s", err.message)
            return None
        return email.id


class RunnerLoop(Periodic):
    """The `sdr-runner` worker's loop: every `poll` seconds, the due businesses of the current window."""

    task_name = "sdr-runner"

    def __init__(self, runner: ScheduledRunner, poll: float):
        self.runner, self.interval = runner, poll

    async def round(self) -> bool:
        await self.runner.run_window(utcnow())
        return False


@dataclass(frozen=True)
class PipelineParts:
    """The sales pipeline's use cases, as the sdr service and the sdr-runner worker both build them."""

    pipeline: Pipeline
    actions: Actions
    run: PipelineRun
    runner: ScheduledRunner

    @classmethod
    def of(cls, runtime: Runtime, others: Neighbours) -> PipelineParts:
        uow = UnitOfWork(runtime.db, sql_unit(runtime.db), events=outbox)
        pipeline = Pipeline(uow, others, runtime.settings.compliance_policy())
        actions = Actions(uow, pipeline, others, standings=standings.heard_by(runtime))
        run = PipelineRun(pipeline, actions)
        return cls(pipeline, actions, run, ScheduledRunner(uow, run, others))


def build(runtime: Runtime) -> None:
    runtime.run(RunnerLoop(PipelineParts.of(runtime, grpc_neighbours(runtime.client)).runner,
                           runtime.settings.sdr_runner_poll_seconds))


if __name__ == "__main__":
    main("sdr-runner")
