"""The periodic worker's loop (core.background.Periodic): it survives a failing round, goes on at once after a
full one, and a wake starts the next round before its interval."""
import asyncio
import logging

from core.background import Periodic


class Rounds(Periodic):
    task_name = "test-rounds"

    def __init__(self, answers: list, interval: float):
        self.answers, self.interval, self.started = answers, interval, []

    async def round(self) -> bool:
        self.started.append(asyncio.get_running_loop().time())
        answer = self.answers.pop(0) if self.answers else False
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_a_failing_round_is_logged_and_the_next_one_runs(caplog):
    worker = Rounds([ConnectionError("database away"), False], interval=0.01)
    with caplog.at_level(logging.WARNING, logger="core.background"):
        worker.start()
        await asyncio.sleep(0.1)
        await worker.stop()
    assert len(worker.started) >= 3
    assert "test-rounds: round failed (ConnectionError: database away)" in caplog.text


async def test_a_full_round_is_followed_at_once_and_a_wake_cuts_the_wait_short():
    worker = Rounds([True, True, False], interval=60)
    worker.start()
    await asyncio.sleep(0.05)
    assert len(worker.started) == 3  # two full rounds, then the wait
    worker.wake()
    await asyncio.sleep(0.05)
    await worker.stop()
    assert len(worker.started) == 4
