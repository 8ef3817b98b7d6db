"""The queries on the sdr schema's tables (schema.py), each taking a connection (the lead list: one of the raw pool's);
the repositories alone call them."""
from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, distinct_on, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import aggregates
from core.columns import Uuid
from core.db import Prepared, lock_until_commit
from core.ids import new_id
from core.pagination import Paged, split_page
from services.sdr.domain import LEAD_OUT
from services.sdr.schema import interactions, leads, voicemails

# -- leads --------------------------------------------------------------------------------

PAGE_COLUMNS = [leads.c[name] for name in ("id", "business_id", "status", "source", "score", "score_confidence",
                                             "score_explanation", "score_factors", "interaction_count", "created_at",
                                             "updated_at", "converted_at", "last_inbound_at", "email_known_at",
                                             *LEAD_OUT)]
# List filters: the column each one compares and how.
FILTERS: dict[str, Callable[[sa.ColumnCollection[str, sa.Column[Any]]], sa.ColumnElement[bool]]] = {
    "statuses": lambda c: c.status == sa.func.any(sa.bindparam("statuses", type_=ARRAY(sa.Text))),
    "source": lambda c: c.source == sa.bindparam("source"),
    "agent_id": lambda c: c.agent_id == sa.bindparam("agent_id"),
    "phone": lambda c: c.phone == sa.bindparam("phone"),
    "email": lambda c: c.email == sa.bindparam("email"),
    "created_after": lambda c: c.created_at > sa.bindparam("created_after"),
    "created_before": lambda c: c.created_at < sa.bindparam("created_before"),
    "updated_after": lambda c: c.updated_at > sa.bindparam("updated_after"),
    "updated_before": lambda c: c.updated_at < sa.bindparam("updated_before"),
    "score_gte": lambda c: c.score >= sa.bindparam("score_gte"),
    "score_lte": lambda c: c.score <= sa.bindparam("score_lte"),
    # The page cursor: strictly after (created_at, id) in the newest-first order (core.pagination).
    "cursor_at": lambda c: sa.tuple_(c.created_at, c.id) < sa.tuple_(sa.bindparam("cursor_at"), sa.bindparam("cursor_id")),
}
# Bind values that go with the filters above without being one.
_NOT_FILTERS = {"business_ids", "business_id", "limit", "cursor_id"}


@functools.cache
def _lead_page(filters: frozenset[str], single_business: bool) -> Prepared:
    """The page statement for one combination of filters, compiled once (see core.db.Prepared).
    A key of one business compares business_id with `=`, so the newest-first index order serves the page
    without a sort."""
    c = leads.c
    if single_business:
        mine = c.business_id == sa.bindparam("business_id")
    else:
        mine = c.business_id == sa.func.any(sa.bindparam("business_ids", type_=ARRAY(Uuid)))
    query = sa.select(*PAGE_COLUMNS).where(mine, *(FILTERS[f](c) for f in sorted(filters)))
    return Prepared(query.order_by(c.created_at.desc(), c.id.desc()).limit(sa.bindparam("limit")))


async def lead_page(conn: asyncpg.Connection, business_ids: list[str], limit: int, filters: dict[str, Any]) -> Paged:
    """Newest-first leads of these businesses matching `filters` (keys of FILTERS; `cursor_at` goes with
    `cursor_id`)."""
    statement = _lead_page(frozenset(filters) - _NOT_FILTERS, len(business_ids) == 1)
    rows = await statement.fetch(conn, **filters, business_ids=business_ids,
                                 business_id=business_ids[0] if business_ids else None, limit=limit + 1)
    return split_page(rows, limit, ("created_at", "id"))


async def insert_lead(conn: AsyncConnection, business_id: str, values: dict[str, Any],
                      now: datetime) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(leads.insert().values(
        id=new_id(), business_id=business_id, created_at=now, updated_at=now, **values).returning(leads))).first()
    return row


async def update_lead(conn: AsyncConnection, lead_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(leads.update().where(leads.c.id == lead_id).values(**values)
                                                  .returning(leads))).first()
    return row


