"""The queries on the calls schema's tables (schema.py), each taking a connection; the repositories alone call them."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from contracts.calls import PROGRESS
from core import aggregates, leases
from services.calls.domain import CallFilter
from services.calls.schema import calls, idempotency_keys, outbox, rounds, tool_calls

# -- calls --------------------------------------------------------------------------------

async def insert_call(conn: AsyncConnection, **values: Any) -> Any:
    return (await conn.execute(calls.insert().values(**values).returning(calls))).first()


async def update_call(conn: AsyncConnection, call_id: str, values: dict[str, Any]) -> Any:
    return (await conn.execute(calls.update().where(calls.c.id == call_id).values(**values).returning(calls))).first()


def calls_of(business_ids: Iterable[str], filters: CallFilter) -> sa.Select[Any]:
    """The businesses' calls that pass the filters."""
    c = calls.c
    wheres: list[sa.ColumnElement[bool]] = [c.business_id.in_(business_ids)]
    for column, value in ((c.agent_id, filters.agent_id), (c.status, filters.status), (c.direction, filters.direction)):
        if value:
            wheres.append(column == value)
    if filters.created_from is not None:
        wheres.append(c.created_at >= filters.created_from)
    if filters.created_before is not None:
        wheres.append(c.created_at < filters.created_before)
    return sa.select(calls).where(*wheres)


def transcripts_of(business_ids: Iterable[str], agent_id: str | None, since: datetime) -> sa.Select[Any]:
    query = sa.select(calls).where(calls.c.business_id.in_(business_ids), calls.c.transcript.is_not(None),
                                   calls.c.created_at >= since)
    return query.where(calls.c.agent_id == agent_id) if agent_id else query


# -- idempotency keys ------------------------------------------------------------------------

async def claim_key(conn: AsyncConnection, account_id: str, key: str, request_hash: str, now: datetime,
                    expired_before: datetime, token: str, lease: timedelta) -> Any:
    """Claim an idempotency key for a new request, under a lease (core.leases) of `token` for `lease`; the
    existing claim (request_hash, call_id, placing) when it is taken. A claim older than `expired_before` is
    forgotten first."""
    k = idempotency_keys.c
    await conn.execute(idempotency_keys.delete().where(k.account_id == account_id, k.key == key,
                                                       k.created_at < expired_before))
    claimed = (await conn.execute(insert(idempotency_keys).values(
        account_id=account_id, key=key, request_hash=request_hash, lease_token=token,
        lease_until=sa.func.now() + lease, created_at=now).on_conflict_do_nothing().returning(k.key))).first()
    if claimed is not None:
        return None
    return (await conn.execute(sa.select(k.request_hash, k.call_id, k.lease_token.is_not(None).label("placing"))
                               .where(k.account_id == account_id, k.key == key))).first()


def _claim(account_id: str, key: str) -> tuple[sa.ColumnElement[bool], ...]:
    return idempotency_keys.c.account_id == account_id, idempotency_keys.c.key == key


async def take_over_key(conn: AsyncConnection, account_id: str, key: str, token: str, lease: timedelta) -> bool:
    """Lease to `token` a claim whose request is still placing its call but whose lease lapsed (its holder
    stopped), unless another retry took it over first."""
    k = idempotency_keys.c
    return (await conn.execute(idempotency_keys.update()
                               .where(*_claim(account_id, key), k.lease_token.is_not(None), leases.free(idempotency_keys))
                               .values(lease_token=token, lease_until=sa.func.now() + lease)
                               .returning(k.key))).first() is not None


async def hold_key(conn: AsyncConnection, account_id: str, key: str, token: str, call_id: str) -> bool:
    """Name the claim's call, if `token` still holds its lease."""
    return (await conn.execute(idempotency_keys.update()
                               .where(*_claim(account_id, key), leases.held(idempotency_keys, token))
                               .values(call_id=call_id).returning(idempotency_keys.c.key))).first() is not None


async def settle_key(conn: AsyncConnection, account_id: str, key: str, token: str, call_id: str) -> None:
    """The claim's call is placed: named, and the lease released (if `token` still holds it)."""
    await conn.execute(idempotency_keys.update().where(*_claim(account_id, key), leases.held(idempotency_keys, token))
                       .values(call_id=call_id, **leases.RELEASED))


