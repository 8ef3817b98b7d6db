"""Work that must finish once begun, even when its caller goes away.

A gRPC handler is cancelled when its client disconnects (a scheduler killed mid-touch, a client that timed out).
Cancelled in the middle of handing a call or a text to the provider, it would leave the provider's work done and
ours unrecorded, and a retry with the same idempotency key would send it again. Run such a stretch with
`to_completion`: the caller may stop waiting, the work goes on to its end and records what happened. Its own calls
to other services get their full deadlines, not what is left of the caller's (core.deadlines.detached).
"""
from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from core import deadlines

T = TypeVar("T")
_running: set[asyncio.Task[Any]] = set()  # the loop keeps only weak references to tasks


async def to_completion(work: Coroutine[Any, Any, T]) -> T:
    """The result of `work`, which runs to its end even if this await is cancelled."""
    task = asyncio.get_running_loop().create_task(work, context=deadlines.detached())
    _running.add(task)
    task.add_done_callback(_finished)
    return await asyncio.shield(task)


def _finished(task: asyncio.Task[Any]) -> None:
    _running.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a caller that left cannot, and its outcome is recorded by the work itself
