"""Where the agent use cases (service.py) keep agents, their versions and prompt history: a repository bound to one
unit of work's handle. It only stores and finds; the rules stay in domain.py and the use cases (a malformed id, an
agent not found).

A configuration write waits on the provider assistant, so it holds the agent's lease (core.leases.hold_with takes
and releases it through the repository); the final write applies only while the lease is the writer's.
`SqlAgents` is the production one, over store.py; the fast test tier has an in-memory one
(tests/memory/agents.py), and the same behaviour tests run on both (tests/storage_contracts.py).

The phone-number use cases (numbers_service.py) keep the pool and the businesses' numbers in `NumbersRepository`
(`SqlNumbers`), the same way: an assign, a forwarding change or a release holds the number's lease while the
provider changes it, and the pool is filled (pool.py, stock.py) through it too. The places the pool keeps a stock of
bought numbers in are in `StockRepository` (`SqlStock`), leased by the stock job while it refills one. The use cases
reach all three through their unit of work (`AgentsUnit`, made by `agents_units`), which also writes the events they
raise."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases, records
from core.db import lock_until_commit
from core.pagination import Page, Paged, fetch_page
from core.uow import Connections, Unit, UnitOfWork
from services.agents import store
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
from services.agents.schema import agent_versions, agents, number_stock, outbox, phone_numbers


class AgentsRepository(leases.Lessor, Protocol):
    async def add(self, **values: Any) -> Agent:
        """Record an agent (schema.agents' columns); its row. One per business and request_id."""

    async def owned(self, business_ids: Iterable[str], agent_id: str) -> Agent | None:
        """The agent with this id in one of these businesses, or None."""

    async def by_request(self, business_id: str, request_id: str) -> Agent | None:
        """The business's agent made by this request, or None."""

    async def page(self, business_ids: Iterable[str], page: Page) -> Paged:
        """The businesses' agents, newest first."""

    async def by_ids(self, ids: list[str], business_ids: Iterable[str]) -> list[AgentSummary]:
        """The agents among `ids` (checked UUIDs) of these businesses."""

    async def directory(self, business_ids: Iterable[str]) -> list[AgentSummary]:
        """Every agent of these businesses, oldest first."""

    async def assistants_of(self, business_id: str, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` of the business's agents, oldest first: (agent id, provider assistant id)."""

    async def delete_agents(self, business_id: str, agent_ids: list[str]) -> int:
        """These agents of the business deleted with their versions and prompt history; how many."""

    async def first_numbers(self, agent_ids: list[str]) -> dict[str, str]:
        """Each agent's first assigned number, by agent id (agents without one left out)."""

    async def calling_profile(self, business_ids: Iterable[str], agent_id: str
                              ) -> tuple[Agent, CallerNumber | None] | None:
        """The agent with this id in one of these businesses with its first number (phone_number,
        provider_phone_number_id) or None; None when there is no such agent."""

    async def change_leased(self, agent_id: str, token: str, values: dict[str, Any]) -> Agent | None:
        """The agent after `values`, its lease ended, or None when the lease is no longer `token`'s."""

    async def add_version(self, **values: Any) -> None:
        """Record a version (schema.agent_versions' columns). One per agent and number."""

    async def add_prompt_change(self, **values: Any) -> None:
        """Record a prompt change (schema.prompt_history's columns)."""

    async def version(self, agent_id: str, version: int) -> Version | None:
        """The agent's version with this number, or None."""

    async def versions(self, agent_id: str, page: Page) -> Paged:
        """The agent's versions (`Version`s), newest first."""

    async def business_versions(self, business_id: str, after: tuple[datetime, str, int] | None,
                                limit: int) -> list[tuple[Version, datetime]]:
        """Up to `limit` versions of the business's agents (each with its agent's created_at) after the key
        (agent_created_at, agent_id, version): newest agent first, each agent's newest version first."""


class SqlAgents:
    """`AgentsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> Agent:
        return _agent(await store.insert_agent(self.conn, **values))

    async def owned(self, business_ids: Iterable[str], agent_id: str) -> Agent | None:
        return records.or_none(_agent, await records.owned(self.conn, agents, business_ids, agent_id))

    async def by_request(self, business_id: str, request_id: str) -> Agent | None:
        return records.or_none(_agent, await store.agent_by_request(self.conn, business_id, request_id))

    async def assistants_of(self, business_id: str, limit: int) -> list[tuple[str, str]]:
        return [(str(r.id), r.provider_assistant_id) for r in await store.assistants_of(self.conn, business_id, limit)]

    async def delete_agents(self, business_id: str, agent_ids: list[str]) -> int:
        return await store.delete_agents(self.conn, business_id, agent_ids)

    async def page(self, business_ids: Iterable[str], page: Page) -> Paged:
        return (await fetch_page(self.conn, store.agents_of(business_ids), agents.c.created_at, agents.c.id,
                                 page)).map(_agent)

    async def by_ids(self, ids: list[str], business_ids: Iterable[str]) -> list[AgentSummary]:
        return [_summary(row) for row in await store.agents_by_id(self.conn, ids, business_ids)]

    async def directory(self, business_ids: Iterable[str]) -> list[AgentSummary]:
        return [_summary(row) for row in await store.directory(self.conn, business_ids)]

    async def first_numbers(self, agent_ids: list[str]) -> dict[str, str]:
        return await store.agent_phone_numbers(self.conn, agent_ids)

    async def calling_profile(self, business_ids: Iterable[str], agent_id: str
                              ) -> tuple[Agent, CallerNumber | None] | None:
        profile = await store.calling_profile(self.conn, business_ids, agent_id)
        return (_agent(profile[0]), profile[1]) if profile is not None else None

    async def take_lease(self, row_id: str, duration: timedelta) -> str | None:
        return await leases.take(self.conn, agents, row_id, duration)

    async def release_lease(self, row_id: str, token: str) -> None:
        await leases.release_on(self.conn, agents, row_id, token)

    async def change_leased(self, agent_id: str, token: str, values: dict[str, Any]) -> Agent | None:
        return records.or_none(_agent, await store.leased_agent_update(self.conn, agent_id, token, values))

    async def add_version(self, **values: Any) -> None:
        await store.insert_version(self.conn, **values)

    async def add_prompt_change(self, **values: Any) -> None:
        await store.insert_prompt_change(self.conn, **values)

    async def version(self, agent_id: str, version: int) -> Version | None:
        return records.or_none(_version, await store.version_of(self.conn, agent_id, version))

    async def business_versions(self, business_id: str, after: tuple[datetime, str, int] | None,
                                limit: int) -> list[tuple[Version, datetime]]:
        rows = await self.conn.execute(store.business_versions(business_id, after, limit))
        return [(_version(row), row.agent_created_at) for row in rows]

    async def versions(self, agent_id: str, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.versions_of(agent_id), agent_versions.c.created_at,
                                 agent_versions.c.version, page)).map(_version)


class NumbersRepository(leases.Lessor, Protocol):
    async def page(self, business_ids: Iterable[str], phone_number: str | None, page: Page) -> Paged:
        """The businesses' numbers (this one only, when given), newest assigned first."""

    async def held_by(self, business_id: str) -> list[str]:
        """Every number the business holds."""

    async def available(self, country: str | None, area_code: str | None, capabilities: tuple[str, ...],
                        after: tuple[str, str, str] | None, limit: int) -> list[PhoneNumber]:
        """Free pool numbers (not held, not blocked, not leased) with these capabilities, in (country, area code,
        number) order after the place `after`, `limit` of them."""

    async def route(self, phone_number: str) -> NumberRoute | None:
        """A held number with its agent, or None when no business holds it."""

    async def counts(self, business_ids: Iterable[str]) -> list[NumberCount]:
        """How many numbers each of these businesses holding any holds."""

    async def count_held(self, business_id: str) -> int:
        """How many numbers the business holds, counted one transaction at a time per business (SQL: an advisory
        lock until the transaction ends)."""

    async def pool_number(self, phone_number: str) -> PhoneNumber | None:
        """The number's row (held for update), whoever holds it, or None."""

    async def business_number(self, phone_number: str, business_id: str, *, lock: bool = False) -> PhoneNumber | None:
        """The row of a number this business holds (held for update with `lock`), or None."""

    async def agent(self, business_ids: Iterable[str], agent_id: str) -> Agent | None:
        """The agent with this id in one of these businesses, or None."""

    async def change(self, number_id: str, values: dict[str, Any]) -> PhoneNumber | None:
        """The number after `values`, or None when there is none."""

    async def change_leased(self, number_id: str, token: str, values: dict[str, Any]) -> PhoneNumber | None:
        """The number after `values`, its lease ended, or None when the lease is no longer `token`'s."""

    async def add_to_pool(self, rows: list[dict[str, Any]], now: datetime) -> int:
        """Add the pool's numbers not held yet (every row naming the same columns); how many were added."""

    async def free_in_place(self, country: str, area_code: str, capabilities: tuple[str, ...]) -> int:
        """How many free (not held, not blocked) numbers with these capabilities a stock place has: its country, in
        its area code unless that is ""."""

    async def bought_since(self, since: datetime) -> int:
        """How many numbers bought from the provider entered the pool at or after `since` and are still held."""

    async def idle(self, cutoff: datetime, limit: int) -> list[PhoneNumber]:
        """Bought numbers (provider_ref set), free and not leased, in the pool since before `cutoff` (pooled_at, else
        created_at), in a place with no demand since then (no stock place of their country, area code or whole
        country, with demand_at at or after it); oldest first."""

    async def remove_leased(self, number_id: str, token: str) -> bool:
        """Delete a free number while `token` holds its lease; whether it was deleted."""


class StockRepository(leases.Lessor, Protocol):
    """The stock places (schema.number_stock); a place is refilled under its lease."""

    async def request(self, country: str, area_code: str, now: datetime) -> StockPlace:
        """Ask for numbers in a place: made `requested` if new; else its demand noted and, if `stocked`, requested
        again at `now` (an `unavailable` one stays so until numbers are found)."""

    async def note_demand(self, country: str, area_code: str, now: datetime) -> None:
        """A number of this place was taken: its demand is `now` (made `stocked` if new)."""

    async def wanted(self, since: datetime) -> list[StockPlace]:
        """Places not leased with demand at or after `since`, longest requested first."""

    async def settle(self, place_id: str, token: str, values: dict[str, Any]) -> StockPlace | None:
        """The place after `values`, its lease ended, or None when the lease is no longer `token`'s."""


class SqlNumbers:
    """`NumbersRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def page(self, business_ids: Iterable[str], phone_number: str | None, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.numbers_of(business_ids, phone_number),
                                 phone_numbers.c.assigned_at, phone_numbers.c.id, page)).map(_number)

    async def held_by(self, business_id: str) -> list[str]:
        return [r.phone_number for r in (await self.conn.execute(store.numbers_of([business_id], None))).all()]

    async def available(self, country: str | None, area_code: str | None, capabilities: tuple[str, ...],
                        after: tuple[str, str, str] | None, limit: int) -> list[PhoneNumber]:
        return [_number(row) for row in await store.available_numbers(self.conn, country, area_code, capabilities,
                                                                         after, limit)]

    async def route(self, phone_number: str) -> NumberRoute | None:
        return records.or_none(_route, await store.number_route(self.conn, phone_number))

    async def counts(self, business_ids: Iterable[str]) -> list[NumberCount]:
        return [records.record(NumberCount, row._mapping) for row in await store.number_counts(self.conn, business_ids)]

    async def count_held(self, business_id: str) -> int:
        await lock_until_commit(self.conn, "trial-numbers", business_id)
        return await store.numbers_held(self.conn, business_id)

    async def pool_number(self, phone_number: str) -> PhoneNumber | None:
        return records.or_none(_number, await store.pool_number_for_update(self.conn, phone_number))

    async def business_number(self, phone_number: str, business_id: str, *, lock: bool = False) -> PhoneNumber | None:
        return records.or_none(_number, await store.business_number(self.conn, phone_number, business_id, lock=lock))

    async def agent(self, business_ids: Iterable[str], agent_id: str) -> Agent | None:
        return records.or_none(_agent, await records.owned(self.conn, agents, business_ids, agent_id))

    async def take_lease(self, row_id: str, duration: timedelta) -> str | None:
        return await leases.take(self.conn, phone_numbers, row_id, duration)

    async def release_lease(self, row_id: str, token: str) -> None:
        await leases.release_on(self.conn, phone_numbers, row_id, token)

    async def change(self, number_id: str, values: dict[str, Any]) -> PhoneNumber | None:
        return records.or_none(_number, await store.update_number(self.conn, number_id, values))

    async def change_leased(self, number_id: str, token: str, values: dict[str, Any]) -> PhoneNumber | None:
        return records.or_none(_number, await store.leased_number_update(self.conn, number_id, token, values))

    async def add_to_pool(self, rows: list[dict[str, Any]], now: datetime) -> int:
        return await store.add_to_pool(self.conn, rows, now)

    async def free_in_place(self, country: str, area_code: str, capabilities: tuple[str, ...]) -> int:
        return await store.free_in_place(self.conn, country, area_code, capabilities)

    async def bought_since(self, since: datetime) -> int:
        return await store.bought_since(self.conn, since)

    async def idle(self, cutoff: datetime, limit: int) -> list[PhoneNumber]:
        return [_number(row) for row in await store.idle_numbers(self.conn, cutoff, limit)]

    async def remove_leased(self, number_id: str, token: str) -> bool:
        return await store.delete_leased_free_number(self.conn, number_id, token)


class SqlStock:
    """`StockRepository` on a unit of work's connection."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def request(self, country: str, area_code: str, now: datetime) -> StockPlace:
        return _place(await store.request_stock(self.conn, country, area_code, now))

    async def note_demand(self, country: str, area_code: str, now: datetime) -> None:
        await store.note_demand(self.conn, country, area_code, now)

    async def wanted(self, since: datetime) -> list[StockPlace]:
        return [_place(row) for row in await store.wanted_places(self.conn, since)]

    async def take_lease(self, row_id: str, duration: timedelta) -> str | None:
        return await leases.take(self.conn, number_stock, row_id, duration)

    async def release_lease(self, row_id: str, token: str) -> None:
        await leases.release_on(self.conn, number_stock, row_id, token)

    async def settle(self, place_id: str, token: str, values: dict[str, Any]) -> StockPlace | None:
        return records.or_none(_place, await store.leased_place_update(self.conn, place_id, token, values))


def _agent(row: Any) -> Agent:
    return records.record(Agent, row._mapping)


def _summary(row: Any) -> AgentSummary:
    return records.record(AgentSummary, row._mapping)


def _version(row: Any) -> Version:
    return records.record(Version, row._mapping)


def _number(row: Any) -> PhoneNumber:
    return records.record(PhoneNumber, row._mapping)


def _route(row: Any) -> NumberRoute:
    return records.record(NumberRoute, row._mapping)


def _place(row: Any) -> StockPlace:
    return records.record(StockPlace, row._mapping)


class AgentsUnit(Unit):
    """The agents use cases' unit of work (core.uow.UnitOfWork): their agents, phone numbers and the pool's stock
    places on one transaction's or read's handle (`agents_on`, `numbers_on` and `stock_on` build the repositories:
    the SQL ones, or the fast tier's twins)."""

    def __init__(self, handle: Any, agents_on: Callable[[Any], AgentsRepository] = SqlAgents,
                 numbers_on: Callable[[Any], NumbersRepository] = SqlNumbers,
                 stock_on: Callable[[Any], StockRepository] = SqlStock):
        super().__init__()
        self.agents = agents_on(handle)
        self.numbers = numbers_on(handle)
        self.stock = stock_on(handle)


def agents_units(connections: Connections, agents_on: Callable[[Any], AgentsRepository] = SqlAgents,
                 numbers_on: Callable[[Any], NumbersRepository] = SqlNumbers,
                 stock_on: Callable[[Any], StockRepository] = SqlStock) -> UnitOfWork[AgentsUnit]:
    """The agents service's unit of work on `connections`; the events its units raise go to the agents outbox."""
    return UnitOfWork(connections, lambda handle: AgentsUnit(handle, agents_on, numbers_on, stock_on), outbox)


def agents_of(work: AgentsUnit) -> AgentsRepository:
    """The repository whose rows an agent's lease is held on (core.leases.hold_with)."""
    return work.agents


def numbers_of(work: AgentsUnit) -> NumbersRepository:
    """The repository whose rows a number's lease is held on (core.leases.hold_with)."""
    return work.numbers