async def lapse_key(conn: AsyncConnection, account_id: str, key: str, token: str) -> None:
    """End the lease of a claim whose call's fate is unknown (if `token` still holds it), keeping the claim and
    the call it names: the next retry takes it over at once and asks the provider (take_over_key)."""
    await conn.execute(idempotency_keys.update().where(*_claim(account_id, key), leases.held(idempotency_keys, token))
                       .values(lease_until=sa.func.now()))


async def release_key(conn: AsyncConnection, account_id: str, key: str, token: str) -> None:
    """Forget a claim whose request failed, so that a retry places the call (if `token` still holds it)."""
    await conn.execute(idempotency_keys.delete().where(*_claim(account_id, key), leases.held(idempotency_keys, token)))


async def calls_for_messages(conn: AsyncConnection, our_ids: list[str], provider_ids: list[str]) -> list[Any]:
    """The calls a batch of provider messages is about (by our ids, or by the provider's), locked in id order so
    that concurrent batches do not deadlock."""
    found = sa.or_(calls.c.id.in_(our_ids), calls.c.provider_call_id.in_(provider_ids))
    return list((await conn.execute(sa.select(calls).where(found).order_by(calls.c.id).with_for_update())).all())


async def update_calls(conn: AsyncConnection, changes: dict[str, dict[str, Any]]) -> None:
    """Write each call's changes (by call id): one statement per set of changed columns, for all the calls that
    changed those."""
    by_columns: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for call_id, values in changes.items():
        by_columns.setdefault(tuple(sorted(values)), []).append({"_id": call_id, **values})
    for columns, rows in by_columns.items():
        statement = calls.update().where(calls.c.id == sa.bindparam("_id")).values(
            {column: sa.bindparam(column) for column in columns})
        await conn.execute(statement, rows)


def _silent(now: datetime, margin_seconds: float) -> tuple[sa.ColumnElement[bool], ...]:
    """Calls without an outcome past their max_duration plus the margin: a range of the `calls_open` index (no
    call's max_duration is negative), then each call's own deadline."""
    deadline = calls.c.created_at + sa.literal_column("interval '1 second'") * (calls.c.max_duration + margin_seconds)
    return (calls.c.status.in_(PROGRESS), calls.c.created_at < now - timedelta(seconds=margin_seconds), deadline < now)


def silent_calls(now: datetime, margin_seconds: float, limit: int) -> sa.Select[Any]:
    """Calls without an outcome past their max_duration plus the margin, oldest first."""
    return sa.select(calls).where(*_silent(now, margin_seconds)).order_by(calls.c.created_at).limit(limit)


def count_silent(now: datetime, margin_seconds: float) -> sa.Select[Any]:
    """How many calls are without an outcome past their max_duration plus the margin."""
    return sa.select(sa.func.count()).select_from(calls).where(*_silent(now, margin_seconds))


async def recording_of(conn: AsyncConnection, call_id: str) -> str | None:
    return await conn.scalar(sa.select(calls.c.recording_url).where(calls.c.id == call_id))


async def call_by_provider_id(conn: AsyncConnection, provider_call_id: str) -> Any:
    return (await conn.execute(sa.select(calls).where(calls.c.provider_call_id == provider_call_id))).first()


async def insert_call_once(conn: AsyncConnection, **values: Any) -> Any:
    """Insert a call unless its provider call is recorded already (then None)."""
    return (await conn.execute(insert(calls).values(**values).on_conflict_do_nothing(index_elements=["provider_call_id"])
                               .returning(calls))).first()


async def recorded_provider_ids(conn: AsyncConnection, provider_ids: list[str]) -> set[str]:
    """Which of the provider's call ids are recorded (by the unique index on provider_call_id); the ids go as one
    array parameter, however many."""
    ids = sa.bindparam("provider_ids", provider_ids, type_=ARRAY(sa.Text))
    found = await conn.execute(sa.select(calls.c.provider_call_id).where(calls.c.provider_call_id == sa.any_(ids)))
    return {row[0] for row in found}


