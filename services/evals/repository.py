"""Where the eval scenario use cases (service.py) keep scenarios: a repository bound to one unit of work's handle.
It only stores and finds; the rules stay in domain.py and the use cases, which reach it through their unit of work
(`EvalsUnit`).

A scenario's write waits on the provider's mirror, so it holds the scenario's lease (core.leases.hold_with takes
and releases it through the repository); a change or a delete applies only while the lease is the writer's.
`SqlScenarios` is the production one, over store.py; the fast test tier has an in-memory one
(tests/memory/evals.py), and the same behaviour tests run on both (tests/storage_contracts.py). The eval runs
(run_service.py) stay on store.py directly."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.pagination import Page, Paged, fetch_page
from core.uow import Unit
from services.evals import store
from services.evals.schema import scenarios


class ScenariosRepository(leases.Lessor, Protocol):
    async def add(self, **values: Any) -> Any:
        """Record a scenario (schema.scenarios' columns); its row."""

    async def owned(self, business_ids: Iterable[str], scenario_id: str) -> Any | None:
        """The scenario with this id in one of these businesses, or None."""

    async def page(self, business_ids: Iterable[str], agent_id: str | None, page: Page) -> Paged:
        """The businesses' scenarios (of one agent when given) without their turns and lease, newest first."""

    async def change_leased(self, scenario_id: str, token: str, values: dict[str, Any]) -> Any | None:
        """The scenario after `values`, or None when its lease is no longer `token`'s."""

    async def remove_leased(self, scenario_id: str, token: str) -> None:
        """Delete the scenario if its lease is still `token`'s."""


class SqlScenarios:
    """`ScenariosRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> Any:
        return await store.insert_scenario(self.conn, **values)

    async def owned(self, business_ids: Iterable[str], scenario_id: str) -> Any | None:
        return await store.scenario(self.conn, business_ids, scenario_id)

    async def page(self, business_ids: Iterable[str], agent_id: str | None, page: Page) -> Paged:
        return await fetch_page(self.conn, store.scenarios_of(business_ids, agent_id), scenarios.c.created_at,
                                scenarios.c.id, page)

    async def take_lease(self, row_id: Any, duration: timedelta) -> str | None:
        return await leases.take(self.conn, scenarios, row_id, duration)

    async def release_lease(self, row_id: Any, token: str) -> None:
        await leases.release_on(self.conn, scenarios, row_id, token)

    async def change_leased(self, scenario_id: str, token: str, values: dict[str, Any]) -> Any | None:
        return await store.leased_scenario_update(self.conn, scenario_id, token, values)

    async def remove_leased(self, scenario_id: str, token: str) -> None:
        await store.delete_leased_scenario(self.conn, scenario_id, token)


class EvalsUnit(Unit):
    """The eval scenario use cases' unit of work (core.uow.UnitOfWork): their scenarios, on one transaction's or
    read's handle (`scenarios_on` builds the repository: the SQL one, or the fast tier's in-memory twin)."""

    def __init__(self, handle: Any, scenarios_on: Callable[[Any], ScenariosRepository] = SqlScenarios):
        super().__init__()
        self.scenarios = scenarios_on(handle)
