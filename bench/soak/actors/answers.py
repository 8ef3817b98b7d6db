"""How the soak's actors take an answer: one they expected goes on; any other is noted in the history (the report
prints the notes) and the actor goes on without it, never raising. A refusal because the tenant's workspace is held
(paused by the workspaces actor for a while, or torn down) is expected while it is, and noted as such."""
from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.soak.load import LoadContext

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
