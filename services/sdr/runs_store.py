"""Tables of communication runs (runs, their jobs, call attempts) and the queries on them, each taking a connection.

The scheduler claims due jobs under leases (core.leases columns): a claim is one UPDATE over rows picked with
`FOR UPDATE SKIP LOCKED`, so replicas never claim the same job, and a job whose scheduler died is claimable again
once its lease runs out. Claims of one business are serialized by an advisory lock, so the count of its calls in
flight (the concurrency limit) is exact across replicas.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from contracts import runs as runs_contract
from core.db import lock_until_commit
from core.leases import free
from services.sdr.schema import attempts, configs, jobs, not_held, runs

OPEN_RUN = runs.c.status.in_(runs_contract.RUN_ACTIVE)
_claimable = sa.or_(sa.and_(jobs.c.status.in_(runs_contract.WAITING), jobs.c.due_at <= sa.func.now()),
                    sa.and_(jobs.c.status == runs_contract.EXECUTING, free(jobs)))


# -- runs -----------------------------------------------------------------------------------------------------

async def insert_run(conn: AsyncConnection, **values: Any) -> sa.Row[Any] | None:
    """The new run, or None when the business already has a run with this Idempotency-Key."""
    statement = insert(runs).values(**values).on_conflict_do_nothing(constraint="communication_runs_idempotency")
    row: sa.Row[Any] | None = (await conn.execute(statement.returning(runs))).first()
    return row


async def run_by_key(conn: AsyncConnection, business_id: str, key: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(runs).where(runs.c.business_id == business_id,
                                                     runs.c.idempotency_key == key))).first()


async def insert_jobs(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    await conn.execute(jobs.insert(), rows)


def runs_of(business_ids: Iterable[str], run_id: str | None = None, external_ref: str | None = None) -> sa.Select[Any]:
    query = sa.select(runs).where(runs.c.business_id.in_(business_ids))
    if run_id:
        query = query.where(runs.c.id == run_id)
    if external_ref:
        query = query.where(runs.c.external_ref == external_ref)
    return query


async def job_counts(conn: AsyncConnection, run_ids: list[str]) -> dict[str, dict[str, int]]:
    """Per run, its jobs by status."""
    rows = await conn.execute(sa.select(jobs.c.run_id, jobs.c.status, sa.func.count()).where(
        jobs.c.run_id.in_(run_ids)).group_by(jobs.c.run_id, jobs.c.status))
    counts: dict[str, dict[str, int]] = {}
    for run_id, status, n in rows:
        counts.setdefault(str(run_id), {})[status] = n
    return counts


async def lock_run(conn: AsyncConnection, run_id: str, business_ids: Iterable[str]) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(runs).where(runs.c.id == run_id, runs.c.business_id.in_(business_ids))
                               .with_for_update())).first()


async def update_run(conn: AsyncConnection, run_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(runs.update().where(runs.c.id == run_id).values(**values)
                                                  .returning(runs))).first()
    return row


async def move_jobs(conn: AsyncConnection, run_id: str, sources: tuple[str, ...], values: dict[str, Any]) -> int:
    result = await conn.execute(jobs.update().where(jobs.c.run_id == run_id, jobs.c.status.in_(sources))
                                .values(**values))
    return result.rowcount


async def end_run_if_done(conn: AsyncConnection, run_id: str, now: datetime) -> sa.Row[Any] | None:
    """Mark an active run completed when none of its jobs is left to end; the run, or None. Serialized per run (an
    advisory lock, so no row lock is taken against a PATCH of the run): two schedulers ending its last two jobs at
    once each see the other's job unfinished until it commits, so the second to take the lock looks again, in a
    statement of its own, and completes the run."""
    await lock_until_commit(conn, "run-end", run_id)
    unfinished = sa.exists().where(jobs.c.run_id == run_id, jobs.c.status.not_in(runs_contract.JOB_ENDS))
    ended = runs.update().where(runs.c.id == run_id, OPEN_RUN, ~unfinished).values(
        status=runs_contract.COMPLETED, ended_at=now, updated_at=now)
    row: sa.Row[Any] | None = (await conn.execute(ended.returning(runs))).first()
    return row


# -- jobs -----------------------------------------------------------------------------------------------------

def jobs_of(business_ids: Iterable[str], run_id: str | None, channel: str | None, status: str | None,
            job_id: str | None = None) -> sa.Select[Any]:
    query = sa.select(jobs, runs.c.external_ref).join(runs, runs.c.id == jobs.c.run_id).where(
        jobs.c.business_id.in_(business_ids))
    for column, value in ((jobs.c.run_id, run_id), (jobs.c.channel, channel), (jobs.c.status, status),
                          (jobs.c.id, job_id)):
        if value:
            query = query.where(column == value)
    return query


async def due_businesses(conn: AsyncConnection, limit: int) -> list[str]:
    """Businesses in good standing with a job to claim now (in an active run), the longest waiting first."""
    oldest = sa.select(jobs.c.business_id, sa.func.min(jobs.c.due_at).label("due")).join(
        runs, runs.c.id == jobs.c.run_id).where(_claimable, OPEN_RUN, not_held(jobs.c.business_id)).group_by(
        jobs.c.business_id)
    rows = await conn.execute(oldest.order_by("due").limit(limit))
    return [str(r.business_id) for r in rows]


async def lock_business(conn: AsyncConnection, business_id: str) -> None:
    """Serializes claiming a business's jobs (its calls in flight are counted under it)."""
    await lock_until_commit(conn, "communication-runs", business_id)


