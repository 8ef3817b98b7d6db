"""services.agents.repository.AgentsRepository, NumbersRepository and StockRepository in memory, on a
MemoryDatabase's handle (store.agents, agent_versions, prompt_history, phone_numbers and number_stock)."""
from __future__ import annotations

import sqlalchemy as sa

from core import leases
from core.ids import new_id, utcnow
from core.records import or_none, record
from services.agents.records import (
    Agent,
    AgentSummary,
    CallerNumber,
    NumberCount,
    NumberRoute,
    PhoneNumber,
    StockPlace,
    Version,
)
from services.agents.schema import agent_versions, agents, number_stock, phone_numbers, prompt_history
from tests.memory import MemoryConnection, Record, insert, page_of, release_lease, take_lease, update


class MemoryAgents:
    def __init__(self, conn: MemoryConnection):
        self.agents = conn.rows(agents)
        self.versions_kept = conn.rows(agent_versions)
        self.prompt_changes = conn.rows(prompt_history)
        self.numbers = conn.rows(phone_numbers)

    async def add(self, **values):
        if values.get("request_id") is not None and \
                await self.by_request(values["business_id"], values["request_id"]) is not None:
            raise sa.exc.IntegrityError("INSERT (in memory)", values, ValueError("agents_request_once"))
        return _agent(insert(self.agents, agents, values))

    async def owned(self, business_ids, agent_id):
        row = self.agents.get((agent_id,))
        return _agent(row) if row is not None and row["business_id"] in business_ids else None

    async def by_request(self, business_id, request_id):
        return next((_agent(row) for row in self.agents.values()
                     if (row["business_id"], row["request_id"]) == (business_id, request_id)), None)

    async def page(self, business_ids, page):
        return page_of([row for row in self.agents.values() if row["business_id"] in business_ids],
                       agents.c.created_at, agents.c.id, page).map(lambda row: _agent(row._mapping))

    async def by_ids(self, ids, business_ids):
        return [record(AgentSummary, row) for row in self.agents.values()
                if row["id"] in ids and row["business_id"] in business_ids]

    async def directory(self, business_ids):
        return [record(AgentSummary, row) for row in sorted(self.agents.values(),
                                                            key=lambda r: (r["created_at"], r["id"]))
                if row["business_id"] in business_ids]

    async def first_numbers(self, agent_ids):
        return {str(number["agent_id"]): number["phone_number"] for number in self._by_assignment()
                if number["agent_id"] in agent_ids}

    async def calling_profile(self, business_ids, agent_id):
        row = await self.owned(business_ids, agent_id)
        if row is None:
            return None
        number = next((n for n in self._by_assignment(newest_first=False) if n["agent_id"] == agent_id), None)
        if number is None:
            return row, None
        return row, CallerNumber(phone_number=number["phone_number"],
                                 provider_phone_number_id=number["provider_phone_number_id"])

    async def take_lease(self, row_id, duration):
        return take_lease(agents, self.agents.get((row_id,)), duration)

    async def release_lease(self, row_id, token) -> None:
        release_lease(agents, self.agents.get((row_id,)), token)

    async def change_leased(self, agent_id, token, values):
        row = self.agents.get((agent_id,))
        if row is None or row["lease_token"] != token:
            return None
        return _agent(update(agents, row, {**values, **leases.RELEASED})._mapping)

    async def add_version(self, **values) -> None:
        insert(self.versions_kept, agent_versions, values)

    async def add_prompt_change(self, **values) -> None:
        insert(self.prompt_changes, prompt_history, {"id": len(self.prompt_changes) + 1, **values})

    async def version(self, agent_id, version):
        return or_none(_version, self.versions_kept.get((agent_id, version)))

    async def versions(self, agent_id, page):
        return page_of([row for row in self.versions_kept.values() if row["agent_id"] == agent_id],
                       agent_versions.c.created_at, agent_versions.c.version, page).map(
            lambda row: _version(row._mapping))

    def _by_assignment(self, newest_first: bool = True) -> list[dict]:
        """The assigned numbers, newest first (as store.agent_phone_numbers orders them: the earliest is kept)."""
        assigned = [n for n in self.numbers.values() if n["agent_id"] is not None]
        return sorted(assigned, key=lambda n: n["assigned_at"], reverse=newest_first)


