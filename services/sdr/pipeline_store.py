"""Tables of the sales pipeline (each business's SDR config, and the activity log of its touches and choices) and
the queries on them, each taking a connection. The pipeline's counters of a lead (touch_count, last_touch_at,
paused) are columns of the leads table (services.sdr.store)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core.columns import Ts, Uuid
from core.db import lock_until_commit
from core.ids import new_id
from services.sdr.schema import SIGNAL_COLUMNS, activity, briefings, configs, leads, not_held, windows


async def config_of(conn: AsyncConnection, business_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(configs).where(configs.c.business_id == business_id))).first()


async def save_config(conn: AsyncConnection, business_id: str, values: dict[str, Any],
                      now: datetime) -> sa.Row[Any] | None:
    statement = insert(configs).values(business_id=business_id, **values, updated_at=now)
    statement = statement.on_conflict_do_update(index_elements=[configs.c.business_id],
                                                set_={**values, "updated_at": now})
    row: sa.Row[Any] | None = (await conn.execute(statement.returning(configs))).first()
    return row


# -- touches and the activity log ----------------------------------------------------------------------------

async def lock_lead(conn: AsyncConnection, business_id: str, lead_id: str) -> sa.Row[Any] | None:
    """The business's lead, locked for a touch or a pause (None when the business has no such lead)."""
    return (await conn.execute(sa.select(leads).where(leads.c.id == lead_id, leads.c.business_id == business_id)
                               .with_for_update())).first()


async def latest_done(conn: AsyncConnection, lead_id: str, action: str, since: datetime) -> sa.Row[Any] | None:
    """The lead's latest completed `action` since `since` (a retried request finds it), or None."""
    a = activity.c
    return (await conn.execute(sa.select(activity).where(
        a.lead_id == lead_id, a.action == action, a.status == "done", a.created_at >= since)
        .order_by(a.created_at.desc()).limit(1))).first()


async def touch_pending(conn: AsyncConnection, lead_id: str) -> sa.Row[Any] | None:
    """The lead's touch being made (a pending entry), or None."""
    a = activity.c
    return (await conn.execute(sa.select(activity).where(a.lead_id == lead_id, a.status == "pending"))).first()


async def add_activity(conn: AsyncConnection, **values: Any) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(activity.insert().values(**values).returning(activity))).first()
    return row


async def finish_activity(conn: AsyncConnection, activity_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(activity.update().where(activity.c.id == activity_id).values(**values)
                                                  .returning(activity))).first()
    return row


async def count_touch(conn: AsyncConnection, lead_id: str, now: datetime) -> None:
    await conn.execute(leads.update().where(leads.c.id == lead_id).values(
        touch_count=leads.c.touch_count + 1, last_touch_at=now, updated_at=now))


async def set_paused(conn: AsyncConnection, lead_id: str, paused: bool, now: datetime) -> None:
    await conn.execute(leads.update().where(leads.c.id == lead_id).values(paused=paused, updated_at=now))


def activity_of_business(business_id: str) -> sa.Select[Any]:
    return sa.select(activity).where(activity.c.business_id == business_id)


def activity_of(business_id: str, lead_id: str | None, limit: int) -> sa.Select[Any]:
    query = activity_of_business(business_id)
    if lead_id:
        query = query.where(activity.c.lead_id == lead_id)
    return query.order_by(activity.c.created_at.desc(), activity.c.id.desc()).limit(limit)


# -- each lead's stored segment and next action -----------------------------------------------------------------

# The lead columns the segment and next action read, in the order of pipeline_domain.Signals's fields (rows are
# turned into signals by position: by name is most of the time at 100,000 leads); then what a pipeline lead shows,
# the state the compliance decision places a callee by (and its converted_at, an exemption from the national
# registry), and the stored segment.
SHOWN_COLUMNS = ("id", "business_id", "name", "first_name", "last_name", "state", "converted_at", "score",
                 "pipeline_segment")


def pipeline_leads(business_id: str) -> sa.Select[Any]:
    """The business's leads with the columns the pipeline reads."""
    return sa.select(*(leads.c[name] for name in (*SIGNAL_COLUMNS, *SHOWN_COLUMNS))).where(
        leads.c.business_id == business_id)


def hottest_first(query: sa.Select[Any]) -> sa.Select[Any]:
    """In the pipeline's order: by segment, then the highest score and the newest (leads_business_pipeline)."""
    return query.order_by(leads.c.pipeline_segment, leads.c.score.desc(), leads.c.created_at.desc(),
                          leads.c.id.desc())


async def any_due(conn: AsyncConnection, business_id: str, now: datetime) -> bool:
    """Whether a lead's stored segment and next action are due for computing: its signals changed, the clock
    passed its pipeline_until, or the config changed (make_all_due)."""
    return bool(await conn.scalar(sa.select(sa.exists().where(leads.c.business_id == business_id,
                                                              leads.c.pipeline_until <= now))))


async def lock_pipeline(conn: AsyncConnection, business_id: str) -> None:
    """Serializes computing a business's stored pipeline with a config change that makes it all due, so neither
    stores values computed with a config the other just replaced."""
    await lock_until_commit(conn, "sdr-pipeline", business_id)


