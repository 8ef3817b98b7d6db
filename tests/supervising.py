"""A stack with its launcher's supervision on for one test (deploy.local.supervision), and off again after it with
every process running, whatever the test left down."""
import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from deploy.local.stack import Stack


@asynccontextmanager
async def supervised(stack: Stack, ready_within: float) -> AsyncIterator[Stack]:
    stack.supervise()
    try:
        yield stack
    finally:
        stack.supervise(False)
        for p in stack.processes:  # one a failed test left down
            if not p.stopped and p.proc is not None and p.proc.poll() is not None:
                stack.spawn(p)
        await asyncio.to_thread(stack.wait_ready, ready_within)
