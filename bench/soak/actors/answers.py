"""How the soak's actors take an answer: one they expected goes on; any other is noted in the history (the report
prints the notes) and the actor goes on without it, never raising. A refusal because the tenant's workspace is held
(paused by the workspaces actor for a while, or torn down) is expected while it is, and noted as such. An actor
that raises all the same (a bug, or a body not in the shape the spec gives) is stopped and noted, not the load."""
from __future__ import annotations

import functools
import traceback
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.soak.load import Actor, LoadContext

# What core.standing's refusals say of a held workspace.
HELD_PHRASES = ("the workspace is paused", "the workspace is canceled", "the workspace was torn down")


def held(status: int, body: Any) -> bool:
    """Whether the answer is the refusal of a business whose workspace is held."""
    return status == 403 and any(phrase in str(body) for phrase in HELD_PHRASES)


def expected(ctx: LoadContext, what: str, status: int, body: Any, ok: Collection[int] = (200, 201)) -> bool:
    """Whether `status` is one of `ok`; if not, the answer is noted under `what`."""
    if status in ok:
        return True
    why = " (its workspace is held: expected while it is)" if held(status, body) else ""
    ctx.history.notes.append(f"{what}: {status} {str(body)[:300]}{why}")
    return False


def guarded(actor: Actor) -> Actor:
    """`actor`, its exception noted with where it was raised instead of ending the whole load."""
    @functools.wraps(actor)
    async def run(ctx: LoadContext) -> None:
        try:
            await actor(ctx)
        except Exception as exc:  # noqa: BLE001 - noted: the other actors go on
            where = traceback.extract_tb(exc.__traceback__)[-1]
            ctx.history.notes.append(f"actor {actor.__name__} stopped: {exc!r} at {where.filename}:{where.lineno}")
    return run
