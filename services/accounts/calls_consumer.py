"""Calls in the usage log: each `call.completed` and `call.failed` event adds the call's billed minutes and
its cost to its business's usage (once per call, so redelivered events add nothing); the balance sums the
minutes."""
from __future__ import annotations

from core.bus import business_event, subject_for
from services.accounts.service import Accounts

CALLS_SUBJECT = subject_for("call.*")
CONSUMER = "accounts-call-usage"
BILLED = ("call.completed", "call.failed")


class CallUsage:
    def __init__(self, accounts: Accounts):
        self.accounts = accounts

    async def handle(self, message: dict) -> None:
        event, call = business_event(message)
        if event.type not in BILLED:
            return
        duration = call.duration if event.type == "call.completed" else 0
        await self.accounts.record_call_usage(event.business_id, call.call_id, duration, call.cost_cents,
                                              event.occurred_at)
