"""Tables of the calls schema and the queries on them (each takes a connection)."""
from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB, UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import aggregates
from core.inbox import inbox_table
from core.outbox import outbox_table
from services.calls.domain import PROGRESS

SCHEMA = "calls"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

calls = sa.Table(
    "calls", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("agent_name", sa.Text),
    sa.Column("lead_id", Uuid),
    sa.Column("direction", sa.Text, nullable=False),  # inbound, outbound
    sa.Column("status", sa.Text, nullable=False),  # domain.STATUSES
    sa.Column("to_number", sa.Text, nullable=False),
    sa.Column("from_number", sa.Text),
    sa.Column("name", sa.Text),
    sa.Column("context", sa.Text),
    sa.Column("first_message", sa.Text),
    sa.Column("max_duration", sa.Integer, nullable=False),
    sa.Column("webhook_url", sa.Text),
    sa.Column("compliance", sa.Text, nullable=False),  # skip, enforce
    sa.Column("variables", JSONB, nullable=False),
    sa.Column("provider_call_id", sa.Text, unique=True),
    sa.Column("ended_reason", sa.Text),
    sa.Column("duration", sa.Integer, nullable=False, server_default="0"),
    sa.Column("summary", sa.Text),
    sa.Column("recording_url", sa.Text),
    sa.Column("quality_dimensions", JSONB),
    # From the provider's messages: whether anyone answered, what was said and extracted, what it cost.
    sa.Column("answered", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("transcript", sa.Text),
    sa.Column("structured_data", JSONB),
    sa.Column("cost_cents", sa.Integer, nullable=False, server_default="0"),
    sa.Column("started_at", Ts),
    sa.Column("ended_at", Ts),
    sa.Column("reported_at", Ts),  # when the end-of-call report was applied (once)
    # When the provider says the current status began (its message's timestamp); orders in-progress and forwarding.
    sa.Column("status_at", Ts),
    sa.Column("forwarded_to", sa.Text),  # the phone a ring-first (or transferred) call was offered to
    # The communication run touch the call is for: the caller's run reference and touch id (on its events).
    sa.Column("external_ref", sa.Text),
    sa.Column("touch_id", sa.Text),
    # Whether the call opened with the agent's recording disclosure and why (domain.recording_disclosure), and the
    # other party's answer from the end-of-call report ({type, granted_at}; domain.recording_consent).
    sa.Column("recording_disclosure", JSONB),
    sa.Column("recording_consent", JSONB),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

# A client's Idempotency-Key, per account, for 24 h: the request it came with (as a hash) and the call it made.
idempotency_keys = sa.Table(
    "idempotency_keys", metadata,
    sa.Column("account_id", Uuid, primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("request_hash", sa.Text, nullable=False),
    sa.Column("call_id", Uuid),  # null while the first request is still placing its call
    sa.Column("created_at", Ts, nullable=False),
)

_newest = (calls.c.created_at.desc(), calls.c.id.desc())
# It carries what analytics counts, so a report reads a window index-only (core.aggregates).
sa.Index("calls_business_created", calls.c.business_id, *_newest, postgresql_include=["agent_id", "status", "duration"])
sa.Index("calls_business_agent", calls.c.business_id, calls.c.agent_id, *_newest)
sa.Index("calls_business_status", calls.c.business_id, calls.c.status, *_newest)
sa.Index("idempotency_keys_created", idempotency_keys.c.created_at)
# The calls still waiting for their outcome (the reaper's scan).
sa.Index("calls_open", calls.c.created_at,
         postgresql_where=sa.text(f"status IN ({', '.join(repr(s) for s in PROGRESS)})"))

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)


# -- calls --------------------------------------------------------------------------------

async def insert_call(conn: AsyncConnection, **values):
    return (await conn.execute(calls.insert().values(**values).returning(calls))).first()


async def update_call(conn: AsyncConnection, call_id: str, values: dict):
    return (await conn.execute(calls.update().where(calls.c.id == call_id).values(**values).returning(calls))).first()


def calls_of(business_ids, filters) -> sa.Select:
    """The businesses' calls that pass the filters (repository.CallFilter)."""
    c = calls.c
    wheres = [c.business_id.in_(business_ids)]
    for column, value in ((c.agent_id, filters.agent_id), (c.status, filters.status), (c.direction, filters.direction)):
        if value:
            wheres.append(column == value)
    if filters.created_from is not None:
        wheres.append(c.created_at >= filters.created_from)
    if filters.created_before is not None:
        wheres.append(c.created_at < filters.created_before)
    return sa.select(calls).where(*wheres)


def transcripts_of(business_ids, agent_id: str | None, since: datetime) -> sa.Select:
    query = sa.select(calls).where(calls.c.business_id.in_(business_ids), calls.c.transcript.is_not(None),
                                   calls.c.created_at >= since)
    return query.where(calls.c.agent_id == agent_id) if agent_id else query


# -- idempotency keys ------------------------------------------------------------------------

async def claim_key(conn: AsyncConnection, account_id: str, key: str, request_hash: str, now: datetime,
                    expired_before: datetime):
    """Claim an idempotency key for a new request; the existing claim (request_hash, call_id) when it is taken.
    A claim older than `expired_before` is forgotten first."""
    k = idempotency_keys.c
    await conn.execute(idempotency_keys.delete().where(k.account_id == account_id, k.key == key,
                                                       k.created_at < expired_before))
    claimed = (await conn.execute(insert(idempotency_keys).values(
        account_id=account_id, key=key, request_hash=request_hash, created_at=now)
        .on_conflict_do_nothing().returning(k.key))).first()
    if claimed is not None:
        return None
    return (await conn.execute(sa.select(k.request_hash, k.call_id).where(k.account_id == account_id,
                                                                          k.key == key))).first()


async def settle_key(conn: AsyncConnection, account_id: str, key: str, call_id: str) -> None:
    await conn.execute(idempotency_keys.update().where(idempotency_keys.c.account_id == account_id,
                                                       idempotency_keys.c.key == key).values(call_id=call_id))


async def release_key(conn: AsyncConnection, account_id: str, key: str) -> None:
    """Forget a claim whose request failed, so that a retry places the call."""
    await conn.execute(idempotency_keys.delete().where(idempotency_keys.c.account_id == account_id,
                                                       idempotency_keys.c.key == key))


async def calls_for_messages(conn: AsyncConnection, our_ids: list[str], provider_ids: list[str]) -> list:
    """The calls a batch of provider messages is about (by our ids, or by the provider's), locked in id order so
    that concurrent batches do not deadlock."""
    found = sa.or_(calls.c.id.in_(our_ids), calls.c.provider_call_id.in_(provider_ids))
    return (await conn.execute(sa.select(calls).where(found).order_by(calls.c.id).with_for_update())).all()


async def update_calls(conn: AsyncConnection, changes: dict[str, dict]) -> None:
    """Write each call's changes (by call id): one statement per set of changed columns, for all the calls that
    changed those."""
    by_columns: dict[tuple, list[dict]] = {}
    for call_id, values in changes.items():
        by_columns.setdefault(tuple(sorted(values)), []).append({"_id": call_id, **values})
    for columns, rows in by_columns.items():
        statement = calls.update().where(calls.c.id == sa.bindparam("_id")).values(
            {column: sa.bindparam(column) for column in columns})
        await conn.execute(statement, rows)


def silent_calls(now: datetime, margin_seconds: float, limit: int) -> sa.Select:
    """Calls without an outcome past their max_duration plus the margin, oldest first."""
    deadline = calls.c.created_at + sa.literal_column("interval '1 second'") * (calls.c.max_duration + margin_seconds)
    return (sa.select(calls).where(calls.c.status.in_(PROGRESS), deadline < now)
            .order_by(calls.c.created_at).limit(limit))


async def recording_of(conn: AsyncConnection, call_id: str) -> str | None:
    return await conn.scalar(sa.select(calls.c.recording_url).where(calls.c.id == call_id))


async def call_by_provider_id(conn: AsyncConnection, provider_call_id: str):
    return (await conn.execute(sa.select(calls).where(calls.c.provider_call_id == provider_call_id))).first()


async def insert_call_once(conn: AsyncConnection, **values):
    """Insert a call unless its provider call is recorded already (then None)."""
    return (await conn.execute(insert(calls).values(**values).on_conflict_do_nothing(index_elements=["provider_call_id"])
                               .returning(calls))).first()


async def aggregate_calls(conn: AsyncConnection, query: aggregates.Query, agent_id: str | None) -> list:
    """The calls of the query's businesses in its window, counted per group (core.aggregates): how many, how many
    completed, their total duration; of one agent when named."""
    measures = {"count": sa.func.count(), "completed": sa.func.count().filter(calls.c.status == "completed"),
                "duration": sa.func.coalesce(sa.func.sum(calls.c.duration), 0)}
    where = (calls.c.agent_id == agent_id,) if agent_id else ()
    return (await conn.execute(aggregates.aggregate(calls, calls.c.created_at, query, measures, where))).all()
