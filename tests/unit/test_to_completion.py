"""core.to_completion: the caller may stop waiting; the work goes on to its end."""
import asyncio

import pytest

from core.to_completion import to_completion


async def test_work_finishes_though_its_caller_was_cancelled():
    finished = asyncio.Event()

    async def work() -> str:
        await asyncio.sleep(0.05)
        finished.set()
        return "recorded"

    caller = asyncio.create_task(to_completion(work()))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.wait_for(finished.wait(), 1)


async def test_a_waiting_caller_gets_the_result_or_the_error():
    async def fails():
        raise ValueError("refused")

    async def works():
        return 7

    assert await to_completion(works()) == 7
    with pytest.raises(ValueError, match="refused"):
        await to_completion(fails())