class MemoryNumbers:
    def __init__(self, conn: MemoryConnection):
        self.numbers = conn.rows(phone_numbers)
        self.agents = conn.rows(agents)
        self.stock = conn.rows(number_stock)

    async def page(self, business_ids, phone_number, page):
        return page_of([row for row in self.numbers.values() if row["business_id"] in business_ids
                        and phone_number in (None, row["phone_number"])],
                       phone_numbers.c.assigned_at, phone_numbers.c.id, page).map(lambda row: _number(row._mapping))

    async def held_by(self, business_id):
        return [row["phone_number"] for row in self.numbers.values() if row["business_id"] == business_id]

    async def available(self, country, area_code, capabilities, after, limit):
        def place(row):
            return row["country"], row["area_code"], row["phone_number"]

        free = [row for row in self.numbers.values()
                if row["business_id"] is None and not row["blocked"]
                and (row["lease_until"] is None or row["lease_until"] < utcnow())
                and country in (None, row["country"]) and area_code in (None, row["area_code"])
                and all(row["capabilities"].get(cap) is True for cap in capabilities)
                and (after is None or place(row) > tuple(after))]
        return [_number(row) for row in sorted(free, key=place)[:limit]]

    async def route(self, phone_number):
        row = self._by_number(phone_number)
        if row is None or row["business_id"] is None:
            return None
        agent = self.agents.get((row["agent_id"],)) or {}
        return record(NumberRoute, Record({
            "phone_number": row["phone_number"], "business_id": row["business_id"], "agent_id": row["agent_id"],
            "agent_name": agent.get("name"), "provider_assistant_id": agent.get("provider_assistant_id"),
            "recording_disclosure": (agent.get("config") or {}).get("recording_disclosure")})._mapping)

    async def counts(self, business_ids):
        held = [row["business_id"] for row in self.numbers.values() if row["business_id"] in business_ids]
        return [NumberCount(business_id, held.count(business_id)) for business_id in dict.fromkeys(held)]

    async def count_held(self, business_id):
        return len(await self.held_by(business_id))

    async def pool_number(self, phone_number):
        row = self._by_number(phone_number)
        return _number(row) if row is not None else None

    async def business_number(self, phone_number, business_id, *, lock=False):
        row = self._by_number(phone_number)
        return _number(row) if row is not None and row["business_id"] == business_id else None

    async def agent(self, business_ids, agent_id):
        row = self.agents.get((agent_id,))
        return _agent(row) if row is not None and row["business_id"] in business_ids else None

    async def take_lease(self, row_id, duration):
        return take_lease(phone_numbers, self.numbers.get((row_id,)), duration)

    async def release_lease(self, row_id, token) -> None:
        release_lease(phone_numbers, self.numbers.get((row_id,)), token)

    async def change(self, number_id, values):
        row = self.numbers.get((number_id,))
        return _number(update(phone_numbers, row, values)._mapping) if row is not None else None

    async def change_leased(self, number_id, token, values):
        row = self.numbers.get((number_id,))
        if row is None or row["lease_token"] != token:
            return None
        return _number(update(phone_numbers, row, {**values, **leases.RELEASED})._mapping)

    def _by_number(self, phone_number):
        return next((row for row in self.numbers.values() if row["phone_number"] == phone_number), None)

    async def add_to_pool(self, rows, now):
        held = {row["phone_number"] for row in self.numbers.values()}
        fresh = [row for row in rows if row["phone_number"] not in held]
        for row in fresh:
            insert(self.numbers, phone_numbers, {**row, "id": new_id(), "created_at": now})
        return len(fresh)

    async def free_in_place(self, country, area_code, capabilities):
        return len([row for row in self.numbers.values() if row["business_id"] is None and not row["blocked"]
                    and row["country"] == country and area_code in ("", row["area_code"])
                    and all(row["capabilities"].get(cap) is True for cap in capabilities)])

    async def bought_since(self, since):
        return len([row for row in self.numbers.values()
                    if row["provider_ref"] is not None and row.get("pooled_at") and row["pooled_at"] >= since])

    async def idle(self, cutoff, limit):
        places = self.stock.values()

        def wanted(row):
            return any(p["country"] == row["country"] and p["area_code"] in ("", row["area_code"])
                       and p["demand_at"] >= cutoff for p in places)

        found = [row for row in self.numbers.values()
                 if row["provider_ref"] is not None and row["business_id"] is None
                 and (row["lease_until"] is None or row["lease_until"] < utcnow())
                 and (row["pooled_at"] or row["created_at"]) < cutoff and not wanted(row)]
        return [_number(row) for row in sorted(found, key=lambda r: (r["created_at"], r["id"]))[:limit]]

    async def remove_leased(self, number_id, token):
        row = self.numbers.get((number_id,))
        if row is None or row["business_id"] is not None or row["lease_token"] != token:
            return False
        del self.numbers[(number_id,)]
        return True


class MemoryStock:
    def __init__(self, conn: MemoryConnection):
        self.places = conn.rows(number_stock)

    def _at(self, country, area_code):
        return next((row for row in self.places.values() if (row["country"], row["area_code"]) == (country,
                                                                                                   area_code)), None)

    async def request(self, country, area_code, now):
        row = self._at(country, area_code)
        if row is None:
            row = insert(self.places, number_stock, {"id": new_id(), "country": country, "area_code": area_code,
                                                     "state": "requested", "requested_at": now, "demand_at": now})
        elif row["state"] == "stocked":
            update(number_stock, row, {"demand_at": now, "state": "requested", "requested_at": now})
        else:
            update(number_stock, row, {"demand_at": now})
        return _place(row)

    async def note_demand(self, country, area_code, now):
        row = self._at(country, area_code)
        if row is None:
            insert(self.places, number_stock, {"id": new_id(), "country": country, "area_code": area_code,
                                               "state": "stocked", "requested_at": now, "demand_at": now})
        else:
            update(number_stock, row, {"demand_at": now})

    async def wanted(self, since):
        found = [row for row in self.places.values() if row["demand_at"] >= since
                 and (row["lease_until"] is None or row["lease_until"] < utcnow())]
        return [_place(row) for row in sorted(found, key=lambda r: (r["requested_at"], r["id"]))]

    async def take_lease(self, row_id, duration):
        return take_lease(number_stock, self.places.get((row_id,)), duration)

    async def release_lease(self, row_id, token) -> None:
        release_lease(number_stock, self.places.get((row_id,)), token)

    async def settle(self, place_id, token, values):
        row = self.places.get((place_id,))
        if row is None or row["lease_token"] != token:
            return None
        return _place(update(number_stock, row, {**values, **leases.RELEASED})._mapping)


def _agent(row: dict) -> Agent:
    """The stored row as the SQL repository returns it (a copy: changing it changes nothing stored)."""
    return record(Agent, Record(row)._mapping)


def _version(row: dict) -> Version:
    return record(Version, Record(row)._mapping)


def _number(row: dict) -> PhoneNumber:
    return record(PhoneNumber, Record(row)._mapping)


def _place(row: dict) -> StockPlace:
    return record(StockPlace, Record(row)._mapping)
