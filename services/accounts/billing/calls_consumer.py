"""Calls in the usage log: each `call.completed` and `call.failed` event adds the call's billed minutes and
its cost to its business's usage (once per call, so redelivered events add nothing); the balance sums the
minutes. A fetched batch is recorded in one transaction."""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from services.accounts.billing.usage import CallCost, Usage
from switchboard.v1 import events_pb2

CALLS_SUBJECT = subject_for("call.*")
CONSUMER = "accounts-call-usage"
BILLED = ("call.completed", "call.failed")


class CallUsage:
    """The consumer's handler: a fetched batch in one transaction (entries are once per call and their order does
    not matter)."""

    def __init__(self, usage: Usage):
        self.usage = usage

    async def handle(self, messages: list[dict[str, Any]]) -> None:
        costs = []
        for message in messages:
            event, call = business_event(message)
            if event.type in BILLED:
                assert isinstance(call, events_pb2.CallCompleted | events_pb2.CallFailed)  # the event types'
                assert event.business_id is not None  # business_event refuses one without
                costs.append(CallCost(event.business_id, call.call_id,
                                      call.duration if isinstance(call, events_pb2.CallCompleted) else 0,
                                      call.cost_cents, event.occurred_at))
        await self.usage.record_call_usage(costs)
