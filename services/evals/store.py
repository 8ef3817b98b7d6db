"""The queries on the evals schema's tables (schema.py); the repositories alone call them."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from services.evals.schema import runs, scenarios

LIST_COLUMNS = [c for c in scenarios.c if c.name not in ("messages", "lease_token", "lease_until")]


def scenarios_of(business_ids: Iterable[str], agent_id: str | None) -> sa.Select[Any]:
    """The scenarios (without their turns) in the caller's businesses, of one agent when given."""
    query = sa.select(*LIST_COLUMNS).where(scenarios.c.business_id.in_(business_ids))
    return query.where(scenarios.c.agent_id == agent_id) if agent_id else query


def whole_scenarios_of(business_id: str) -> sa.Select[Any]:
    """The business's scenarios with their turns."""
    return sa.select(scenarios).where(scenarios.c.business_id == business_id)


def runs_of_business(business_id: str) -> sa.Select[Any]:
    return sa.select(runs).where(runs.c.business_id == business_id)


async def scenario(conn: AsyncConnection, business_ids: Iterable[str], scenario_id: str) -> Any | None:
    return (await conn.execute(sa.select(scenarios).where(scenarios.c.id == scenario_id,
                                                          scenarios.c.business_id.in_(business_ids)))).first()


async def insert_scenario(conn: AsyncConnection, **values: Any) -> Any:
    return (await conn.execute(scenarios.insert().values(**values).returning(scenarios))).first()


def runs_of_agent(business_ids: Iterable[str], agent_id: str, limit: int) -> sa.Select[Any]:
    return (sa.select(runs).where(runs.c.business_id.in_(business_ids), runs.c.agent_id == agent_id)
            .order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(limit))


async def run_by(conn: AsyncConnection, business_ids: Iterable[str], *, run_id: str | None = None,
                 provider_run_id: str | None = None) -> Any | None:
    column, value = (runs.c.id, run_id) if run_id else (runs.c.provider_run_id, provider_run_id)
    return (await conn.execute(sa.select(runs).where(column == value, runs.c.business_id.in_(business_ids)))).first()


async def runs_by_ids(conn: AsyncConnection, run_ids: list[str]) -> list[Any]:
    rows = {str(r.id): r for r in (await conn.execute(sa.select(runs).where(runs.c.id.in_(run_ids)))).all()}
    return [rows[i] for i in run_ids]


async def record_run(conn: AsyncConnection, run_id: str, values: dict[str, Any], holder: str | None) -> Any | None:
    """Write a run's progress unless it has ended already (an ended run's results never change), and, with a
    `holder`, only while the run's lease is still the holder's."""
    guard = [runs.c.id == run_id, runs.c.status != "ended"] + ([leases.held(runs, holder)] if holder else [])
    return (await conn.execute(runs.update().where(*guard).values(**values).returning(runs))).first()


async def claim_runs(conn: AsyncConnection, holder: str, lease: timedelta, limit: int) -> list[str]:
    """Lease to `holder` up to `limit` unfinished runs nobody holds (never leased, released or run out), oldest
    first; their ids. `SKIP LOCKED`: replicas claiming at once never take the same run."""
    free = (sa.select(runs.c.id).where(runs.c.status != "ended", leases.free(runs)).order_by(runs.c.created_at)
            .limit(limit).with_for_update(skip_locked=True))
    claimed = (runs.update().where(runs.c.id.in_(free.scalar_subquery()))
               .values(lease_token=holder, lease_until=sa.func.now() + lease).returning(runs.c.id))
    return [str(run_id) for run_id in (await conn.execute(claimed)).scalars()]


async def renew_runs(conn: AsyncConnection, holder: str, run_ids: list[str], lease: timedelta) -> None:
    await conn.execute(runs.update().where(runs.c.id.in_(run_ids), runs.c.status != "ended",
                                           leases.held(runs, holder))
                       .values(lease_until=sa.func.now() + lease))


async def release_runs(conn: AsyncConnection, holder: str) -> None:
    await conn.execute(runs.update().where(runs.c.status != "ended", leases.held(runs, holder))
                       .values(**leases.RELEASED))


async def provider_runs_recorded(conn: AsyncConnection, provider_run_ids: list[str]) -> set[str]:
    return set((await conn.execute(sa.select(runs.c.provider_run_id)
                                   .where(runs.c.provider_run_id.in_(provider_run_ids)))).scalars())


def scenarios_for_runs(business_ids: Iterable[str], agent_id: str) -> sa.Select[Any]:
    return (sa.select(scenarios).where(scenarios.c.business_id.in_(business_ids), scenarios.c.agent_id == agent_id)
            .order_by(scenarios.c.created_at))


def unfinished_runs(run_ids: list[str]) -> sa.Select[Any]:
    """These runs if not ended, with their scenario's mirror (None when the scenario is gone)."""
    return (sa.select(runs, scenarios.c.provider_eval_id)
            .select_from(runs.outerjoin(scenarios, scenarios.c.id == runs.c.eval_id))
            .where(runs.c.id.in_(run_ids), runs.c.status != "ended").order_by(runs.c.created_at))


async def leased_scenario_update(conn: AsyncConnection, scenario_id: str, token: str,
                                 values: dict[str, Any]) -> Any | None:
    """The scenario after `values`, or None when its lease is no longer `token`'s."""
    return (await conn.execute(scenarios.update().where(scenarios.c.id == scenario_id, leases.held(scenarios, token))
                               .values(**values).returning(scenarios))).first()


async def delete_leased_scenario(conn: AsyncConnection, scenario_id: str, token: str) -> None:
    await conn.execute(sa.delete(scenarios).where(scenarios.c.id == scenario_id, leases.held(scenarios, token)))


async def add_runs(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    await conn.execute(runs.insert(), rows)