async def due_leads(conn: AsyncConnection, business_id: str, now: datetime) -> list[sa.Row[Any]]:
    """The leads due for computing, each with the stamp of the signals read (store_computed writes against it)."""
    return list((await conn.execute(pipeline_leads(business_id).add_columns(leads.c.pipeline_stamp).where(
        leads.c.pipeline_until <= now))).all())


_STORE_COMPUTED = sa.text("""
    UPDATE sdr.leads l SET pipeline_segment = v.segment, pipeline_next = v.next,
                           pipeline_until = COALESCE(v.until, 'infinity')
    FROM unnest(:ids, :stamps, :segments, :nexts, :untils) AS v(id, stamp, segment, next, until)
    WHERE l.id = v.id AND l.pipeline_stamp = v.stamp
""").bindparams(sa.bindparam("ids", type_=ARRAY(Uuid)), sa.bindparam("stamps", type_=ARRAY(sa.BigInteger)),
                sa.bindparam("segments", type_=ARRAY(sa.SmallInteger)), sa.bindparam("nexts", type_=ARRAY(sa.Text)),
                sa.bindparam("untils", type_=ARRAY(Ts)))


async def store_computed(conn: AsyncConnection, computed: list[tuple[Any, ...]]) -> None:
    """Store (id, stamp, segment rank, next action, until or None for never) of each lead whose signals are still
    those it was computed from (its pipeline_stamp did not move)."""
    if computed:
        ids, stamps, segments, nexts, untils = (list(column) for column in zip(*computed, strict=True))
        await conn.execute(_STORE_COMPUTED, {"ids": ids, "stamps": stamps, "segments": segments, "nexts": nexts,
                                             "untils": untils})


async def make_all_due(conn: AsyncConnection, business_id: str) -> None:
    """After a config change that moves segments or next actions: every lead of the business is due, and a result
    computed before it is not stored."""
    await conn.execute(leads.update().where(leads.c.business_id == business_id).values(
        pipeline_until=sa.text("'epoch'"), pipeline_stamp=leads.c.pipeline_stamp + 1))


async def next_action_counts(conn: AsyncConnection, business_id: str) -> dict[str | None, int]:
    """How many of the business's leads have each stored next action (index-only: leads_business_pipeline_next)."""
    rows = await conn.execute(sa.select(leads.c.pipeline_next, sa.func.count()).where(
        leads.c.business_id == business_id).group_by(leads.c.pipeline_next))
    return dict(rows.all())


# -- the scheduled runner -------------------------------------------------------------------------------------

async def businesses_due(conn: AsyncConnection, window_start: datetime, business_id: str | None) -> list[str]:
    """Businesses in good standing with SDR enabled whose run of this window has not completed (or only
    `business_id`)."""
    finished = sa.exists().where(windows.c.business_id == configs.c.business_id,
                                 windows.c.window_start == window_start, windows.c.status == "completed")
    query = sa.select(configs.c.business_id).where(configs.c.enabled, ~finished, not_held(configs.c.business_id)) \
        .order_by(configs.c.business_id)
    if business_id:
        query = query.where(configs.c.business_id == business_id)
    return [str(b) for b in (await conn.scalars(query))]


async def claim_window(conn: AsyncConnection, business_id: str, window_start: datetime, token: str,
                       lease_until: datetime, now: datetime) -> sa.Row[Any] | None:
    """The business's run of this window, claimed for `token`: new, or taken over from a runner whose lease ran
    out (attempts counts them); None while another runner holds it or once it completed."""
    w = windows.c
    statement = insert(windows).values(id=new_id(), business_id=business_id, window_start=window_start,
                                       status="running", lease_token=token, lease_until=lease_until, started_at=now)
    statement = statement.on_conflict_do_update(
        constraint="runner_windows_once", set_={"lease_token": token, "lease_until": lease_until,
                                                "attempts": w.attempts + 1},
        where=sa.and_(w.status == "running", w.lease_until < now))
    row: sa.Row[Any] | None = (await conn.execute(statement.returning(windows))).first()
    return row


async def leads_worked(conn: AsyncConnection, window_id: str) -> frozenset[str]:
    """The leads a run of this window already acted on (a runner that takes over does not touch them again)."""
    rows = await conn.scalars(sa.select(activity.c.lead_id).where(activity.c.window_id == window_id).distinct())
    return frozenset(str(r) for r in rows)


async def complete_window(conn: AsyncConnection, window_id: str, token: str, now: datetime) -> bool:
    """Mark the run completed if `token` still holds it."""
    done = await conn.execute(windows.update().where(windows.c.id == window_id, windows.c.lease_token == token)
                              .values(status="completed", lease_token=None, lease_until=None, ended_at=now)
                              .returning(windows.c.id))
    return done.first() is not None


async def add_briefing(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(briefings.insert().values(**values))


# -- the report -----------------------------------------------------------------------------------------------

async def activity_counts(conn: AsyncConnection, business_id: str, since: datetime) -> list[sa.Row[Any]]:
    """(action, status, count) of the business's activity since `since`."""
    a = activity.c
    return list((await conn.execute(sa.select(a.action, a.status, sa.func.count().label("count")).where(
        a.business_id == business_id, a.created_at >= since).group_by(a.action, a.status))).all())


async def new_leads(conn: AsyncConnection, business_id: str, since: datetime) -> int:
    return await conn.scalar(sa.select(sa.func.count()).select_from(leads).where(
        leads.c.business_id == business_id, leads.c.created_at >= since)) or 0
