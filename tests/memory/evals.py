"""services.evals.repository's ScenariosRepository and RunsRepository in memory, on a MemoryDatabase's handle
(store.scenarios and store.runs)."""
from __future__ import annotations

from core import leases
from core.ids import utcnow
from core.records import record
from services.evals.records import ListedScenario, Run, Scenario, UnfinishedRun
from services.evals.schema import runs, scenarios
from services.evals.store import LIST_COLUMNS
from tests.memory import MemoryConnection, Record, insert, page_of, release_lease, take_lease, update


class MemoryScenarios:
    def __init__(self, conn: MemoryConnection):
        self.scenarios = conn.rows(scenarios)

    async def add(self, **values):
        return _scenario(insert(self.scenarios, scenarios, values))

    async def owned(self, business_ids, scenario_id):
        row = self.scenarios.get((scenario_id,))
        return _scenario(row) if row is not None and row["business_id"] in business_ids else None

    async def page(self, business_ids, agent_id, page):
        paged = page_of([row for row in self.scenarios.values() if row["business_id"] in business_ids
                         and agent_id in (None, row["agent_id"])], scenarios.c.created_at, scenarios.c.id, page,
                        LIST_COLUMNS)
        return paged.map(lambda row: record(ListedScenario, row._mapping))

    async def take_lease(self, row_id, duration):
        return take_lease(scenarios, self.scenarios.get((row_id,)), duration)

    async def release_lease(self, row_id, token) -> None:
        release_lease(scenarios, self.scenarios.get((row_id,)), token)

    async def change_leased(self, scenario_id, token, values):
        row = self._leased(scenario_id, token)
        return record(Scenario, update(scenarios, row, values)._mapping) if row is not None else None

    async def remove_leased(self, scenario_id, token) -> None:
        if self._leased(scenario_id, token) is not None:
            del self.scenarios[(scenario_id,)]

    def _leased(self, scenario_id, token):
        row = self.scenarios.get((scenario_id,))
        return row if row is not None and row["lease_token"] == token else None


class MemoryRuns:
    def __init__(self, conn: MemoryConnection):
        self.runs = conn.rows(runs)
        self.scenarios = conn.rows(scenarios)

    async def add(self, rows) -> None:
        for row in rows:
            insert(self.runs, runs, row)

    async def by_ids(self, run_ids):
        return [_run(self.runs[(run_id,)]) for run_id in run_ids]

    async def owned(self, business_ids, *, run_id=None, provider_run_id=None):
        column, value = ("id", run_id) if run_id else ("provider_run_id", provider_run_id)
        return next((_run(row) for row in self.runs.values()
                     if row[column] == value and row["business_id"] in business_ids), None)

    async def of_agent(self, business_ids, agent_id, limit):
        theirs = [row for row in self.runs.values() if row["business_id"] in business_ids
                  and row["agent_id"] == agent_id]
        return [_run(row) for row in sorted(theirs, key=lambda row: (row["created_at"], row["id"]),
                                            reverse=True)[:limit]]

    async def record(self, run_id, values, holder=None):
        row = self.runs.get((run_id,))
        if row is None or row["status"] == "ended" or holder not in (None, row["lease_token"]):
            return None
        return _run(update(runs, row, values)._mapping)

    async def claim(self, holder, lease, limit):
        now = utcnow()
        free = sorted((row for row in self.runs.values() if row["status"] != "ended"
                       and (row["lease_until"] is None or row["lease_until"] < now)),
                      key=lambda row: row["created_at"])[:limit]
        for row in free:
            update(runs, row, {"lease_token": holder, "lease_until": now + lease})
        return [record(UnfinishedRun, Record({**row, "provider_eval_id": self._mirror_of(row)})._mapping)
                for row in free]

    async def renew(self, holder, run_ids, lease) -> None:
        for run_id in run_ids:
            row = self.runs.get((run_id,))
            if row is not None and row["status"] != "ended" and row["lease_token"] == holder:
                update(runs, row, {"lease_until": utcnow() + lease})

    async def release(self, holder) -> None:
        for row in self.runs.values():
            if row["status"] != "ended" and row["lease_token"] == holder:
                update(runs, row, leases.RELEASED)

    async def provider_runs_recorded(self, provider_run_ids):
        return {row["provider_run_id"] for row in self.runs.values() if row["provider_run_id"] in provider_run_ids}

    async def scenarios_to_run(self, business_ids, agent_id):
        theirs = [row for row in self.scenarios.values() if row["business_id"] in business_ids
                  and row["agent_id"] == agent_id]
        return [_scenario(row) for row in sorted(theirs, key=lambda row: row["created_at"])]

    def _mirror_of(self, run) -> str | None:
        scenario = self.scenarios.get((run["eval_id"],))
        return scenario["provider_eval_id"] if scenario is not None else None


def _scenario(row) -> Scenario:
    """The stored row as the SQL repository returns it (a copy: changing it changes nothing stored)."""
    return record(Scenario, Record(row)._mapping)


def _run(row) -> Run:
    return record(Run, Record(row)._mapping)
