"""A torn-down workspace keeps no phone number: on `workspace.teardown_completed` its numbers go back to the pool
(released at the voice provider first). A release that fails is retried with the event's redelivery; numbers
released already are not looked at again."""
from __future__ import annotations

from typing import Any

from core import tenant
from core.bus import business_event, subject_for
from services.agents.numbers_service import Numbers

SUBJECT = subject_for("workspace.teardown_completed")
CONSUMER = "agents-workspace-teardown"


class Teardown:
    def __init__(self, numbers: Numbers):
        self.numbers = numbers

    async def handle(self, message: dict[str, Any]) -> None:
        event, _ = business_event(message)
        business_id = event.business_id
        assert business_id is not None  # business_event refuses an event that names no business
        with tenant.acting_as(tenant.acting_for(business_id, CONSUMER)):
            await self.numbers.release_all(business_id)
