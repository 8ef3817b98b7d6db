"""Moving a workspace along its lifecycle (domain.TRANSITIONS) with the action's event, in the caller's
transaction: the owner's PATCH and billing both move workspaces this way."""
from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from core.ids import utcnow
from core.outbox import add_event
from services.accounts import domain, store
from services.accounts.store import outbox


async def move(conn: AsyncConnection, row, action: str, *, reason: str | None = None,
               values: dict | None = None) -> tuple[object, bool]:
    """The business row after `action` (and `values`), and whether an event was added. A no-op move changes
    nothing but `values`; a refused one raises (domain.next_lifecycle_state)."""
    values = dict(values or {})
    state, changed = domain.next_lifecycle_state(row.lifecycle_state, action)
    event_added = False
    if changed:
        values["lifecycle_state"] = state
        if event := domain.ACTION_EVENTS.get(action):
            extra = {"reason": reason} if reason and action in ("pause", "cancel") else {}
            await add_event(conn, outbox, event(business_id=str(row.id), previous_state=row.lifecycle_state,
                                                lifecycle_state=state, **extra), str(row.id))
            event_added = True
    if values:
        row = await store.update_business(conn, row.id, {**values, "updated_at": utcnow()})
    return row, event_added
