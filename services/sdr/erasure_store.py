"""Where erasing a person (services.sdr.erasure) finds and removes what this service holds of them: the queries, each
over one business and at most `limit` rows (a step of the erasure is one transaction over one batch), and
`SqlErasure`, the repository on a unit of work's handle (`SdrUnit.erasure`). SQL only, like the pipeline's: the
erasure's tests run on the stack (tests/service/test_sdr_erasure.py); its rules are plain functions in erasure.py.

The person is matched exactly: phones in E.164 and emails in lower case, as every writer here stores them (leads,
bookings, run touches: core.contact), lead ids of the business. The outbox and the briefings are matched on their
text (`strpos`, no pattern characters to escape), a wide net: erasure.py's rules decide, field by field, what of a
candidate names the person."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection

from contracts import runs as runs_contract
from core.columns import Uuid
from services.sdr.schema import activity, attempts, bookings, briefings, interactions, jobs, leads, outbox, voicemails


def _any(values: Sequence[str], type_: Any = sa.Text) -> Any:
    """`= ANY(:values)` operand: one bound array, whatever its length."""
    return sa.func.any(sa.literal(list(values), ARRAY(type_)))


def _mentions(column: sa.ColumnElement[Any], needles: Sequence[str]) -> sa.ColumnElement[bool]:
    """The column's text holds one of the needles (false for none)."""
    text = sa.cast(column, sa.Text)
    return sa.or_(sa.false(), *(sa.func.strpos(text, needle) > 0 for needle in needles))


async def person_leads(conn: AsyncConnection, business_id: str, phones: Sequence[str], emails: Sequence[str],
                       lead_ids: Sequence[str], after: str | None, limit: int) -> list[Any]:
    """The business's leads with one of the phones or emails, or one of the ids: (id, name, first_name, last_name),
    by id after `after`."""
    c = leads.c
    query = sa.select(c.id, c.name, c.first_name, c.last_name).where(
        c.business_id == business_id,
        sa.or_(c.phone == _any(phones), c.email == _any(emails), c.id == _any(lead_ids, Uuid)))
    if after is not None:
        query = query.where(c.id > after)
    return list((await conn.execute(query.order_by(c.id).limit(limit))).all())


async def outbox_candidates(conn: AsyncConnection, business_id: str, needles: Sequence[str], after: int,
                            limit: int) -> list[Any]:
    """The business's outbox rows (id, type, data) after `after` whose data's text holds one of the needles."""
    o = outbox.c
    return list((await conn.execute(sa.select(o.id, o.type, o.data).where(
        o.business_id == business_id, o.id > after, _mentions(o.data, needles)).order_by(o.id).limit(limit))).all())


async def rewrite_outbox(conn: AsyncConnection, rows: Sequence[tuple[int, dict[str, Any]]]) -> None:
    """Replace the data of these outbox rows (id, data); the row's id, event id, type and business stay."""
    for row_id, data in rows:
        await conn.execute(outbox.update().where(outbox.c.id == row_id).values(data=data))


def _touches_of(business_id: str, phones: Sequence[str], lead_ids: Sequence[str]) -> sa.ColumnElement[bool]:
    """The business's touches to these phones, or whose context names one of these leads (context.lead_id)."""
    j = jobs.c
    return sa.and_(j.business_id == business_id,
                   sa.or_(j.phone == _any(phones), j.context["lead_id"].astext == _any(lead_ids)))


async def cancel_touches(conn: AsyncConnection, business_id: str, phones: Sequence[str], lead_ids: Sequence[str],
                         now: datetime, limit: int) -> list[Any]:
    """The business's planned touches to the person, not executed yet (waiting, or paused with their run),
    canceled and redacted (reason "erased"): (run_id, call_id, message_id) of each."""
    j = jobs.c
    picked = sa.select(j.id).where(_touches_of(business_id, phones, lead_ids),
                                   j.status.in_((*runs_contract.WAITING, runs_contract.JOB_PAUSED))).limit(limit)
    statement = jobs.update().where(j.id.in_(picked.with_for_update().scalar_subquery())).values(
        status=runs_contract.JOB_CANCELED, ended_at=now, **_redacted_job(now))
    return list((await conn.execute(statement.returning(j.run_id, j.call_id, j.message_id))).all())


async def redact_touches(conn: AsyncConnection, business_id: str, phones: Sequence[str], lead_ids: Sequence[str],
                         now: datetime, limit: int) -> list[Any]:
    """The business's other touches to the person (executing, in progress or ended) redacted, their status and
    counts kept: (run_id, call_id, message_id) of each."""
    j = jobs.c
    picked = sa.select(j.id).where(_touches_of(business_id, phones, lead_ids)).limit(limit)
    statement = jobs.update().where(j.id.in_(picked.with_for_update().scalar_subquery())).values(
        **_redacted_job(now))
    return list((await conn.execute(statement.returning(j.run_id, j.call_id, j.message_id))).all())


