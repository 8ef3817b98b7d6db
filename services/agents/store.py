"""The queries on the agents schema's tables (schema.py), each taking a connection; the repositories alone call them."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.ids import new_id
from core.records import find_owned
from services.agents.records import CallerNumber
from services.agents.schema import (
    agent_versions,
    agents,
    number_stock,
    phone_numbers,
    prompt_history,
)

# -- agents -------------------------------------------------------------------------------

async def find_agent(conn: AsyncConnection, agent_id: str, *, field: str = "id") -> Any:
    """The caller's agent, or not_found (another business's agent is not found either)."""
    return await find_owned(conn, agents, agent_id, "agent", field=field)


def agents_of(business_ids: Iterable[str]) -> sa.Select[Any]:
    return sa.select(agents).where(agents.c.business_id.in_(business_ids))


SUMMARY = (agents.c.id, agents.c.name, agents.c.business_id, agents.c.status, agents.c.created_at)


async def agents_by_id(conn: AsyncConnection, ids: list[str], business_ids: Iterable[str]) -> list[Any]:
    """The agents among `ids` that belong to these businesses (summary columns)."""
    return list((await conn.execute(sa.select(*SUMMARY).where(agents.c.id.in_(ids),
                                                              agents.c.business_id.in_(business_ids)))).all())


async def directory(conn: AsyncConnection, business_ids: Iterable[str]) -> list[Any]:
    """Every agent of these businesses (summary columns), oldest first."""
    return list((await conn.execute(sa.select(*SUMMARY).where(agents.c.business_id.in_(business_ids))
                                    .order_by(agents.c.created_at, agents.c.id))).all())


async def agent_by_request(conn: AsyncConnection, business_id: str, request_id: str) -> Any:
    return (await conn.execute(agents.select().where(agents.c.business_id == business_id,
                                                     agents.c.request_id == request_id))).first()


async def assistants_of(conn: AsyncConnection, business_id: str, limit: int) -> list[Any]:
    """(id, provider_assistant_id) of up to `limit` of the business's agents, oldest first."""
    a = agents.c
    return list((await conn.execute(sa.select(a.id, a.provider_assistant_id).where(a.business_id == business_id)
                                    .order_by(a.created_at, a.id).limit(limit))).all())


async def delete_agents(conn: AsyncConnection, business_id: str, agent_ids: list[str]) -> int:
    """The business's agents among `agent_ids` deleted (versions and prompt history go with them: ON DELETE
    CASCADE; a number's agent becomes null); how many."""
    if not agent_ids:
        return 0
    return (await conn.execute(agents.delete().where(agents.c.business_id == business_id,
                                                     agents.c.id.in_(agent_ids)))).rowcount


async def insert_agent(conn: AsyncConnection, **values: Any) -> Any:
    return (await conn.execute(agents.insert().values(**values).returning(agents))).first()


async def leased_agent_update(conn: AsyncConnection, agent_id: Any, token: str, values: dict[str, Any]) -> Any:
    """Write an agent's row and end its lease, if this writer still holds it (else None)."""
    return (await conn.execute(agents.update().where(agents.c.id == agent_id, leases.held(agents, token))
                               .values(**values, **leases.RELEASED).returning(agents))).first()


async def agent_phone_numbers(conn: AsyncConnection, agent_ids: list[str]) -> dict[str, str]:
    """The first number assigned to each agent."""
    if not agent_ids:
        return {}
    rows = await conn.execute(sa.select(phone_numbers.c.agent_id, phone_numbers.c.phone_number)
                              .where(phone_numbers.c.agent_id.in_(agent_ids))
                              .order_by(phone_numbers.c.assigned_at.desc()))
    return {str(r.agent_id): r.phone_number for r in rows}  # newest first, so the earliest is written last


async def calling_profile(conn: AsyncConnection, business_ids: Iterable[str], agent_id: str
                          ) -> tuple[sa.Row[Any], CallerNumber | None] | None:
    """The agent with this id in one of these businesses and its first assigned number (None when it has none), or
    None when there is no such agent; in one statement: this is on the path of every call and text."""
    p = phone_numbers.c
    first = (sa.select(p.phone_number, p.provider_phone_number_id).where(p.agent_id == agents.c.id)
             .order_by(p.assigned_at).limit(1).lateral("first_number"))
    row = (await conn.execute(
        sa.select(agents, first.c.phone_number.label("first_phone_number"),
                  first.c.provider_phone_number_id.label("first_provider_phone_number_id"))
        .select_from(agents.outerjoin(first, sa.true()))
        .where(agents.c.id == agent_id, agents.c.business_id.in_(business_ids)))).first()
    if row is None:
        return None
    if row.first_phone_number is None:
        return row, None
    return row, CallerNumber(phone_number=row.first_phone_number,
                             provider_phone_number_id=row.first_provider_phone_number_id)


# -- versions and prompt history ------------------------------------------------------------

