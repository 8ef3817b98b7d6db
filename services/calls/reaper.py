"""The reaper: no call stays without an outcome. Every interval it takes the calls silent past their
max_duration plus a margin, asks the provider about each (with no transaction open) and closes it with what
the provider says, through the same path as the provider's own end-of-call report. A call the provider still
calls active is left for one more margin, then closed without a report; one the provider does not know, or
that was never placed, is closed as failed."""
from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from typing import Any

from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.voice.port import CallRef, CallReport, ProviderError, VoiceProvider
from services.calls.lifecycle_service import Lifecycle
from services.calls.repository import CallsUnit

log = logging.getLogger(__name__)
BATCH = 50
# The ended reasons of the calls the reaper closes without a report from the provider (one it does not know is
# failed; the others are decided by how far the call got).
NOT_AT_PROVIDER, NEVER_PLACED, NO_REPORT = "call-not-found-at-provider", "call-never-placed", "no-end-of-call-report"


class Reaper(Periodic):
    task_name = "calls-reaper"

    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider, lifecycle: Lifecycle, *, interval: float,
                 margin: float):
        self.uow, self.voice, self.lifecycle = uow, voice, lifecycle
        self.interval, self.margin = interval, margin

    async def round(self) -> bool:
        await self.sweep()
        return False

    async def stuck(self) -> int:
        """How many calls are still without an outcome when a sweep should have closed them whatever the provider
        said (past max_duration plus twice the margin, and an interval for that sweep to come): those the provider
        keeps failing to answer about, or that the sweeps never reach (the batch is the oldest silent calls)."""
        async with self.uow.read() as work:
            return await work.calls.count_silent(utcnow(), 2 * self.margin + self.interval)

    async def sweep(self) -> int:
        """Close what can be closed of one batch of silent calls; returns how many were looked at."""
        async with self.uow.read() as work:
            rows = await work.calls.silent(utcnow(), self.margin, BATCH)
        for row in rows:
            await self._close(row)
        return len(rows)

    async def _close(self, row: Any) -> None:
        call = CallRef(row.provider_call_id or "", str(row.id))
        if not row.provider_call_id:
            return await self._report(CallReport(call, NEVER_PLACED))
        try:
            ended = await self.voice.ended_call(row.provider_call_id)
        except ProviderError as exc:
            if exc.status == 404:
                await self._report(CallReport(call, NOT_AT_PROVIDER, "failed"))
            return  # unreachable: the next sweep asks again
        if ended is not None:
            await self._report(dataclasses.replace(ended, call=call))
        elif utcnow() - row.created_at > timedelta(seconds=row.max_duration + 2 * self.margin):
            await self._report(CallReport(call, NO_REPORT))

    async def _report(self, report: CallReport) -> None:
        log.info("calls reaper: closing call %s (%s)", report.call.our_call_id, report.ended_reason)
        await self.lifecycle.apply([report])
