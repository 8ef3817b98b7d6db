"""The gateways forget the cached principals of an account whose business changed standing (billing paused it,
a checkout completed, the owner resumed it), so what it may spend follows at once (gateway.auth)."""
from __future__ import annotations

from core.bus import business_event, subject_for
from services.accounts.service import Accounts

SUBJECT = subject_for("workspace.standing_changed")
CONSUMER = "accounts-standing-invalidation"


class StandingInvalidation:
    def __init__(self, accounts: Accounts):
        self.accounts = accounts

    async def handle(self, message: dict) -> None:
        _, change = business_event(message)
        await self.accounts.invalidate(change.account_id)
