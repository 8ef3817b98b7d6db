"""A long-running asyncio task owned by a component (relay, consumer, usage writer), and the periodic worker's
loop."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


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
