"""Businesses not in good standing (core.standing), as the accounts service announces them
(`workspace.standing_changed`): scheduled outreach (communication runs' touches, the pipeline runner) leaves
them alone while they are held and goes on once they are back. A run's touches wait, they are not failed: a
workspace paused for a late payment picks up where it stopped when it is paid.

Each business keeps its latest standing with the time of the change, so a redelivered or late event never
overwrites a newer one.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert

from core import standing
from core.bus import business_event, subject_for
from core.uow import Database
from services.sdr.schema import standings

SUBJECT = subject_for("workspace.standing_changed")
CONSUMER = "sdr-held-businesses"



def not_held(business_id: sa.ColumnElement) -> sa.ColumnElement[bool]:
    """A condition on a query's business id column: the business is not held."""
    return ~sa.exists().where(standings.c.business_id == business_id, standings.c.standing.in_(standing.HELD))


class StandingRecorder:
    def __init__(self, db: Database):
        self.db = db

    async def handle(self, message: dict) -> None:
        event, change = business_event(message)
        statement = insert(standings).values(business_id=event.business_id, standing=change.standing,
                                             changed_at=event.occurred_at)
        statement = statement.on_conflict_do_update(
            index_elements=[standings.c.business_id],
            set_={"standing": statement.excluded.standing, "changed_at": statement.excluded.changed_at},
            where=standings.c.changed_at <= statement.excluded.changed_at)
        async with self.db.transaction() as conn:
            await conn.execute(statement)