async def claim_round(conn: AsyncConnection, name: str, every: timedelta) -> bool:
    """Take the job's round if it is due (moving its next one `every` on), in one statement: whether it was taken.
    Of replicas claiming at once, one takes it (the row's lock orders them; the others see it not due)."""
    due = sa.func.now() + every
    taken = await conn.execute(insert(rounds).values(name=name, due_at=due).on_conflict_do_update(
        index_elements=[rounds.c.name], set_={"due_at": due}, where=rounds.c.due_at <= sa.func.now())
        .returning(rounds.c.name))
    return taken.first() is not None


async def aggregate_calls(conn: AsyncConnection, query: aggregates.Query, agent_id: str | None) -> list[Any]:
    """The calls of the query's businesses in its window, counted per group (core.aggregates): how many, how many
    completed, their total duration; of one agent when named."""
    measures = {"count": sa.func.count(), "completed": sa.func.count().filter(calls.c.status == "completed"),
                "duration": sa.func.coalesce(sa.func.sum(calls.c.duration), 0)}
    where = (calls.c.agent_id == agent_id,) if agent_id else ()
    return list((await conn.execute(aggregates.aggregate(calls, calls.c.created_at, query, measures, where))).all())


# -- tool calls ------------------------------------------------------------------------------

async def claim_tool_call(conn: AsyncConnection, **values: Any) -> Any:
    """Insert a tool call unless its (call, tool call id) is there already (then None): the unique key decides which
    of two concurrent deliveries runs the tool."""
    return (await conn.execute(insert(tool_calls).values(**values).on_conflict_do_nothing().returning(tool_calls))).first()


async def tool_call(conn: AsyncConnection, call_id: str, tool_call_id: str) -> Any:
    t = tool_calls.c
    return (await conn.execute(sa.select(tool_calls).where(t.call_id == call_id, t.tool_call_id == tool_call_id))).first()


async def settle_tool_call(conn: AsyncConnection, call_id: str, tool_call_id: str, values: dict[str, Any]) -> None:
    t = tool_calls.c
    await conn.execute(tool_calls.update().where(t.call_id == call_id, t.tool_call_id == tool_call_id).values(**values))


DURATION_MS_MAX = 2**31 - 1  # what the duration column holds (24 days): a tool call swept later says that long


async def settle_stale_tool_calls(conn: AsyncConnection, before: datetime, result: str, limit: int) -> int:
    """Settle as failed, with `result`, up to `limit` tool calls still running that were claimed before `before`
    (their run died with its process), oldest first; how many. Rows another transaction holds are skipped (SKIP
    LOCKED), so sweeps running at once settle each tool call once."""
    t = tool_calls.c
    stale = (sa.select(t.call_id, t.tool_call_id).where(t.outcome == "running", t.created_at < before)
             .order_by(t.created_at).limit(limit).with_for_update(skip_locked=True).cte("stale"))
    elapsed = sa.cast(sa.func.least(sa.func.extract("epoch", sa.func.now() - t.created_at) * 1000, DURATION_MS_MAX),
                      sa.Integer)
    settled = await conn.execute(
        tool_calls.update().where(t.call_id == stale.c.call_id, t.tool_call_id == stale.c.tool_call_id)
        .values(outcome="failed", result=result, duration_ms=elapsed).returning(t.tool_call_id))
    return len(settled.all())


TOOL_CALL_PREFIX = "tool_"  # the tool calls' columns in call_with_tool_calls


async def call_with_tool_calls(conn: AsyncConnection, business_ids: Iterable[str], call_id: str) -> list[Any]:
    """The call (of these businesses) joined with its tool calls, oldest first, in one statement (the call's detail
    is a hot read): a row per tool call, each with the call's columns and the tool call's prefixed by
    TOOL_CALL_PREFIX (none of those when it has no tool call); no row when there is no such call."""
    t = tool_calls.c
    query = (sa.select(calls, *(c.label(TOOL_CALL_PREFIX + c.name) for c in t))
             .outerjoin(tool_calls, t.call_id == calls.c.id)
             .where(calls.c.id == call_id, calls.c.business_id.in_(business_ids))
             .order_by(t.created_at, t.tool_call_id))
    return list((await conn.execute(query)).all())


