"""A long-running asyncio task owned by a component (relay, consumer, usage writer)."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Background:
    """Mixin: `start()` runs `self.run()` as a named task, `stop()` cancels it and waits for it to end."""

    task_name = "background"
    _task: asyncio.Task | None = None

    run: Callable[[], Awaitable[None]]

    def start(self) -> asyncio.Task:
        self._task = asyncio.create_task(self.run(), name=self.task_name)
        return self._task

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._task = None
