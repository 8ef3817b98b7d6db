"""The businesses held from scheduled outreach (services.sdr.held_businesses records their standings), as a
condition the stores' queries of due work take (runs_store, pipeline_store)."""
from __future__ import annotations

import sqlalchemy as sa

from core import standing
from services.sdr.schema import standings


def not_held(business_id: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """A condition on a query's business id column: the business is not held."""
    return ~sa.exists().where(standings.c.business_id == business_id, standings.c.standing.in_(standing.HELD))