async def insert_version(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(agent_versions.insert().values(**values))


async def insert_prompt_change(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(prompt_history.insert().values(**values))


async def version_of(conn: AsyncConnection, agent_id: Any, version: int) -> Any:
    return (await conn.execute(sa.select(agent_versions).where(agent_versions.c.agent_id == agent_id,
                                                               agent_versions.c.version == version))).first()


def versions_of(agent_id: Any) -> sa.Select[Any]:
    return sa.select(agent_versions).where(agent_versions.c.agent_id == agent_id)


def business_versions(business_id: str, after: tuple[datetime, str, int] | None, limit: int) -> sa.Select[Any]:
    """The versions of the business's agents, agent by agent (newest agent first, by agents_business_created), each
    agent's newest version first (by the primary key), after the key (agent_created_at, agent_id, version)."""
    a, v = agents.c, agent_versions.c
    query = (sa.select(agent_versions, a.created_at.label("agent_created_at")).join(agents, a.id == v.agent_id)
             .where(a.business_id == business_id))
    if after is not None:
        query = query.where(sa.tuple_(a.created_at, a.id, v.version) < sa.tuple_(
            sa.literal(after[0], a.created_at.type), sa.literal(after[1], a.id.type), sa.literal(after[2])))
    return query.order_by(a.created_at.desc(), a.id.desc(), v.version.desc()).limit(limit)


# -- phone numbers --------------------------------------------------------------------------

def numbers_of(business_ids: Iterable[str], phone_number: str | None) -> sa.Select[Any]:
    query = sa.select(phone_numbers).where(phone_numbers.c.business_id.in_(business_ids))
    return query.where(phone_numbers.c.phone_number == phone_number) if phone_number else query


POOL_ORDER = (phone_numbers.c.country, phone_numbers.c.area_code, phone_numbers.c.phone_number)


async def available_numbers(conn: AsyncConnection, country: str | None, area_code: str | None,
                            capabilities: tuple[str, ...], after: tuple[str, str, str] | None, limit: int) -> list[Any]:
    """Free pool numbers in POOL_ORDER after the place `after`, `limit` of them."""
    pn = phone_numbers.c
    query = sa.select(phone_numbers).where(pn.business_id.is_(None), pn.blocked.is_(False), leases.free(phone_numbers))
    if country:
        query = query.where(pn.country == country)
    if area_code:
        query = query.where(pn.area_code == area_code)
    for cap in capabilities:
        query = query.where(pn.capabilities[cap].as_boolean().is_(True))
    if after:
        query = query.where(sa.tuple_(*POOL_ORDER) > sa.tuple_(*after))
    return list((await conn.execute(query.order_by(*POOL_ORDER).limit(limit))).all())


async def number_counts(conn: AsyncConnection, business_ids: Iterable[str]) -> list[Any]:
    pn = phone_numbers.c
    return list((await conn.execute(sa.select(pn.business_id, sa.func.count().label("held"))
                                    .where(pn.business_id.in_(business_ids)).group_by(pn.business_id))).all())


async def numbers_held(conn: AsyncConnection, business_id: str) -> int:
    return await conn.scalar(sa.select(sa.func.count()).where(phone_numbers.c.business_id == business_id)) or 0


async def pool_number_for_update(conn: AsyncConnection, e164: str) -> Any:
    return (await conn.execute(sa.select(phone_numbers).where(phone_numbers.c.phone_number == e164)
                               .with_for_update())).first()


async def business_number(conn: AsyncConnection, e164: str, business_id: str, *, lock: bool = False) -> Any:
    query = sa.select(phone_numbers).where(phone_numbers.c.phone_number == e164,
                                           phone_numbers.c.business_id == business_id)
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def update_number(conn: AsyncConnection, number_id: Any, values: dict[str, Any]) -> Any:
    return (await conn.execute(phone_numbers.update().where(phone_numbers.c.id == number_id).values(**values)
                               .returning(phone_numbers))).first()


async def number_route(conn: AsyncConnection, e164: str) -> Any:
    """Who answers a number: the number's row joined with its agent (None when the number is not assigned)."""
    a, pn = agents.c, phone_numbers.c
    return (await conn.execute(sa.select(pn.phone_number, pn.business_id, pn.agent_id, a.name.label("agent_name"),
                                         a.provider_assistant_id,
                                         a.config["recording_disclosure"].label("recording_disclosure"))
                               .select_from(phone_numbers.outerjoin(agents, a.id == pn.agent_id))
                               .where(pn.phone_number == e164, pn.business_id.is_not(None)))).first()


async def leased_number_update(conn: AsyncConnection, number_id: Any, token: str, values: dict[str, Any]) -> Any:
    """Write a number's row and end its lease, if this request still holds it (else None)."""
    return (await conn.execute(phone_numbers.update().where(phone_numbers.c.id == number_id,
                                                            leases.held(phone_numbers, token))
                               .values(**values, **leases.RELEASED).returning(phone_numbers))).first()


async def add_to_pool(conn: AsyncConnection, rows: list[dict[str, Any]], now: datetime) -> int:
    """Insert the numbers not held yet; returns how many were added. Every row names the same columns: one INSERT of
    many rows takes its columns from the first, so another row's extra values would be dropped without a word."""
    if not rows:
        return 0
    if len({frozenset(r) for r in rows}) > 1:
        raise ValueError("add_to_pool: rows name different columns; give every row the same keys")
    result = await conn.execute(
        insert(phone_numbers).values([{**r, "id": new_id(), "created_at": now} for r in rows])
        .on_conflict_do_nothing(index_elements=["phone_number"]).returning(phone_numbers.c.id))
    return len(result.all())


# -- the stock of numbers bought from the SMS provider (services.agents.stock) ----------------------------------

def _in_place(country: str, area_code: str) -> sa.ColumnElement[bool]:
    """Numbers of a stock place: its country, and its area code unless it is "" (anywhere in the country)."""
    pn = phone_numbers.c
    return sa.and_(pn.country == country, *((pn.area_code == area_code,) if area_code else ()))


async def free_in_place(conn: AsyncConnection, country: str, area_code: str, capabilities: tuple[str, ...]) -> int:
    """Free pool numbers of a stock place with these capabilities (leased ones count: a lease ends)."""
    pn = phone_numbers.c
    query = sa.select(sa.func.count()).where(pn.business_id.is_(None), pn.blocked.is_(False),
                                             _in_place(country, area_code))
    for cap in capabilities:
        query = query.where(pn.capabilities[cap].as_boolean().is_(True))
    return await conn.scalar(query) or 0


async def bought_since(conn: AsyncConnection, since: datetime) -> int:
    """Numbers bought from the provider and pooled at or after `since` (those given back since are not counted)."""
    pn = phone_numbers.c
    return await conn.scalar(sa.select(sa.func.count()).where(pn.provider_ref.is_not(None), pn.pooled_at >= since)) \
        or 0


async def idle_numbers(conn: AsyncConnection, cutoff: datetime, limit: int) -> list[Any]:
    """Bought numbers free since before `cutoff` where no stock place has had demand since then."""
    pn, st = phone_numbers.c, number_stock.c
    wanted = sa.exists().where(st.country == pn.country, sa.or_(st.area_code == "", st.area_code == pn.area_code),
                               st.demand_at >= cutoff)
    query = (sa.select(phone_numbers)
             .where(pn.provider_ref.is_not(None), pn.business_id.is_(None), leases.free(phone_numbers),
                    sa.func.coalesce(pn.pooled_at, pn.created_at) < cutoff, ~wanted)
             .order_by(pn.created_at, pn.id).limit(limit))
    return list((await conn.execute(query)).all())


async def delete_leased_free_number(conn: AsyncConnection, number_id: Any, token: str) -> bool:
    """Delete a free number whose lease `token` still holds; whether it was."""
    pn = phone_numbers.c
    return (await conn.execute(phone_numbers.delete().where(pn.id == number_id, pn.business_id.is_(None),
                                                            leases.held(phone_numbers, token)))).rowcount == 1


def _upsert_place(country: str, area_code: str, now: datetime, state: str) -> Any:
    return insert(number_stock).values(id=new_id(), country=country, area_code=area_code, state=state,
                                       requested_at=now, demand_at=now)


async def request_stock(conn: AsyncConnection, country: str, area_code: str, now: datetime) -> Any:
    """A purchase asked for in a place: its row, made if new; demand noted now, and a stocked place requested
    again (an unavailable one stays so until the job finds numbers)."""
    statement = _upsert_place(country, area_code, now, "requested")
    stocked = number_stock.c.state == "stocked"
    statement = statement.on_conflict_do_update(
        constraint="number_stock_place",
        set_={"demand_at": now, "state": sa.case((stocked, "requested"), else_=number_stock.c.state),
              "requested_at": sa.case((stocked, now), else_=number_stock.c.requested_at)})
    return (await conn.execute(statement.returning(number_stock))).first()


async def note_demand(conn: AsyncConnection, country: str, area_code: str, now: datetime) -> None:
    """A number of this place was taken: the place is kept stocked from now on (made `stocked` if new)."""
    await conn.execute(_upsert_place(country, area_code, now, "stocked").on_conflict_do_update(
        constraint="number_stock_place", set_={"demand_at": now}))


async def wanted_places(conn: AsyncConnection, since: datetime) -> list[Any]:
    """Stock places with demand since `since`, not leased, longest requested first."""
    st = number_stock.c
    return list((await conn.execute(sa.select(number_stock).where(st.demand_at >= since, leases.free(number_stock))
                                    .order_by(st.requested_at, st.id))).all())


async def leased_place_update(conn: AsyncConnection, place_id: Any, token: str, values: dict[str, Any]) -> Any:
    """Write a stock place and end its lease, if `token` still holds it (else None)."""
    return (await conn.execute(number_stock.update().where(number_stock.c.id == place_id,
                                                           leases.held(number_stock, token))
                               .values(**values, **leases.RELEASED).returning(number_stock))).first()