async def calls_in_flight(conn: AsyncConnection, business_id: str) -> int:
    return await conn.scalar(sa.select(sa.func.count()).select_from(jobs).where(
        jobs.c.business_id == business_id, jobs.c.channel == "call",
        jobs.c.status.in_((runs_contract.EXECUTING, runs_contract.IN_PROGRESS)))) or 0


async def claim(conn: AsyncConnection, business_id: str, channel: str, limit: int, token: str,
                lease: timedelta) -> list[sa.Row[Any]]:
    """Claim up to `limit` due jobs of a business on one channel, earliest due first; each with its run's account,
    external_ref, retry policy, whether a touch of the run was claimed before, and the business's own calling
    hours (business_hours_start/end, None when it saved no SDR config)."""
    if limit <= 0:
        return []
    picked = sa.select(jobs.c.id).join(runs, runs.c.id == jobs.c.run_id).where(
        jobs.c.business_id == business_id, jobs.c.channel == channel, _claimable, OPEN_RUN,
    ).order_by(jobs.c.due_at).limit(limit).with_for_update(of=jobs, skip_locked=True)
    statement = jobs.update().where(jobs.c.id.in_(picked.scalar_subquery()), jobs.c.run_id == runs.c.id).values(
        status=runs_contract.EXECUTING, lease_token=token, lease_until=sa.func.now() + lease, updated_at=sa.func.now(),
    ).returning(*jobs.c, runs.c.account_id, runs.c.external_ref, runs.c.retry, runs.c.status.label("run_status"),
                *(_saved_config(column) for column in ("business_hours_start", "business_hours_end")))
    return list((await conn.execute(statement)).all())


def _saved_config(column: str) -> sa.Label[Any]:
    """A column of the business's saved SDR config (NULL when it saved none), for a claimed job to carry."""
    return sa.select(configs.c[column]).where(configs.c.business_id == jobs.c.business_id).scalar_subquery() \
        .label(column)


async def start_runs(conn: AsyncConnection, run_ids: set[str], now: datetime) -> None:
    await conn.execute(runs.update().where(runs.c.id.in_(run_ids), runs.c.status == runs_contract.SCHEDULED)
                       .values(status=runs_contract.RUNNING, started_at=now, updated_at=now))


async def settle_job(conn: AsyncConnection, job_id: str, token: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    """Write a claimed job's result if the claim is still ours (its lease did not run out to another
    scheduler); the job, or None."""
    statement = jobs.update().where(jobs.c.id == job_id, jobs.c.lease_token == token).values(
        **values, lease_token=None, lease_until=None)
    row: sa.Row[Any] | None = (await conn.execute(statement.returning(jobs))).first()
    return row


async def add_attempt(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(attempts).values(**values).on_conflict_do_nothing(
        constraint="communication_attempts_once"))


# -- outcomes of calls ----------------------------------------------------------------------------------------

async def jobs_of_touches(conn: AsyncConnection, touches: list[tuple[str, str, str]]) -> list[sa.Row[Any]]:
    """The jobs of these touches, each (business_id, external_ref, touch_id), with their runs' retry policies and
    states, locked in job order (so concurrent batches cannot deadlock)."""
    query = sa.select(jobs, runs.c.external_ref, runs.c.retry, runs.c.status.label("run_status")).join(
        runs, runs.c.id == jobs.c.run_id).where(
        sa.tuple_(runs.c.business_id, runs.c.external_ref, jobs.c.touch_id).in_(touches)).order_by(
        jobs.c.id).with_for_update(of=jobs)
    return list((await conn.execute(query)).all())


async def attempts_of_calls(conn: AsyncConnection, call_ids: list[str]) -> dict[str, Any]:
    """The attempts of these calls (those recorded yet), by call id."""
    rows = await conn.execute(sa.select(attempts).where(attempts.c.call_id.in_(call_ids)))
    return {str(r.call_id): r for r in rows}


async def end_attempt(conn: AsyncConnection, attempt_id: str, values: dict[str, Any]) -> None:
    await conn.execute(attempts.update().where(attempts.c.id == attempt_id).values(**values))


async def update_job(conn: AsyncConnection, job_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(jobs.update().where(jobs.c.id == job_id).values(**values)
                                                  .returning(jobs))).first()
    return row


def attempts_of(business_ids: Iterable[str], run_id: str | None, status: str | None) -> sa.Select[Any]:
    query = sa.select(attempts, jobs.c.touch_id, runs.c.external_ref).select_from(
        attempts.join(jobs, jobs.c.id == attempts.c.job_id).join(runs, runs.c.id == attempts.c.run_id)).where(
        attempts.c.business_id.in_(business_ids))
    if run_id:
        query = query.where(attempts.c.run_id == run_id)
    if status:
        query = query.where(attempts.c.status == status)
    return query
