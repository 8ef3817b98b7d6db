"""services.evals.repository.ScenariosRepository in memory, on a MemoryDatabase's handle (store.scenarios)."""
from __future__ import annotations

from core import leases
from core.ids import new_id, utcnow
from services.evals.store import LIST_COLUMNS, scenarios
from tests.memory import MemoryConnection, Record, insert, page_of, update


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
        row = self.scenarios.get((row_id,))
        if row is None or (row["lease_until"] is not None and row["lease_until"] >= utcnow()):
            return None
        token = new_id()
        update(scenarios, row, {"lease_token": token, "lease_until": utcnow() + duration})
        return token

    async def release_lease(self, row_id, token) -> None:
        row = self._leased(row_id, token)
        if row is not None:
            update(scenarios, row, leases.RELEASED)

    async def change_leased(self, scenario_id, token, values):
        row = self._leased(scenario_id, token)
        return update(scenarios, row, values) if row is not None else None

    async def remove_leased(self, scenario_id, token) -> None:
        if self._leased(scenario_id, token) is not None:
            del self.scenarios[(scenario_id,)]

    def _leased(self, scenario_id, token):
        row = self.scenarios.get((scenario_id,))
        return row if row is not None and row["lease_token"] == token else None
