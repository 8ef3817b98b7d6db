"""Businesses not in good standing (core.standing), as the accounts service announces them
(`workspace.standing_changed`): scheduled outreach (communication runs' touches, the pipeline runner) leaves
them alone while they are held and goes on once they are back. A run's touches wait, they are not failed: a
workspace paused for a late payment picks up where it stopped when it is paid.

Each business keeps its latest standing with the time of the change, so a redelivered or late event never
overwrites a newer one (the repository's record_standing); the stores' queries of due work leave the held ones out
(services.sdr.schema.not_held).
"""
from __future__ import annotations

from typing import Any

from core.bus import business_event, subject_for
from core.uow import UnitOfWork
from services.sdr.repository import SdrUnit
from switchboard.v1 import events_pb2

SUBJECT = subject_for("workspace.standing_changed")
CONSUMER = "sdr-held-businesses"


class StandingRecorder:
    def __init__(self, uow: UnitOfWork[SdrUnit]):
        self.uow = uow

    async def handle(self, message: dict[str, Any]) -> None:
        event, change = business_event(message)
        # the consumer's subject; business_event refuses an event that names no business
        assert isinstance(change, events_pb2.WorkspaceStandingChanged) and event.business_id is not None
        async with self.uow.transaction() as work:
            await work.events.record_standing(event.business_id, change.standing, event.occurred_at)
