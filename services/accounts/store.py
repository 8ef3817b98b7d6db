"""Tables of the accounts schema and the queries on them (each takes a connection or the raw pool)."""
from __future__ import annotations

from datetime import datetime

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core.db import Prepared
from core.inbox import inbox_table
from core.outbox import outbox_table

SCHEMA = "accounts"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

users = sa.Table(
    "users", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("email", sa.Text, nullable=False, unique=True),
    sa.Column("email_confirmed_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
)

businesses = sa.Table(
    "businesses", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("lifecycle_state", sa.Text, nullable=False),
    sa.Column("metadata", JSONB, nullable=False),
    sa.Column("external_ref", sa.Text),
    sa.Column("business_type", sa.Text),
    sa.Column("website", sa.Text),
    sa.Column("phone_forward_to", sa.Text),
    sa.Column("plan_id", sa.Text, nullable=False),
    sa.Column("subscription_status", sa.Text, nullable=False),
    sa.Column("trial_ends_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

api_keys = sa.Table(
    "api_keys", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id)),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("prefix", sa.Text, nullable=False),
    sa.Column("key_hash", sa.Text, nullable=False, unique=True),
    sa.Column("scopes", ARRAY(sa.Text), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("last_used_at", Ts),
    sa.Column("expires_at", Ts),
    sa.Column("revoked_at", Ts),
)

magic_links = sa.Table(
    "magic_links", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("used_at", Ts),
)

sessions = sa.Table(
    "sessions", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
)

signup_attempts = sa.Table(
    "signup_attempts", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("client_ip", sa.Text, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
)

usage_log = sa.Table(
    "usage_log", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, nullable=False),
    sa.Column("business_id", Uuid),
    sa.Column("api_key_id", Uuid),  # null for a call's entry
    sa.Column("endpoint", sa.Text, nullable=False),
    sa.Column("method", sa.Text, nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("call_id", sa.Text),
    sa.Column("cost_cents", sa.Integer, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("minutes", sa.Integer, nullable=False, server_default="0"),  # billed minutes of a call's entry
)

sa.Index("businesses_account_created", businesses.c.account_id, businesses.c.created_at.desc())
sa.Index("api_keys_account", api_keys.c.account_id)
sa.Index("signup_attempts_ip_time", signup_attempts.c.client_ip, signup_attempts.c.created_at)
sa.Index("usage_log_account_created", usage_log.c.account_id, usage_log.c.created_at.desc())
sa.Index("usage_log_business_calls", usage_log.c.business_id, postgresql_where=sa.text("call_id IS NOT NULL"))
# One entry per call (a redelivered call event adds nothing).
sa.Index("usage_log_call_once", usage_log.c.call_id, unique=True, postgresql_where=sa.text("method = 'CALL'"))

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)


# -- signup -------------------------------------------------------------------------------

async def recent_signup_attempts(conn: AsyncConnection, client_ip: str, since: datetime) -> tuple[int, datetime | None]:
    """How many signups this address attempted since `since`, and the oldest of them. Holds the address's
    lock until the transaction ends (so the limit holds under concurrency) and forgets older attempts."""
    same_ip = signup_attempts.c.client_ip == client_ip
    recent = signup_attempts.c.created_at > since
    await conn.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext(client_ip))))
    await conn.execute(signup_attempts.delete().where(same_ip, ~recent))  # keep the table small
    count, oldest = (await conn.execute(sa.select(sa.func.count(), sa.func.min(signup_attempts.c.created_at))
                                        .where(same_ip, recent))).one()
    return count, oldest


async def add_signup_attempt(conn: AsyncConnection, client_ip: str, at: datetime) -> None:
    await conn.execute(signup_attempts.insert().values(client_ip=client_ip, created_at=at))


async def email_taken(conn: AsyncConnection, email: str) -> bool:
    return await conn.scalar(sa.select(users.c.id).where(users.c.email == email)) is not None


async def insert_user(conn: AsyncConnection, **values) -> bool:
    """False when the email was taken meanwhile (the unique index decides)."""
    inserted = await conn.execute(insert(users).values(**values).on_conflict_do_nothing().returning(users.c.id))
    return inserted.first() is not None


async def insert_business(conn: AsyncConnection, **values):
    return (await conn.execute(businesses.insert().values(**values).returning(businesses))).first()


# -- keys, magic links, sessions ------------------------------------------------------------

async def insert_key(conn: AsyncConnection, **values):
    return (await conn.execute(api_keys.insert().values(**values).returning(api_keys))).first()


async def key_by_hash(conn: AsyncConnection, key_hash: str):
    return (await conn.execute(sa.select(api_keys).where(api_keys.c.key_hash == key_hash))).first()


async def keys_of(conn: AsyncConnection, account_id: str) -> list:
    return (await conn.execute(sa.select(api_keys).where(api_keys.c.account_id == account_id)
                               .order_by(api_keys.c.created_at.desc()))).all()


async def change_key(conn: AsyncConnection, key_id: str, account_id: str, values: dict):
    """The account's key after writing `values` (read as it is when there are none), or None."""
    mine = (api_keys.c.id == key_id, api_keys.c.account_id == account_id)
    if not values:
        return (await conn.execute(sa.select(api_keys).where(*mine))).first()
    return (await conn.execute(api_keys.update().where(*mine).values(**values).returning(api_keys))).first()


def first_revocation(now: datetime):
    """A key's revoked_at after revoking it now: the first revocation time stays."""
    return sa.func.coalesce(api_keys.c.revoked_at, now)


async def insert_magic_link(conn: AsyncConnection, **values) -> None:
    await conn.execute(magic_links.insert().values(**values))