def _redacted_job(now: datetime) -> dict[str, Any]:
    """What a touch keeps of the person: nothing (no number, context or words; its compliance reason named the
    number)."""
    return {"phone": "", "context": {}, "reason": "erased", "updated_at": now}


async def redact_attempts(conn: AsyncConnection, business_id: str, phones: Sequence[str],
                          limit: int) -> list[Any]:
    """The business's call attempts to these phones redacted (number and words), their outcomes kept: (call_id)."""
    a = attempts.c
    picked = sa.select(a.id).where(a.business_id == business_id, a.phone == _any(phones)).limit(limit)
    statement = attempts.update().where(a.id.in_(picked.with_for_update().scalar_subquery())).values(
        phone="", reason=None)
    return list((await conn.execute(statement.returning(a.call_id))).all())


async def delete_bookings(conn: AsyncConnection, business_id: str, lead_ids: Sequence[str], phones: Sequence[str],
                          emails: Sequence[str], limit: int) -> list[Any]:
    """The business's bookings of the person (linked to a lead of theirs, or with their phone or email), deleted:
    (call_id) of each."""
    b = bookings.c
    picked = sa.select(b.id).where(b.business_id == business_id, sa.or_(
        b.lead_id == _any(lead_ids, Uuid), b.phone_number == _any(phones), b.email == _any(emails))).limit(limit)
    statement = bookings.delete().where(b.id.in_(picked.with_for_update().scalar_subquery()))
    return list((await conn.execute(statement.returning(b.call_id))).all())


async def delete_voicemails(conn: AsyncConnection, business_id: str, lead_ids: Sequence[str],
                            phones: Sequence[str], limit: int) -> list[Any]:
    """The business's voicemails of the person (linked to a lead of theirs, or left from their number), deleted
    with their transcripts and recording links: (call_id) of each."""
    v = voicemails.c
    picked = sa.select(v.id).where(v.business_id == business_id, sa.or_(
        v.lead_id == _any(lead_ids, Uuid), v.from_number == _any(phones))).limit(limit)
    statement = voicemails.delete().where(v.id.in_(picked.with_for_update().scalar_subquery()))
    return list((await conn.execute(statement.returning(v.call_id))).all())


async def briefing_candidates(conn: AsyncConnection, business_id: str, needles: Sequence[str], after: str | None,
                              limit: int) -> list[Any]:
    """The business's briefings (id, needs_owner, text) after `after` (by id) whose escalations or text hold one of
    the needles."""
    b = briefings.c
    query = sa.select(b.id, b.needs_owner, b.text).where(
        b.business_id == business_id, sa.or_(_mentions(b.needs_owner, needles), _mentions(b.text, needles)))
    if after is not None:
        query = query.where(b.id > after)
    return list((await conn.execute(query.order_by(b.id).limit(limit))).all())


async def rewrite_briefing(conn: AsyncConnection, briefing_id: str, needs_owner: list[dict[str, Any]],
                           text: str) -> None:
    await conn.execute(briefings.update().where(briefings.c.id == briefing_id).values(
        needs_owner=needs_owner, text=text))


async def delete_interactions(conn: AsyncConnection, business_id: str, lead_ids: Sequence[str],
                              limit: int) -> list[Any]:
    """Interactions with these leads of the business, deleted: (channel, reference) of each."""
    i = interactions.c
    picked = sa.select(i.id).where(i.business_id == business_id, i.lead_id == _any(lead_ids, Uuid)).limit(limit)
    statement = interactions.delete().where(i.id.in_(picked.scalar_subquery()))
    return list((await conn.execute(statement.returning(i.channel, i.reference))).all())


async def delete_activity(conn: AsyncConnection, business_id: str, lead_ids: Sequence[str], limit: int) -> int:
    """The pipeline's activity entries of these leads of the business, deleted: how many."""
    a = activity.c
    picked = sa.select(a.id).where(a.business_id == business_id, a.lead_id == _any(lead_ids, Uuid)).limit(limit)
    result = await conn.execute(activity.delete().where(a.id.in_(picked.scalar_subquery())))
    return int(result.rowcount)


async def delete_leads(conn: AsyncConnection, business_id: str, lead_ids: Sequence[str]) -> int:
    """These leads of the business, deleted (what still names them cascades): how many."""
    result = await conn.execute(leads.delete().where(leads.c.business_id == business_id,
                                                     leads.c.id == _any(lead_ids, Uuid)))
    return int(result.rowcount)


