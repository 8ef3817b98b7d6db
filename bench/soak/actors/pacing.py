"""What every actor of this package shares: work paced at a rate, each piece in a task of its own (a request the
client retries through a fault for up to two minutes does not hold back the next), and whatever a piece raises
noted in the history instead of stopping the soak (bench.soak.load)."""
from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from bench.soak.load import LoadContext


async def noted(ctx: LoadContext, what: str, work: Awaitable[Any]) -> None:
    """Run `work`; whatever it raises is noted in the history, so one broken flow does not stop the soak."""
    try:
        await work
    except Exception as exc:  # noqa: BLE001 - an actor notes what broke and goes on (bench.soak.load)
        ctx.history.notes.append(f"{what}: {exc!r}")


async def paced(ctx: LoadContext, per_minute: float, what: str, work: Callable[[], Awaitable[Any]]) -> None:
    """`work()` at `per_minute` (Poisson arrivals) until the load's end; returns once every piece started has."""
    started: list[asyncio.Task[None]] = []
    while await ctx.every(per_minute):
        started.append(asyncio.create_task(noted(ctx, what, work())))
    await asyncio.gather(*started)


def fresh_key(ctx: LoadContext) -> str:
    """An Idempotency-Key, from the seeded rng."""
    return str(uuid.UUID(int=ctx.rng.getrandbits(128), version=4))
