"""The evals of a business for its export (issue 56): `ExportPage` of the kinds `evals` (each scenario with its
turns, as GET /api/v1/evals?id= shows it) and `eval_runs` (each run as GET /api/v1/evals/runs?run_id= shows it),
a page at a time (core.export_page), newest first."""
from __future__ import annotations

from collections.abc import Callable

from core import export_page
from core.uow import UnitOfWork
from services.evals.records import Run, Scenario
from services.evals.repository import EvalsUnit
from switchboard.v1 import common_pb2, evals_pb2

KINDS = ("evals", "eval_runs")


class EvalsExport:
    def __init__(self, uow: UnitOfWork[EvalsUnit], scenario: Callable[[Scenario], evals_pb2.EvalScenario],
                 run: Callable[[Run], evals_pb2.EvalRun]):
        self.uow = uow
        self.scenario, self.run = scenario, run  # as GetEval and GetEvalRuns answer (services.evals.servicer)

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        asked = export_page.asked(request, KINDS)
        async with self.uow.read() as work:
            if asked.kind == "evals":
                paged = await work.scenarios.whole_page(asked.business_id, asked.page)
                return export_page.reply(paged.rows, paged, self.scenario)
            paged = await work.runs.page(asked.business_id, asked.page)
        return export_page.reply(paged.rows, paged, self.run)
