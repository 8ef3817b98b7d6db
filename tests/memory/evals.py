"""services.evals.repository.ScenariosRepository in memory, on a MemoryDatabase's handle (store.scenarios)."""
from __future__ import annotations

from services.evals.schema import scenarios
from services.evals.store import LIST_COLUMNS
from tests.memory import MemoryConnection, Record, insert, page_of, release_lease, take_lease, update


class MemoryScenarios:
    def __init__(self, conn: MemoryConnection):
        self.scenarios = conn.rows(scenarios)

    async def add(self, **values):
        return Record(insert(self.scenarios, scenarios, values))

    async def owned(self, business_ids, scenario_id):
        row = self.scenarios.get((scenario_id,))
        return Record(row) if row is not None and row["business_id"] in business_ids else None

    async def page(self, business_ids, agent_id, page):
        return page_of([row for row in self.scenarios.values() if row["business_id"] in business_ids
                        and agent_id in (None, row["agent_id"])], scenarios.c.created_at, scenarios.c.id, page,
                       LIST_COLUMNS)

    async def take_lease(self, row_id, duration):
        return take_lease(scenarios, self.scenarios.get((row_id,)), duration)

    async def release_lease(self, row_id, token) -> None:
        release_lease(scenarios, self.scenarios.get((row_id,)), token)

    async def change_leased(self, scenario_id, token, values):
        row = self._leased(scenario_id, token)
        return update(scenarios, row, values) if row is not None else None

    async def remove_leased(self, scenario_id, token) -> None:
        if self._leased(scenario_id, token) is not None:
            del self.scenarios[(scenario_id,)]

    def _leased(self, scenario_id, token):
        row = self.scenarios.get((scenario_id,))
        return row if row is not None and row["lease_token"] == token else None
