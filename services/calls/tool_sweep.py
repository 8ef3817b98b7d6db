"""The tool-call sweep: no tool call stays running. A tool call is claimed (recorded running) before its tool runs
and settled after (services.calls.tools_service); when the process running it dies in between, it would stay
running, and every later delivery of it would answer "still being worked on". Every interval the sweep settles the
tool calls running longer than STALE_AFTER as failed, with a sentence the model can say, a batch at a time.

Any number of replicas run it: each batch claims its rows (SKIP LOCKED) in the one statement that settles them, so
each tool call is settled once, and a run that is merely slow is never swept (STALE_AFTER is far beyond the longest
a tool may take: a custom tool's timeout_ms, at most contracts.agents.TIMEOUT_MS)."""
from __future__ import annotations

import logging
from datetime import timedelta

from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from services.calls.repository import CallsUnit

log = logging.getLogger(__name__)

STALE_AFTER = timedelta(minutes=2)
INTERVAL_SECONDS = 30.0
BATCH = 200
GAVE_UP = "This could not be done: it stopped before it finished. Please tell the caller it failed."


class ToolCallSweep(Periodic):
    task_name = "calls-tool-call-sweep"

    def __init__(self, uow: UnitOfWork[CallsUnit], *, interval: float = INTERVAL_SECONDS,
                 stale_after: timedelta = STALE_AFTER, batch: int = BATCH):
        self.uow = uow  # the calls' tool calls (services.calls.repository)
        self.interval, self.stale_after, self.batch = interval, stale_after, batch

    async def round(self) -> bool:
        return await self.sweep() == self.batch  # a full batch: more may be due at once

    async def sweep(self) -> int:
        """Settle one batch of stale tool calls; how many."""
        async with self.uow.transaction() as work:
            settled = await work.calls.settle_stale_tool_calls(utcnow() - self.stale_after, GAVE_UP, self.batch)
        if settled:
            log.warning("tool-call sweep: %d tool calls running for over %s settled as failed", settled,
                        self.stale_after)
        return settled
