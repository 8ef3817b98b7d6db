"""The soak's mixed load: tenants set up first, then every actor working at its profile's rate until the load's
end. An actor is a coroutine over a `LoadContext`; each is written in its own module under bench/soak/actors and
listed in ACTORS. An actor never raises for an answer it did not expect: it notes it in the history and goes on
(the ledger and the report show them), so one broken flow does not stop the soak."""
from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.soak.client import SoakClient
from bench.soak.history import History
from bench.soak.profile import SoakProfile

if TYPE_CHECKING:
    from bench.soak.partner import Partner
    from deploy.local.stack import Stack


@dataclass
class LoadContext:
    client: SoakClient
    stack: Stack
    history: History
    profile: SoakProfile
    partner: Partner
    rng: random.Random  # the load's own, seeded from the profile's seed
    ends_at: float  # monotonic: no new work after it

    def running(self) -> bool:
        return time.monotonic() < self.ends_at

    async def every(self, per_minute: float) -> bool:
        """Sleep an exponential gap for `per_minute` (a Poisson arrival); False once the load has ended."""
        if per_minute <= 0:
            return False
        await asyncio.sleep(min(self.rng.expovariate(per_minute / 60.0), max(0.0, self.ends_at - time.monotonic())))
        return self.running()


Actor = Callable[[LoadContext], Awaitable[None]]

ACTORS: list[Actor] = []  # filled by bench/soak/actors


async def run_load(ctx: LoadContext) -> None:
    """Every actor until the load's end (the tenants are set up before); returns when they all have."""
    await asyncio.gather(*(actor(ctx) for actor in ACTORS))