async def tool_calls_of(conn: AsyncConnection, call_ids: list[str]) -> list[Any]:
    """The tool calls of these calls (by the primary key's call_id), each call's oldest first."""
    t = tool_calls.c
    query = sa.select(tool_calls).where(t.call_id.in_(call_ids)).order_by(t.call_id, t.created_at, t.tool_call_id)
    return list((await conn.execute(query)).all())


# -- a person's erasure (services.calls.erasure) -------------------------------------------------

def erasable_calls(business_id: str, phones: list[str], emails: list[str], call_ids: list[str],
                   lead_ids: list[str]) -> sa.Select[Any]:
    """The business's calls not erased yet whose other party has one of the phones (an inbound call's caller, an
    outbound call's callee), whose collected email is one of the emails, or named by id or by lead; oldest first.
    A scan of the business's calls (calls_business_created): erasures are rare."""
    c = calls.c
    found: list[sa.ColumnElement[bool]] = []
    if phones:
        found += [sa.and_(c.direction == "inbound", c.from_number.in_(phones)),
                  sa.and_(c.direction == "outbound", c.to_number.in_(phones))]
    if emails:
        found.append(sa.func.lower(c.structured_data["email"].astext).in_(emails))
    if call_ids:
        found.append(c.id.in_(call_ids))
    if lead_ids:
        found.append(c.lead_id.in_(lead_ids))
    return (sa.select(calls).where(c.business_id == business_id, c.erased_at.is_(None), sa.or_(sa.false(), *found))
            .order_by(c.created_at, c.id))


# What each kind of the privacy retention finds a call still holding (the partial indexes calls_recorded and
# calls_transcribed have the same predicates).
RETAINED: dict[str, sa.ColumnElement[bool]] = {
    "recording": calls.c.recording_url.is_not(None),
    "transcript": sa.or_(calls.c.transcript.is_not(None), calls.c.summary.is_not(None)),
}


def past_retention(business_id: str, kind: str, before: datetime, limit: int) -> sa.Select[Any]:
    """The business's ended calls made before `before` still holding `kind` (RETAINED), oldest first."""
    c = calls.c
    return (sa.select(calls).where(c.business_id == business_id, RETAINED[kind], c.created_at < before,
                                   c.status.not_in(PROGRESS))
            .order_by(c.created_at, c.id).limit(limit))


def business_calls_to_erase(business_id: str, limit: int) -> sa.Select[Any]:
    """Up to `limit` of the business's calls not erased yet, oldest first (a torn-down business's deletion)."""
    c = calls.c
    return (sa.select(calls).where(c.business_id == business_id, c.erased_at.is_(None))
            .order_by(c.created_at, c.id).limit(limit))


async def redact_tool_calls(conn: AsyncConnection, call_ids: list[str], arguments: dict[str, Any],
                            result: str) -> int:
    """Replace the arguments of the calls' tool calls with `arguments`, and a written result with `result` (one
    still running keeps its null); how many tool calls."""
    t = tool_calls.c
    done = await conn.execute(tool_calls.update().where(t.call_id.in_(call_ids)).values(
        arguments=arguments, result=sa.case((t.result.is_(None), None), else_=result)).returning(t.tool_call_id))
    return len(done.all())


async def events_of_calls(conn: AsyncConnection, call_ids: list[str]) -> list[Any]:
    """The outbox rows (id, data) whose event names one of the calls (data.call_id), locked for update."""
    o = outbox.c
    return list((await conn.execute(sa.select(o.id, o.data).where(o.data["call_id"].astext.in_(call_ids))
                                    .order_by(o.id).with_for_update())).all())


async def change_event_data(conn: AsyncConnection, changes: dict[int, dict[str, Any]]) -> None:
    """Write each outbox row's new data (by row id); its event id, type and business stay."""
    if changes:
        statement = outbox.update().where(outbox.c.id == sa.bindparam("_id")).values(data=sa.bindparam("_data"))
        await conn.execute(statement, [{"_id": row_id, "_data": data} for row_id, data in changes.items()])