async def newest_by_phone(conn: AsyncConnection, business_id: str, phone: str, *,
                          lock: bool = False) -> sa.Row[Any] | None:
    """The business's newest lead with this phone number, or None."""
    query = (sa.select(leads).where(leads.c.business_id == business_id, leads.c.phone == phone)
             .order_by(leads.c.created_at.desc()).limit(1))
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def callees(conn: AsyncConnection, business_id: str, phones: list[str]) -> dict[str, dict[str, Any]]:
    """The business's newest lead of each phone, as the compliance decision reads it: {id, state, status,
    converted_at, last_inbound_at}."""
    c = leads.c
    rows = await conn.execute(sa.select(c.phone, c.id, c.state, c.status, c.converted_at, c.last_inbound_at)
                              .where(c.business_id == business_id, c.phone.in_(phones))
                              .order_by(c.phone, c.created_at.desc()).ext(distinct_on(c.phone)))
    return {r.phone: {"id": str(r.id), "state": r.state, "status": r.status, "converted_at": r.converted_at,
                      "last_inbound_at": r.last_inbound_at} for r in rows}


async def lock_contact(conn: AsyncConnection, business_id: str, phone: str) -> None:
    """Serialise contact upserts of one caller of one business until the transaction ends."""
    await lock_until_commit(conn, "sdr-contact", f"{business_id}:{phone}")


async def insert_interaction(conn: AsyncConnection, lead: Any, channel: str, direction: str, reference: str,
                             intent: str | None, occurred_at: datetime) -> bool:
    """Record an interaction once per (lead, reference); False when it was recorded before."""
    inserted = (await conn.execute(insert(interactions).values(
        lead_id=lead.id, business_id=lead.business_id, channel=channel, direction=direction, reference=reference,
        intent=intent, occurred_at=occurred_at)
        .on_conflict_do_nothing(constraint="interactions_once").returning(interactions.c.id))).first()
    return inserted is not None


# -- the audit ----------------------------------------------------------------------------

Order = tuple[sa.UnaryExpression[Any], ...]  # a sample's order (columns' desc() or asc())


def audit_groups(business_ids: list[str], as_of: datetime, open_statuses: tuple[str, ...], hot: int,
                 quiet_since: datetime, window_start: datetime) -> dict[str, tuple[sa.ColumnElement[bool], Order]]:
    """Each lead group of the audit: its condition and its order."""
    c = leads.c
    mine = c.business_id.in_(business_ids)
    open_ = c.status.in_(open_statuses)
    return {
        "hot_leads": (sa.and_(mine, open_, c.score >= hot, c.created_at <= as_of), (c.score.desc(), c.created_at.desc())),
        "stalled_leads": (sa.and_(mine, open_, c.updated_at < quiet_since, c.last_activity_at < quiet_since),
                          (c.updated_at.asc(),)),
        "signups_today": (sa.and_(mine, c.created_at > window_start, c.created_at <= as_of), (c.created_at.desc(),)),
    }


def unhandled_voicemails(business_ids: list[str], as_of: datetime) -> sa.ColumnElement[bool]:
    """Voicemails received by `as_of` that nobody has called or texted back since."""
    vm, i = voicemails.c, interactions.c
    answered = sa.exists().where(
        i.business_id == vm.business_id, i.direction == "outbound", i.occurred_at > vm.received_at,
        i.lead_id.in_(sa.select(leads.c.id).where(leads.c.business_id == vm.business_id,
                                                  sa.or_(leads.c.id == vm.lead_id, leads.c.phone == vm.from_number))))
    return sa.and_(vm.business_id.in_(business_ids), vm.received_at <= as_of, ~answered)


async def count_and_sample(conn: AsyncConnection, table: sa.Table, where: sa.ColumnElement[bool], order: Order,
                           sample: int) -> tuple[int, list[Any]]:
    """How many rows match, and the first `sample` of them in `order`."""
    count = await conn.scalar(sa.select(sa.func.count()).select_from(table).where(where)) or 0
    rows = (await conn.execute(sa.select(table).where(where).order_by(*order).limit(sample))).all()
    return count, list(rows)


async def insert_voicemail(conn: AsyncConnection, voicemail_id: str, business_id: str, lead_id: str | None,
                           fields: dict[str, Any], received_at: datetime) -> None:
    await conn.execute(voicemails.insert().values(id=voicemail_id, business_id=business_id, lead_id=lead_id,
                                                  **fields, received_at=received_at))



async def aggregate_leads(conn: AsyncConnection, query: aggregates.Query, agent_id: str | None,
                          source: str | None) -> list[sa.Row[Any]]:
    """The leads of the query's businesses created in its window, counted per group (core.aggregates): how many,
    and how many converted; of one agent and/or one source when named."""
    measures = {"count": sa.func.count(), "converted": sa.func.count().filter(leads.c.status == "converted")}
    where = ((leads.c.agent_id == agent_id,) if agent_id else ()) + ((leads.c.source == source,) if source else ())
    return list((await conn.execute(aggregates.aggregate(leads, leads.c.created_at, query, measures, where))).all())
