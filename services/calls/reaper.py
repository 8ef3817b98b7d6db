"""The reaper: no call stays without an outcome. Every interval it takes the calls silent past their
max_duration plus a margin, asks the provider about each (with no transaction open) and closes it with what
the provider says, through the same path as the provider's own end-of-call report. A call the provider still
calls active is left for one more margin, then closed without a report; one the provider does not know, or
that was never placed, is closed as failed."""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.voice.port import ProviderError, VoiceProvider
from services.calls.lifecycle_service import Lifecycle
from services.calls.repository import CallsUnit

log = logging.getLogger(__name__)
BATCH = 50
REPORT_FIELDS = ("endedReason", "startedAt", "endedAt", "cost", "artifact", "analysis")
# endedReason values of the calls the reaper closes without a report from the provider.
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

    async def sweep(self) -> int:
        """Close what can be closed of one batch of silent calls; returns how many were looked at."""
        async with self.uow.read() as work:
            rows = await work.calls.silent(utcnow(), self.margin, BATCH)
        for row in rows:
            await self._close(row)
        return len(rows)

    async def _close(self, row: Any) -> None:
        call = {"id": row.provider_call_id or "", "assistantOverrides": {"metadata": {"switchboard_call_id": str(row.id)}}}
        if not row.provider_call_id:
            return await self._report(call, {"endedReason": NEVER_PLACED})
        try:
            at_provider = await self.voice.get_call(row.provider_call_id)
        except ProviderError as exc:
            if exc.status == 404:
                await self._report(call, {"endedReason": NOT_AT_PROVIDER})
            return  # unreachable: the next sweep asks again
        if at_provider.get("status") == "ended":
            await self._report(call, {k: at_provider.get(k) for k in REPORT_FIELDS})
        elif utcnow() - row.created_at > timedelta(seconds=row.max_duration + 2 * self.margin):
            await self._report(call, {"endedReason": NO_REPORT})

    async def _report(self, call: dict[str, Any], fields: dict[str, Any]) -> None:
        log.info("calls reaper: closing call %s (%s)", call["assistantOverrides"]["metadata"]["switchboard_call_id"],
                 fields.get("endedReason"))
        await self.lifecycle.apply([{"type": "end-of-call-report", "call": call, **fields}])
