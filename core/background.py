"""A long-running asyncio task owned by a component (relay, consumer, usage writer), the periodic worker's loop, and
the jobs a request starts to run beyond it."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from core import deadlines

log = logging.getLogger(__name__)
T = TypeVar("T")


class Background:
    """Mixin: `start()` runs `self.run()` as a named task, `stop()` cancels it and waits for it to end."""

    task_name = "background"
    _task: asyncio.Task[None] | None = None

    run: Callable[[], Coroutine[Any, Any, None]]

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name=self.task_name)
        return self._task

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None


class Periodic(Background):
    """A worker that does a round of work every `interval` seconds and survives its failures: a round that raises
    (the database or a provider is away) is logged and the next one tries again. `round()` answers True when more
    is due at once (a full batch): the next round starts without waiting. `wake()` starts the next round now."""

    interval: float
    _woken: asyncio.Event | None = None

    async def round(self) -> bool:
        raise NotImplementedError

    def wake(self) -> None:
        self._events().set()

    def _events(self) -> asyncio.Event:
        if self._woken is None:
            self._woken = asyncio.Event()
        return self._woken

    async def run(self) -> None:
        woken = self._events()
        while True:
            try:
                more = await self.round()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the next round tries again
                log.warning("%s: round failed (%s: %s); next in %gs", self.task_name, type(exc).__name__, exc,
                            self.interval)
                more = False
            if more:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), self.interval)
            woken.clear()


class Detached:
    """Jobs a request started in the background, to run beyond it (out of its deadline: core.deadlines.detached);
    `stop()` cancels those still running (a job claimed under a lease is then resumed by its runner once the lease
    runs out)."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def start(self, job: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        task = asyncio.create_task(job, name=name, context=deadlines.detached())
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    def __len__(self) -> int:
        return len(self._running)

    async def join(self) -> None:
        """Wait for the jobs running now to end."""
        await asyncio.gather(*self._running)

    async def stop(self) -> None:
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
