"""How the soak's actors take an answer: one they expected goes on; any other is noted in the history (the report
prints the notes) and the actor goes on without it, never raising. A refusal because the tenant's workspace is held
(paused by the workspaces actor for a while, or torn down) is expected while it is, and noted as such. An actor
that raises all the same (a bug, or a body not in the shape the spec gives) is stopped and noted, not the load."""
from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Any

from bench.soak.actors.pacing import noted
from bench.soak.actors.tenants import refused_by_standing
from bench.soak.load import Actor, LoadContext


def expected(ctx: LoadContext, what: str, status: int, body: Any, ok: Collection[int] = (200, 201)) -> bool:
    """Whether `status` is one of `ok`; if not, the answer is noted under `what`."""
    if status in ok:
        return True
    why = " (its workspace is held: expected while it is)" if refused_by_standing(status, body) else ""
    ctx.history.notes.append(f"{what}: {status} {str(body)[:300]}{why}")
    return False


def guarded(actor: Actor) -> Actor:
    """`actor`, whatever it raises noted instead of ending the whole load."""
    @functools.wraps(actor)
    async def run(ctx: LoadContext) -> None:
        await noted(ctx, f"actor {actor.__name__} stopped", actor(ctx))
    return run
