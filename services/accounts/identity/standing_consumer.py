"""The gateways forget the cached principals of an account whose business changed standing (billing paused it,
a checkout completed, the owner resumed it), so what it may spend follows at once (gateway.auth)."""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from services.accounts.identity.service import Identity
from switchboard.v1 import events_pb2

SUBJECT = subject_for("workspace.standing_changed")
CONSUMER = "accounts-standing-invalidation"


class StandingInvalidation:
    def __init__(self, identity: Identity):
        self.identity = identity

    async def handle(self, message: dict[str, Any]) -> None:
        _, change = business_event(message)
        assert isinstance(change, events_pb2.WorkspaceStandingChanged)  # the subject's
        await self.identity.invalidate(change.account_id)