async def use_magic_link(conn: AsyncConnection, token_hash: str, now: datetime) -> str | None:
    """The account of an unused, unexpired link, marking it used; None otherwise."""
    row = (await conn.execute(
        magic_links.update()
        .where(magic_links.c.token_hash == token_hash, magic_links.c.used_at.is_(None), magic_links.c.expires_at > now)
        .values(used_at=now).returning(magic_links.c.account_id))).first()
    return None if row is None else str(row.account_id)


async def insert_session(conn: AsyncConnection, **values) -> None:
    await conn.execute(sessions.insert().values(**values))


async def session_by_hash(conn: AsyncConnection, token_hash: str):
    return (await conn.execute(sa.select(sessions.c.account_id, sessions.c.expires_at)
                               .where(sessions.c.token_hash == token_hash))).first()


# -- businesses (workspaces) -----------------------------------------------------------------

WORKSPACE_COLUMNS = (businesses.c.id, businesses.c.name, businesses.c.lifecycle_state, businesses.c.metadata,
                     businesses.c.external_ref, businesses.c.created_at, businesses.c.updated_at)
_WORKSPACE_BY_ID = Prepared(sa.select(*WORKSPACE_COLUMNS).where(businesses.c.id == sa.bindparam("id")))


async def workspace_by_id(pool: asyncpg.Pool, business_id: str) -> asyncpg.Record | None:
    return await _WORKSPACE_BY_ID.fetchrow(pool, id=business_id)


async def workspace_owner(conn: AsyncConnection, business_id: str):
    """The business with its account's email."""
    return (await conn.execute(sa.select(businesses.c.id, businesses.c.name, businesses.c.account_id, users.c.email)
                               .select_from(businesses.join(users, users.c.id == businesses.c.account_id))
                               .where(businesses.c.id == business_id))).first()


def workspaces_of(business_ids) -> sa.Select:
    return sa.select(businesses).where(businesses.c.id.in_(business_ids))


async def business_of_account(conn: AsyncConnection, account_id: str, business_id: str) -> bool:
    return await conn.scalar(sa.select(businesses.c.id).where(businesses.c.id == business_id,
                                                              businesses.c.account_id == account_id)) is not None


async def business_ids_of(conn: AsyncConnection, account_id: str) -> list[str]:
    return [str(b) for b in (await conn.scalars(sa.select(businesses.c.id)
                                                .where(businesses.c.account_id == account_id))).all()]


async def lock_business(conn: AsyncConnection, business_id: str):
    return (await conn.execute(sa.select(businesses).where(businesses.c.id == business_id).with_for_update())).first()


async def update_business(conn: AsyncConnection, business_id: str, values: dict):
    return (await conn.execute(businesses.update().where(businesses.c.id == business_id).values(**values)
                               .returning(businesses))).first()


async def subscriptions_of(conn: AsyncConnection, business_ids) -> list:
    return (await conn.execute(sa.select(businesses.c.id, businesses.c.subscription_status)
                               .where(businesses.c.id.in_(business_ids)).order_by(businesses.c.created_at))).all()


# -- usage --------------------------------------------------------------------------------

USAGE_COPY_COLUMNS = ("id", "account_id", "business_id", "api_key_id", "endpoint", "method", "status_code", "call_id",
                      "cost_cents", "created_at")
_TOUCH_KEYS_SQL = f"""
    UPDATE {SCHEMA}.api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id
"""


async def append_usage(pool: asyncpg.Pool, records: list[tuple], last_used: dict) -> None:
    """Bulk-append usage rows (in USAGE_COPY_COLUMNS order) with COPY and move each key's last_used_at on."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.copy_records_to_table(usage_log.name, schema_name=SCHEMA, records=records,
                                         columns=list(USAGE_COPY_COLUMNS))
        await conn.execute(_TOUCH_KEYS_SQL, list(last_used), list(last_used.values()))


def usage_of(account_id: str, business_id: str | None, start: datetime | None, end: datetime | None) -> sa.Select:
    query = sa.select(usage_log).where(usage_log.c.account_id == account_id)
    if business_id:
        query = query.where(usage_log.c.business_id == business_id)
    if start:
        query = query.where(usage_log.c.created_at >= start)
    if end:
        query = query.where(usage_log.c.created_at < end)
    return query


# -- calls' usage --------------------------------------------------------------------------

CALL_METHOD, CALL_ENDPOINT = "CALL", "/api/v1/calls"  # how a call's entry reads in the usage log


async def account_of(conn: AsyncConnection, business_id: str) -> str | None:
    found = await conn.scalar(sa.select(businesses.c.account_id).where(businesses.c.id == business_id))
    return None if found is None else str(found)


async def append_call_usage(conn: AsyncConnection, *, entry_id: str, account_id: str, business_id: str,
                            call_id: str, minutes: int, cost_cents: int, at: datetime) -> bool:
    """The call's usage entry, once per call; False when it was there already."""
    inserted = await conn.execute(insert(usage_log).values(
        id=entry_id, account_id=account_id, business_id=business_id, api_key_id=None, endpoint=CALL_ENDPOINT,
        method=CALL_METHOD, status_code=200, call_id=call_id, cost_cents=cost_cents, minutes=minutes, created_at=at)
        .on_conflict_do_nothing(index_elements=["call_id"], index_where=sa.text("method = 'CALL'"))
        .returning(usage_log.c.id))
    return inserted.first() is not None


async def minutes_used(conn: AsyncConnection, business_ids) -> dict[str, int]:
    rows = await conn.execute(sa.select(usage_log.c.business_id, sa.func.sum(usage_log.c.minutes))
                              .where(usage_log.c.business_id.in_(business_ids), usage_log.c.call_id.is_not(None))
                              .group_by(usage_log.c.business_id))
    return {str(b): int(m or 0) for b, m in rows}
