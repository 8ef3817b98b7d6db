"""Where the eval scenario use cases (service.py) keep scenarios: a repository bound to one unit of work's handle.
It only stores and finds; the rules stay in domain.py and the use cases, which reach it through their unit of work
(`EvalsUnit`).

A scenario's write waits on the provider's mirror, so it holds the scenario's lease (core.leases.hold_with takes
and releases it through the repository); a change or a delete applies only while the lease is the writer's.
`SqlScenarios` is the production one, over store.py; the fast test tier has an in-memory one
(tests/memory/evals.py), and the same behaviour tests run on both (tests/storage_contracts.py). The eval runs
(run_service.py) keep theirs in `RunsRepository` (`SqlRuns`), reached through the same unit. Both return typed
records (records.py), never rows."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.pagination import Page, Paged, fetch_page
from core.records import or_none, record
from core.uow import Unit
from services.evals import store
from services.evals.records import ListedScenario, Run, Scenario, UnfinishedRun
from services.evals.schema import runs, scenarios


class ScenariosRepository(leases.Lessor, Protocol):
    async def add(self, **values: Any) -> Scenario:
        """Record a scenario (schema.scenarios' columns); its row."""

    async def owned(self, business_ids: Iterable[str], scenario_id: str) -> Scenario | None:
        """The scenario with this id in one of these businesses, or None."""

    async def page(self, business_ids: Iterable[str], agent_id: str | None, page: Page) -> Paged:
        """The businesses' scenarios (of one agent when given) as `ListedScenario`s (without their turns and
        lease), newest first."""

    async def whole_page(self, business_id: str, page: Page) -> Paged:
        """The business's scenarios with their turns (`Scenario`s), newest first (a business's export)."""

    async def change_leased(self, scenario_id: str, token: str, values: dict[str, Any]) -> Scenario | None:
        """The scenario after `values`, or None when its lease is no longer `token`'s."""

    async def remove_leased(self, scenario_id: str, token: str) -> None:
        """Delete the scenario if its lease is still `token`'s."""


class SqlScenarios:
    """`ScenariosRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> Scenario:
        return _scenario(await store.insert_scenario(self.conn, **values))

    async def owned(self, business_ids: Iterable[str], scenario_id: str) -> Scenario | None:
        return or_none(_scenario, await store.scenario(self.conn, business_ids, scenario_id))

    async def whole_page(self, business_id: str, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.whole_scenarios_of(business_id), scenarios.c.created_at,
                                 scenarios.c.id, page)).map(_scenario)

    async def page(self, business_ids: Iterable[str], agent_id: str | None, page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.scenarios_of(business_ids, agent_id), scenarios.c.created_at,
                                 scenarios.c.id, page)
        return paged.map(lambda row: record(ListedScenario, row._mapping))

    async def take_lease(self, row_id: Any, duration: timedelta) -> str | None:
        return await leases.take(self.conn, scenarios, row_id, duration)

    async def release_lease(self, row_id: Any, token: str) -> None:
        await leases.release_on(self.conn, scenarios, row_id, token)

    async def change_leased(self, scenario_id: str, token: str, values: dict[str, Any]) -> Scenario | None:
        return or_none(_scenario, await store.leased_scenario_update(self.conn, scenario_id, token, values))

    async def remove_leased(self, scenario_id: str, token: str) -> None:
        await store.delete_leased_scenario(self.conn, scenario_id, token)


class RunsRepository(Protocol):
    async def add(self, rows: list[dict[str, Any]]) -> None:
        """Record runs (schema.runs' columns)."""

    async def page(self, business_id: str, page: Page) -> Paged:
        """The business's runs (`Run`s), newest first (a business's export)."""

    async def by_ids(self, run_ids: list[str]) -> list[Run]:
        """These runs, in this order."""

    async def owned(self, business_ids: Iterable[str], *, run_id: str | None = None,
                    provider_run_id: str | None = None) -> Run | None:
        """The run with this id (or this provider run id) in one of these businesses, or None."""

    async def of_agent(self, business_ids: Iterable[str], agent_id: str, limit: int) -> list[Run]:
        """The agent's `limit` most recent runs, newest first."""

    async def record(self, run_id: str, values: dict[str, Any], holder: str | None = None) -> Run | None:
        """The run after `values`, or None when it had ended already (an ended run's results never change) or,
        with a `holder`, when its lease is no longer the holder's."""

    async def claim(self, holder: str, lease: timedelta, limit: int) -> list[UnfinishedRun]:
        """Up to `limit` unfinished runs nobody holds, leased to `holder` for `lease`, oldest first, with their
        scenario's `provider_eval_id` (None when the scenario is gone). Two claims never take the same run."""

    async def renew(self, holder: str, run_ids: list[str], lease: timedelta) -> None:
        """Extend for `lease` from now the leases `holder` still has on these runs."""

    async def release(self, holder: str) -> None:
        """End every lease `holder` has on unfinished runs (another replica takes them over at once)."""

    async def provider_runs_recorded(self, provider_run_ids: list[str]) -> set[str]:
        """Which of these provider runs a run of ours has recorded."""

    async def scenarios_to_run(self, business_ids: Iterable[str], agent_id: str) -> list[Scenario]:
        """The agent's scenarios (with their turns), oldest first: the ones a fan-out or a gate runs."""


class SqlRuns:
    """`RunsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, rows: list[dict[str, Any]]) -> None:
        await store.add_runs(self.conn, rows)

    async def page(self, business_id: str, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.runs_of_business(business_id), runs.c.created_at, runs.c.id,
                                 page)).map(_run)

    async def by_ids(self, run_ids: list[str]) -> list[Run]:
        return [_run(row) for row in await store.runs_by_ids(self.conn, run_ids)]

    async def owned(self, business_ids: Iterable[str], *, run_id: str | None = None,
                    provider_run_id: str | None = None) -> Run | None:
        return or_none(_run, await store.run_by(self.conn, business_ids, run_id=run_id,
                                                 provider_run_id=provider_run_id))

    async def of_agent(self, business_ids: Iterable[str], agent_id: str, limit: int) -> list[Run]:
        return [_run(row) for row in await self.conn.execute(store.runs_of_agent(business_ids, agent_id, limit))]

    async def record(self, run_id: str, values: dict[str, Any], holder: str | None = None) -> Run | None:
        return or_none(_run, await store.record_run(self.conn, run_id, values, holder))

    async def claim(self, holder: str, lease: timedelta, limit: int) -> list[UnfinishedRun]:
        claimed = await store.claim_runs(self.conn, holder, lease, limit)
        return [record(UnfinishedRun, row._mapping) for row in await self.conn.execute(store.unfinished_runs(claimed))]

    async def renew(self, holder: str, run_ids: list[str], lease: timedelta) -> None:
        await store.renew_runs(self.conn, holder, run_ids, lease)

    async def release(self, holder: str) -> None:
        await store.release_runs(self.conn, holder)

    async def provider_runs_recorded(self, provider_run_ids: list[str]) -> set[str]:
        return await store.provider_runs_recorded(self.conn, provider_run_ids)

    async def scenarios_to_run(self, business_ids: Iterable[str], agent_id: str) -> list[Scenario]:
        return [_scenario(row) for row in await self.conn.execute(store.scenarios_for_runs(business_ids, agent_id))]




def _scenario(row: Any) -> Scenario:
    return record(Scenario, row._mapping)


def _run(row: Any) -> Run:
    return record(Run, row._mapping)


class EvalsUnit(Unit):
    """The evals use cases' unit of work (core.uow.UnitOfWork): their scenarios and runs, on one transaction's or
    read's handle (`scenarios_on` and `runs_on` build the repositories: the SQL ones, or the fast tier's in-memory
    twins)."""

    def __init__(self, handle: Any, scenarios_on: Callable[[Any], ScenariosRepository] = SqlScenarios,
                 runs_on: Callable[[Any], RunsRepository] = SqlRuns):
        super().__init__()
        self.scenarios = scenarios_on(handle)
        self.runs = runs_on(handle)
