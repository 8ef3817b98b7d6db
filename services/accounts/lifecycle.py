"""Changing a workspace: its lifecycle (domain.TRANSITIONS) with the action's event, and any change of its standing
(core.standing) announced as `workspace.standing_changed`, in the caller's unit of work: the owner's PATCH and
billing both change workspaces this way."""
from __future__ import annotations

from typing import Any

from core import standing
from core.ids import utcnow
from services.accounts import domain
from services.accounts.records import Business
from services.accounts.repository import AccountsUnit
from switchboard.v1 import events_pb2


async def change(work: AccountsUnit, row: Business, values: dict[str, Any]) -> Business:
    """The business row after writing `values` (with workspace.standing_changed when its standing changed)."""
    after = await work.accounts.change_business(row.id, {**values, "updated_at": utcnow()})
    assert after is not None  # the caller read the row in this unit of work (and holds it)
    was = standing.standing(row.lifecycle_state, row.subscription_status)
    now = standing.standing(after.lifecycle_state, after.subscription_status)
    if was != now:
        work.emit(events_pb2.WorkspaceStandingChanged(
            business_id=str(row.id), account_id=str(row.account_id), standing=now, previous_standing=was), str(row.id))
    return after


async def move(work: AccountsUnit, row: Business, action: str, *, reason: str | None = None,
               values: dict[str, Any] | None = None) -> tuple[Business, bool]:
    """The business row after `action` (and `values`), and whether its lifecycle state moved. A no-op move changes
    nothing but `values`; a refused one raises (domain.next_lifecycle_state)."""
    values = dict(values or {})
    state, changed = domain.next_lifecycle_state(row.lifecycle_state, action)
    if changed:
        values["lifecycle_state"] = state
        if event := domain.ACTION_EVENTS.get(action):
            extra = {"reason": reason} if reason and action in ("pause", "cancel") else {}
            work.emit(event(business_id=str(row.id), previous_state=row.lifecycle_state, lifecycle_state=state,
                            **extra), str(row.id))
    if values:
        row = await change(work, row, values)
    return row, changed