async def business_people(conn: AsyncConnection, business_id: str,
                          limit: int) -> tuple[list[str], list[str], list[str], bool]:
    """Up to `limit` of each kind of the business's records naming a person (leads; bookings, voicemails, run touches
    and call attempts with a number or address of their own): (lead ids, phones, emails, whether a kind had `limit`:
    there may be more). A torn-down business's deletion erases them as people."""
    c, b, v, j, a = leads.c, bookings.c, voicemails.c, jobs.c, attempts.c
    found = [
        (await conn.execute(sa.select(c.id, c.phone, c.email).where(c.business_id == business_id)
                            .order_by(c.id).limit(limit))).all(),
        (await conn.execute(sa.select(b.id, b.phone_number, b.email).where(b.business_id == business_id)
                            .order_by(b.id).limit(limit))).all(),
        (await conn.execute(sa.select(v.id, v.from_number, sa.null()).where(
            v.business_id == business_id, v.from_number.is_not(None)).order_by(v.id).limit(limit))).all(),
        (await conn.execute(sa.select(j.id, j.phone, sa.null()).where(
            j.business_id == business_id, j.phone != "").order_by(j.id).limit(limit))).all(),
        (await conn.execute(sa.select(a.id, a.phone, sa.null()).where(
            a.business_id == business_id, a.phone != "").order_by(a.id).limit(limit))).all()]
    lead_ids = [str(row[0]) for row in found[0]]
    phones = list(dict.fromkeys(row[1] for rows in found for row in rows if row[1]))
    emails = list(dict.fromkeys(row[2].lower() for rows in found for row in rows if row[2]))
    return lead_ids, phones, emails, any(len(rows) >= limit for rows in found)


class SqlErasure:
    """The erasure's repository on a unit of work's connection (core.uow.Database), over the queries above."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def business_people(self, business_id: str,
                              limit: int) -> tuple[list[str], list[str], list[str], bool]:
        return await business_people(self.conn, business_id, limit)

    async def person_leads(self, business_id: str, phones: Sequence[str], emails: Sequence[str],
                           lead_ids: Sequence[str], after: str | None, limit: int) -> list[Any]:
        return await person_leads(self.conn, business_id, phones, emails, lead_ids, after, limit)

    async def outbox_candidates(self, business_id: str, needles: Sequence[str], after: int,
                                limit: int) -> list[Any]:
        return await outbox_candidates(self.conn, business_id, needles, after, limit)

    async def rewrite_outbox(self, rows: Sequence[tuple[int, dict[str, Any]]]) -> None:
        await rewrite_outbox(self.conn, rows)

    async def cancel_touches(self, business_id: str, phones: Sequence[str], lead_ids: Sequence[str], now: datetime,
                             limit: int) -> list[Any]:
        return await cancel_touches(self.conn, business_id, phones, lead_ids, now, limit)

    async def redact_touches(self, business_id: str, phones: Sequence[str], lead_ids: Sequence[str], now: datetime,
                             limit: int) -> list[Any]:
        return await redact_touches(self.conn, business_id, phones, lead_ids, now, limit)

    async def redact_attempts(self, business_id: str, phones: Sequence[str], limit: int) -> list[Any]:
        return await redact_attempts(self.conn, business_id, phones, limit)

    async def delete_bookings(self, business_id: str, lead_ids: Sequence[str], phones: Sequence[str],
                              emails: Sequence[str], limit: int) -> list[Any]:
        return await delete_bookings(self.conn, business_id, lead_ids, phones, emails, limit)

    async def delete_voicemails(self, business_id: str, lead_ids: Sequence[str], phones: Sequence[str],
                                limit: int) -> list[Any]:
        return await delete_voicemails(self.conn, business_id, lead_ids, phones, limit)

    async def briefing_candidates(self, business_id: str, needles: Sequence[str], after: str | None,
                                  limit: int) -> list[Any]:
        return await briefing_candidates(self.conn, business_id, needles, after, limit)

    async def rewrite_briefing(self, briefing_id: str, needs_owner: list[dict[str, Any]], text: str) -> None:
        await rewrite_briefing(self.conn, briefing_id, needs_owner, text)

    async def delete_interactions(self, business_id: str, lead_ids: Sequence[str], limit: int) -> list[Any]:
        return await delete_interactions(self.conn, business_id, lead_ids, limit)

    async def delete_activity(self, business_id: str, lead_ids: Sequence[str], limit: int) -> int:
        return await delete_activity(self.conn, business_id, lead_ids, limit)

    async def delete_leads(self, business_id: str, lead_ids: Sequence[str]) -> int:
        return await delete_leads(self.conn, business_id, lead_ids)
