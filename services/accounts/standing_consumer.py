"""The gateways forget the cached principals of an account whose business changed standing (billing paused it,
a checkout completed, the owner resumed it), so what it may spend follows at once (gateway.auth)."""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from services.accounts.service import Accounts
from switchboard.v1 import events_pb2

SUBJECT = subject_for("workspace.standing_changed")
CONSUMER = "accounts-standing-invalidation"


class StandingInvalidation:
    def __init__(self, accounts: Accounts):
        self.accounts = accounts

    async def handle(self, message: dict[str, Any]) -> None:
        _, change = business_event(message)
        assert isinstance(change, events_pb2.WorkspaceStandingChanged)  # the subject's
        await self.accounts.invalidate(change.account_id)
