"""A run of the sales pipeline (POST /api/sdr/run, and the scheduled runner): every lead whose next action is a
touch gets it, through the same action as POST /api/sdr/action (its cadence, its compliance decision, its activity
entry), and every lead that needs the owner is counted as escalated. A dry run computes the same and dispatches
nothing. A lead skipped (closed, paused, waiting for its cadence or its legal window, or nothing to do in its
segment) is counted, not listed. Leads are worked one after the other: a run is a sweep every two hours, not a
burst (communication runs are the platform's bulk path).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import ServiceError, invalid
from services.sdr import pipeline_domain as rules
from services.sdr.pipeline_actions import Actions
from services.sdr.pipeline_service import Pipeline

SUMMARY_OF = {"call": "calls_queued", "email": "emails_queued", "sms": "sms_sent", "escalate": "escalated"}


@dataclass(frozen=True)
class RunResult:
    lead_id: str
    action: str
    success: bool
    detail: str
    code: str | None = None  # the error's code when it failed
    name: str = ""  # the lead's, for the owner's briefing


@dataclass
class RunOutcome:
    business_id: str
    dry_run: bool
    summary: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("calls_queued", "emails_queued", "sms_sent", "escalated", "failed"), 0))
    results: list[RunResult] = field(default_factory=list)
    skipped: int = 0

    @property
    def errors(self) -> list[RunResult]:
        return [r for r in self.results if not r.success]


class PipelineRun:
    def __init__(self, pipeline: Pipeline, actions: Actions):
        self.pipeline, self.actions = pipeline, actions

    async def run(self, business_id: str, dry_run: bool, origin: str = "api", done: frozenset[str] = frozenset(),
                  window_id: str | None = None) -> RunOutcome:
        """Work the business's pipeline once; `done`: leads already worked by the scheduled run `window_id` (a
        runner that took it over)."""
        config, worklist, total = await self.pipeline.worklist(business_id)
        if not config.enabled:
            raise invalid("SDR is not enabled for this business: PUT /api/sdr/config with enabled true first")
        if not dry_run:
            await self.actions.standings.require_good(business_id, "working the pipeline")
        outcome = RunOutcome(business_id, dry_run, skipped=total - len(worklist))
        for lead in worklist:
            lead_id, action = str(lead.row.id), lead.next.action
            if lead_id in done:
                continue
            if action not in (*rules.TOUCHES, "escalate"):
                outcome.skipped += 1
                continue
            name = lead.row.name or " ".join(filter(None, (lead.row.first_name, lead.row.last_name)))
            if action == "escalate" or dry_run:
                verb = "needs the owner" if action == "escalate" else f"would {action}"
                result = RunResult(lead_id, action, True, f"{verb}: {lead.next.reason}", name=name)
            else:
                try:
                    made = await self.actions.act(business_id, lead_id, action, origin, window_id)
                    result = RunResult(lead_id, action, True, made.detail, name=name)
                except ServiceError as err:
                    result = RunResult(lead_id, action, False, err.message, err.code, name)
            outcome.results.append(result)
            outcome.summary[SUMMARY_OF[action] if result.success else "failed"] += 1
        return outcome
