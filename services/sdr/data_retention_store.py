"""Where the retention a business set (services.sdr.data_retention) finds what is past it in the sdr service and
deletes it: the queries, each over one business and at most `limit` rows taken (FOR UPDATE SKIP LOCKED: a round
running at the same time takes others), and `SqlDataRetention`, the repository on a unit of work's handle
(`SdrUnit.data_retention`). SQL only, like the erasure's: its tests run on the stack."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from contracts import runs as runs_contract
from services.sdr.schema import HAS_BODY, jobs, voicemails


async def _cleared(conn: AsyncConnection, table: sa.Table, picked: sa.Select[Any], values: dict[str, Any],
                   limit: int) -> tuple[int, bool]:
    """The first `limit` rows `picked` (their ids, one more than `limit` asked for, locked) changed with `values`:
    how many, and whether there were more."""
    ids = list((await conn.execute(picked)).scalars())
    if not ids:
        return 0, False
    changed = await conn.execute(table.update().where(table.c.id.in_(ids[:limit])).values(values))
    return int(changed.rowcount), len(ids) > limit


def _oldest(table: sa.Table, ordered_by: sa.ColumnElement[Any], limit: int, *where: Any) -> sa.Select[Any]:
    return sa.select(table.c.id).where(*where).order_by(ordered_by, table.c.id).limit(limit + 1) \
        .with_for_update(skip_locked=True)


async def forget_transcripts(conn: AsyncConnection, business_id: str, before: datetime,
                             limit: int) -> tuple[int, bool]:
    """Up to `limit` of the business's voicemails received before `before`: their transcripts deleted."""
    v = voicemails.c
    return await _cleared(conn, voicemails, _oldest(voicemails, v.received_at, limit, v.business_id == business_id,
                                                    v.transcript.isnot(None), v.received_at < before),
                          {"transcript": None}, limit)


async def forget_recordings(conn: AsyncConnection, business_id: str, before: datetime,
                            limit: int) -> tuple[int, bool]:
    """Up to `limit` of the business's voicemails received before `before`: their recording links deleted."""
    v = voicemails.c
    return await _cleared(conn, voicemails, _oldest(voicemails, v.received_at, limit, v.business_id == business_id,
                                                    v.recording_url.isnot(None), v.received_at < before),
                          {"recording_url": None}, limit)


async def forget_touch_bodies(conn: AsyncConnection, business_id: str, before: datetime,
                              limit: int) -> tuple[int, bool]:
    """Up to `limit` of the business's text touches that ended before `before`: the text's words (their context's
    body) deleted, the rest of the context kept."""
    j = jobs.c
    return await _cleared(conn, jobs, _oldest(jobs, j.ended_at, limit, j.business_id == business_id, HAS_BODY,
                                              j.ended_at.isnot(None), j.ended_at < before,
                                              j.status.in_(runs_contract.JOB_ENDS)),
                          {"context": j.context.op("-", return_type=JSONB)(sa.literal("body", sa.Text))}, limit)


class SqlDataRetention:
    """The retention's statements on a unit of work's connection: each deletes up to `limit` records past
    `before` and answers how many, and whether more are past it."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def transcripts(self, business_id: str, before: datetime, limit: int) -> tuple[int, bool]:
        return await forget_transcripts(self.conn, business_id, before, limit)

    async def recordings(self, business_id: str, before: datetime, limit: int) -> tuple[int, bool]:
        return await forget_recordings(self.conn, business_id, before, limit)

    async def touch_bodies(self, business_id: str, before: datetime, limit: int) -> tuple[int, bool]:
        return await forget_touch_bodies(self.conn, business_id, before, limit)
