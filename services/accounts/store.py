"""The queries on the accounts schema (services/accounts/schema.py), used by the repositories."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases, retention, standing
from core.db import Prepared, lock_until_commit
from services.accounts.schema import (
    SCHEMA,
    api_keys,
    businesses,
    magic_links,
    payment_events,
    provisionings,
    sessions,
    signup_attempts,
    usage_log,
    users,
    x402_payments,
)

# -- signup -------------------------------------------------------------------------------

async def recent_signup_attempts(conn: AsyncConnection, client_ip: str, since: datetime) -> tuple[int, datetime | None]:
    """How many signups this address attempted since `since`, and the oldest of them. Holds the address's
    lock until the transaction ends (so the limit holds under concurrency) and forgets older attempts."""
    same_ip = signup_attempts.c.client_ip == client_ip
    recent = signup_attempts.c.created_at > since
    await lock_until_commit(conn, "signup-address", client_ip)
    await conn.execute(signup_attempts.delete().where(same_ip, ~recent))  # keep the table small
    count, oldest = (await conn.execute(sa.select(sa.func.count(), sa.func.min(signup_attempts.c.created_at))
                                        .where(same_ip, recent))).one()
    return count, oldest


async def add_signup_attempt(conn: AsyncConnection, client_ip: str, at: datetime) -> None:
    await conn.execute(signup_attempts.insert().values(client_ip=client_ip, created_at=at))


async def email_taken(conn: AsyncConnection, email: str) -> bool:
    return await conn.scalar(sa.select(users.c.id).where(users.c.email == email)) is not None


async def insert_user(conn: AsyncConnection, **values: Any) -> bool:
    """False when the email was taken meanwhile (the unique index decides)."""
    inserted = await conn.execute(insert(users).values(**values).on_conflict_do_nothing().returning(users.c.id))
    return inserted.first() is not None


async def insert_business(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(businesses.insert().values(**values).returning(businesses))).one()
    return row


# -- keys, magic links, sessions ------------------------------------------------------------

async def insert_key(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(api_keys.insert().values(**values).returning(api_keys))).one()
    return row


async def key_by_hash(conn: AsyncConnection, key_hashes: list[str]) -> sa.Row[Any] | None:
    """The key stored under any of these hashes (its forms under each version of the server secret held)."""
    return (await conn.execute(sa.select(api_keys).where(api_keys.c.key_hash.in_(key_hashes)))).first()


async def keys_of(conn: AsyncConnection, account_id: str) -> Sequence[Any]:
    return (await conn.execute(sa.select(api_keys).where(api_keys.c.account_id == account_id)
                               .order_by(api_keys.c.created_at.desc()))).all()


async def change_key(conn: AsyncConnection, key_id: str, account_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    """The account's key after writing `values` (read as it is when there are none), or None."""
    mine = (api_keys.c.id == key_id, api_keys.c.account_id == account_id)
    if not values:
        return (await conn.execute(sa.select(api_keys).where(*mine))).first()
    row: sa.Row[Any] | None = (await conn.execute(api_keys.update().where(*mine).values(**values)
                                                  .returning(api_keys))).first()
    return row


def first_revocation(now: datetime) -> sa.ColumnElement[Any]:
    """A key's revoked_at after revoking it now: the first revocation time stays."""
    return sa.func.coalesce(api_keys.c.revoked_at, now)


async def account_by_email(conn: AsyncConnection, email: str) -> str | None:
    """The account of an address, locked until the transaction ends (its sign-in links are counted under it)."""
    found = await conn.scalar(sa.select(users.c.id).where(users.c.email == email).with_for_update())
    return None if found is None else str(found)


async def pending_magic_links(conn: AsyncConnection, account_id: str, now: datetime) -> int:
    return await conn.scalar(sa.select(sa.func.count()).select_from(magic_links).where(
        magic_links.c.account_id == account_id, magic_links.c.used_at.is_(None), magic_links.c.expires_at > now)) or 0


async def insert_magic_link(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(magic_links.insert().values(**values))


async def use_magic_link(conn: AsyncConnection, token_hashes: list[str], now: datetime) -> sa.Row[Any] | None:
    """An unused, unexpired link stored under any of these hashes (its account_id and whether it was mailed),
    marking it used; None otherwise."""
    return (await conn.execute(
        magic_links.update()
        .where(magic_links.c.token_hash.in_(token_hashes), magic_links.c.used_at.is_(None),
               magic_links.c.expires_at > now)
        .values(used_at=now).returning(magic_links.c.account_id, magic_links.c.mailed))).first()


async def confirm_email(conn: AsyncConnection, account_id: str, now: datetime) -> None:
    await conn.execute(users.update().where(users.c.id == account_id, users.c.email_confirmed_at.is_(None))
                       .values(email_confirmed_at=now))


async def insert_session(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(sessions.insert().values(**values))


async def session_by_hash(conn: AsyncConnection, token_hashes: list[str]) -> Any:
    """The session stored under any of these hashes, with the one it is stored under."""
    return (await conn.execute(sa.select(sessions.c.token_hash, sessions.c.account_id, sessions.c.expires_at,
                                         sessions.c.last_used_at)
                               .where(sessions.c.token_hash.in_(token_hashes)))).first()


_TOUCH_SESSION = Prepared(sessions.update().where(sessions.c.token_hash == sa.bindparam("token_hash"),
                                                  sessions.c.last_used_at < sa.bindparam("now"))
                          .values(last_used_at=sa.bindparam("now")).returning(sessions.c.last_used_at))


async def touch_session(conn: asyncpg.Connection, token_hash: str, now: datetime) -> None:
    """Record a use of the session (on a raw pool's connection: callers read it inside a connection of their
    own)."""
    await _TOUCH_SESSION.fetchrow(conn, token_hash=token_hash, now=now)


async def end_session(conn: AsyncConnection, token_hashes: list[str]) -> int:
    return (await conn.execute(sessions.delete().where(sessions.c.token_hash.in_(token_hashes)))).rowcount


# A key or session stored again under the current version of the server secret (services.accounts.secret_keys).
_REHASH = {table.name: Prepared(table.update().where(column == sa.bindparam("old_hash"))
                                .values({column.name: sa.bindparam("new_hash")}).returning(column))
           for table, column in ((api_keys, api_keys.c.key_hash), (sessions, sessions.c.token_hash))}


async def rehash(conn: asyncpg.Connection, table: str, old_hash: str, new_hash: str) -> None:
    """Store a key (`api_keys`) or session (`sessions`) under `new_hash` (on a raw pool's connection, as
    touch_session)."""
    await _REHASH[table].fetchrow(conn, old_hash=old_hash, new_hash=new_hash)


async def end_sessions_of(conn: AsyncConnection, account_id: str) -> int:
    return (await conn.execute(sessions.delete().where(sessions.c.account_id == account_id))).rowcount


async def end_dead_sessions_of(conn: AsyncConnection, account_id: str, now: datetime, idle: timedelta) -> None:
    """Drop the account's sessions that expired or went idle (at each sign-in, so the table holds few of them)."""
    await conn.execute(sessions.delete().where(sessions.c.account_id == account_id, sa.or_(
        sessions.c.expires_at <= now, sessions.c.last_used_at <= now - idle)))


async def expire_magic_links_of(conn: AsyncConnection, account_id: str, now: datetime) -> None:
    """Make the account's unused sign-in links unusable."""
    await conn.execute(magic_links.update().where(magic_links.c.account_id == account_id,
                                                  magic_links.c.used_at.is_(None), magic_links.c.expires_at > now)
                       .values(expires_at=now))


# -- businesses (workspaces) -----------------------------------------------------------------

WORKSPACE_COLUMNS = (businesses.c.id, businesses.c.name, businesses.c.lifecycle_state, businesses.c.metadata,
                     businesses.c.external_ref, businesses.c.created_at, businesses.c.updated_at,
                     businesses.c.subscription_status, businesses.c.timezone, businesses.c.plan_id,
                     businesses.c.paid_through, businesses.c.trial_ends_at, businesses.c.retention,
                     businesses.c.data_deletion_due_at, businesses.c.data_deleted_at)
# The provisioning saga's columns a workspace read answers, prefixed so they sit beside the workspace's own.
PROVISIONING_PREFIX = "provisioning_"
PROVISIONING_COLUMNS = ("status", "step", "agent_id", "phone_number", "forward_to", "attempts", "last_error",
                         "next_attempt_at")
# One statement, prepared: the workspace and its signup's provisioning (a workspace made later has none).
_WORKSPACE_BY_ID = Prepared(
    sa.select(*WORKSPACE_COLUMNS,
              *(provisionings.c[name].label(PROVISIONING_PREFIX + name) for name in PROVISIONING_COLUMNS))
    .select_from(businesses.outerjoin(provisionings, provisionings.c.business_id == businesses.c.id))
    .where(businesses.c.id == sa.bindparam("id")))


async def workspace_by_id(conn: asyncpg.Connection, business_id: str) -> asyncpg.Record | None:
    """The workspace's row with its provisioning's columns (PROVISIONING_PREFIX, null when it has none), or None
    when there is no such workspace."""
    return await _WORKSPACE_BY_ID.fetchrow(conn, id=business_id)


async def checkout_facts(conn: AsyncConnection, business_id: str) -> Any:
    """What opening a checkout for the business needs: its billing columns and its owner's address."""
    b = businesses.c
    return (await conn.execute(sa.select(b.id, b.lifecycle_state, b.subscription_status, b.subscription_id, b.plan_id,
                                         b.customer_id, b.checkout_session_id, users.c.email)
                               .select_from(businesses.join(users, users.c.id == b.account_id))
                               .where(b.id == business_id))).first()


async def workspace_owner(conn: AsyncConnection, business_id: str) -> Any:
    """The business with its account's email (and when it was confirmed), and the phone it forwards calls to."""
    return (await conn.execute(sa.select(businesses.c.id, businesses.c.name, businesses.c.account_id, users.c.email,
                                         users.c.email_confirmed_at, businesses.c.phone_forward_to)
                               .select_from(businesses.join(users, users.c.id == businesses.c.account_id))
                               .where(businesses.c.id == business_id))).first()


def workspaces_of(business_ids: Iterable[str]) -> sa.Select[Any]:
    return sa.select(businesses).where(businesses.c.id.in_(business_ids))


async def business_of_account(conn: AsyncConnection, account_id: str, business_id: str) -> bool:
    return await conn.scalar(sa.select(businesses.c.id).where(businesses.c.id == business_id,
                                                              businesses.c.account_id == account_id)) is not None


async def standings_of(conn: AsyncConnection, account_id: str, business_id: str | None = None) -> dict[str, str]:
    """The account's businesses (or the one of them named) with their core.standing values: those a principal may
    reach, so not one whose data was deleted after its teardown (a tombstone: privacy.teardown_deletion)."""
    query = sa.select(businesses.c.id, businesses.c.lifecycle_state, businesses.c.subscription_status).where(
        businesses.c.account_id == account_id, businesses.c.data_deleted_at.is_(None))
    if business_id is not None:
        query = query.where(businesses.c.id == business_id)
    return {str(r.id): standing.standing(r.lifecycle_state, r.subscription_status)
            for r in (await conn.execute(query)).all()}


async def business_ids_of(conn: AsyncConnection, account_id: str) -> list[str]:
    return [str(b) for b in (await conn.scalars(sa.select(businesses.c.id)
                                                .where(businesses.c.account_id == account_id))).all()]


async def lock_business(conn: AsyncConnection, business_id: str) -> sa.Row[Any] | None:
    return await business_row(conn, business_id, lock=True)


async def business_row(conn: AsyncConnection, business_id: str, *, lock: bool = False) -> sa.Row[Any] | None:
    query = sa.select(businesses).where(businesses.c.id == business_id)
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def update_business(conn: AsyncConnection, business_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    row: sa.Row[Any] | None = (await conn.execute(businesses.update().where(businesses.c.id == business_id)
                                                  .values(**values).returning(businesses))).first()
    return row


async def subscriptions_of(conn: AsyncConnection, business_ids: Iterable[str]) -> Sequence[Any]:
    return (await conn.execute(sa.select(businesses.c.id, businesses.c.subscription_status)
                               .where(businesses.c.id.in_(business_ids)).order_by(businesses.c.created_at))).all()


# -- usage --------------------------------------------------------------------------------

# The usage_log columns of a gateway's entry, in its rows' order, with their types (unnest's arrays).
_USAGE_TYPES = {"id": "uuid", "account_id": "uuid", "business_id": "uuid", "api_key_id": "uuid", "endpoint": "text",
                "method": "text", "status_code": "int", "call_id": "text", "cost_cents": "int", "created_at": "timestamptz"}
USAGE_COLUMNS = tuple(_USAGE_TYPES)
_USAGE_ARRAYS = ", ".join(f"${n}::{kind}[]" for n, kind in enumerate(_USAGE_TYPES.values(), 1))
_KEYS, _LAST_USED = len(USAGE_COLUMNS) + 1, len(USAGE_COLUMNS) + 2
# One statement, so no transaction around it (one round trip): the rows, an array a column, where an id already there
# adds nothing (a gateway resends a batch whose answer it lost, with the same ids), and each key's last use moved on.
# It answers how many rows were new.
_APPEND_USAGE_SQL = f"""
    WITH added AS (
        INSERT INTO {SCHEMA}.{usage_log.name} ({", ".join(USAGE_COLUMNS)}) SELECT * FROM unnest({_USAGE_ARRAYS})
        ON CONFLICT (id) DO NOTHING RETURNING 1
    ), touched AS (
        UPDATE {SCHEMA}.api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
        FROM unnest(${_KEYS}::uuid[], ${_LAST_USED}::timestamptz[]) AS u(id, at) WHERE k.id = u.id
    )
    SELECT count(*) FROM added
"""


async def append_usage(conn: asyncpg.Connection, records: list[tuple[Any, ...]],
                       last_used: dict[str, datetime]) -> int:
    """Append usage rows (in USAGE_COLUMNS order) and move each key's last_used_at on; returns how many rows were
    new. Idempotent on the rows' ids: a batch stored before is stored again as nothing, with no error."""
    columns = [[record[n] for record in records] for n in range(len(USAGE_COLUMNS))]
    added: int = await conn.fetchval(_APPEND_USAGE_SQL, *columns, list(last_used), list(last_used.values()))
    return added


def usage_of(account_id: str, business_id: str | None, start: datetime | None, end: datetime | None) -> sa.Select[Any]:
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


async def accounts_of(conn: AsyncConnection, business_ids: Iterable[str]) -> dict[str, str]:
    """The account of each of these businesses that still exists."""
    return {str(b): str(a) for b, a in await conn.execute(
        sa.select(businesses.c.id, businesses.c.account_id).where(businesses.c.id.in_(business_ids)))}


async def append_call_usage(conn: AsyncConnection, entries: list[dict[str, Any]]) -> int:
    """Calls' usage entries (id, account_id, business_id, call_id, minutes, cost_cents, created_at), once per call;
    returns how many were new."""
    if not entries:
        return 0
    inserted = await conn.execute(
        insert(usage_log).on_conflict_do_nothing(index_elements=["call_id"], index_where=sa.text("method = 'CALL'"))
        .returning(usage_log.c.id),
        [{**e, "api_key_id": None, "endpoint": CALL_ENDPOINT, "method": CALL_METHOD, "status_code": 200}
         for e in entries])
    return len(inserted.all())


def usage_retention(keep: timedelta) -> retention.Rule:
    """The usage log's API request entries older than `keep` go; a call's entry stays (minutes_used sums them).
    The usage_log_requests index serves the scan."""
    return retention.Rule("accounts.usage_log", keep, retention.older_than(
        usage_log, usage_log.c.created_at, usage_log.c.method != CALL_METHOD))


async def minutes_used(conn: AsyncConnection, business_ids: Iterable[str]) -> dict[str, int]:
    rows = await conn.execute(sa.select(usage_log.c.business_id, sa.func.sum(usage_log.c.minutes))
                              .where(usage_log.c.business_id.in_(business_ids), usage_log.c.call_id.is_not(None))
                              .group_by(usage_log.c.business_id))
    return {str(b): int(m or 0) for b, m in rows}


# -- payments and provisioning --------------------------------------------------------------

def claim_due_provisionings(limit: int, lease: timedelta) -> sa.Update:
    """Take the leases of up to `limit` sagas due to run (pending or retrying, next attempt passed, lease free),
    skipping rows another runner is claiming; the claimed rows with their tokens."""
    due = (sa.select(provisionings.c.id)
           .where(provisionings.c.status.in_(("pending", "retrying")), provisionings.c.next_attempt_at <= sa.func.now(),
                  leases.free(provisionings))
           .order_by(provisionings.c.next_attempt_at).limit(limit).with_for_update(skip_locked=True))
    return (provisionings.update().where(provisionings.c.id.in_(due.scalar_subquery()))
            .values(lease_token=sa.func.gen_random_uuid(), lease_until=sa.func.now() + lease)
            .returning(provisionings))


async def record_payment_event(conn: AsyncConnection, event_id: str, type_: str, business_id: str | None,
                               created_at: datetime, received_at: datetime) -> bool:
    """Remember a provider event; False when it was seen before (a redelivery)."""
    return await conn.scalar(insert(payment_events).values(
        event_id=event_id, type=type_, business_id=business_id, created_at=created_at, received_at=received_at)
        .on_conflict_do_nothing().returning(payment_events.c.event_id)) is not None


async def lock_business_by(conn: AsyncConnection, business_id: str | None, subscription_id: str | None,
                           customer_id: str | None) -> sa.Row[Any] | None:
    """The business an event is about, locked: by our id, else by the provider's subscription or customer."""
    for column, value in ((businesses.c.id, business_id), (businesses.c.subscription_id, subscription_id),
                          (businesses.c.customer_id, customer_id)):
        if value:
            row = (await conn.execute(sa.select(businesses).where(column == value).with_for_update())).first()
            if row is not None:
                return row
    return None


def billing_due(now: datetime, grace: timedelta) -> sa.Select[Any]:
    """Workspaces billing has to move now (payments_domain.billing_move decides; this finds its candidates):
    overdue past the grace period, trials ended without a checkout, x402 periods run out, canceled subscriptions
    of running workspaces, and workspaces billing paused that are paid again."""
    b = businesses.c
    return sa.select(b.id).where(sa.or_(
        sa.and_(b.lifecycle_state == "active", sa.or_(
            sa.and_(b.subscription_status == "past_due", b.past_due_since <= now - grace),
            sa.and_(b.subscription_status == "incomplete", b.trial_ends_at <= now),
            b.paid_through <= now - grace)),
        sa.and_(b.subscription_status == "canceled", b.lifecycle_state.in_(("active", "paused"))),
        sa.and_(b.lifecycle_state == "paused", b.paused_by_billing, b.subscription_status.in_(("trialing", "active")),
                b.past_due_since.is_(None), sa.or_(b.paid_through.is_(None), b.paid_through > now))))


async def add_provisioning(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(provisionings.insert().values(**values))


async def leased_provisioning_update(conn: AsyncConnection, provisioning_id: str, token: str,
                                     values: dict[str, Any]) -> sa.Row[Any] | None:
    """The saga row after `values`, or None when its lease is no longer `token`'s (another runner took it over)."""
    row: sa.Row[Any] | None = (await conn.execute(
        provisionings.update().where(provisionings.c.id == provisioning_id, leases.held(provisionings, token))
        .values(**values).returning(provisionings))).first()
    return row


async def update_waiting_provisioning(conn: AsyncConnection, business_id: str, values: dict[str, Any]) -> None:
    """Move the business's saga on if it is still waiting for its payment."""
    await conn.execute(provisionings.update().where(provisionings.c.business_id == business_id,
                                                    provisionings.c.status == "waiting_payment").values(**values))


async def provisioning_of(conn: AsyncConnection, business_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(provisionings).where(provisionings.c.business_id == business_id))).first()


async def delete_account(conn: AsyncConnection, account_id: str) -> None:
    """Undo a signup whose payment did not settle: the account and everything made with it."""
    owned = sa.select(businesses.c.id).where(businesses.c.account_id == account_id).scalar_subquery()
    await conn.execute(provisionings.delete().where(provisionings.c.business_id.in_(owned)))
    await conn.execute(api_keys.delete().where(api_keys.c.account_id == account_id))
    await conn.execute(magic_links.delete().where(magic_links.c.account_id == account_id))
    await conn.execute(businesses.delete().where(businesses.c.account_id == account_id))
    await conn.execute(users.delete().where(users.c.id == account_id))


async def add_x402_payment(conn: AsyncConnection, **values: Any) -> bool:
    """Record a payment before it is settled; False when its authorization (payer, nonce) is recorded already."""
    return (await conn.execute(insert(x402_payments).values(**values)
                               .on_conflict_do_nothing(index_elements=["payer", "nonce"])
                               .returning(x402_payments.c.id))).first() is not None


async def x402_payment(conn: AsyncConnection, *, id: str | None = None, payer: str | None = None,
                       nonce: str | None = None, lock: bool = False) -> sa.Row[Any] | None:
    """One payment, by id or by its authorization (payer, nonce)."""
    query = sa.select(x402_payments).where(x402_payments.c.id == id if id else sa.and_(
        x402_payments.c.payer == payer, x402_payments.c.nonce == nonce))
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def update_x402_payment(conn: AsyncConnection, payment_id: str, values: dict[str, Any]) -> None:
    await conn.execute(x402_payments.update().where(x402_payments.c.id == payment_id).values(**values))


async def business_of_x402_payment(conn: AsyncConnection, payment_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(businesses).join(x402_payments, x402_payments.c.business_id == businesses.c.id)
                               .where(x402_payments.c.id == payment_id))).first()


async def has_pending_x402(conn: AsyncConnection, business_id: str) -> bool:
    p = x402_payments.c
    return bool((await conn.execute(sa.select(sa.exists().where(p.business_id == business_id,
                                                                p.status.in_(("pending", "unresolved")))))).scalar())


def claim_due_x402_payments(limit: int, retry_after: timedelta) -> sa.Update:
    """Take up to `limit` pending payments due to be asked about again (the next attempt pushed `retry_after` on,
    which is the claim's lease), skipping rows another worker is claiming."""
    p = x402_payments.c
    due = (sa.select(p.id).where(p.status == "pending", p.next_attempt_at <= sa.func.now())
           .order_by(p.next_attempt_at).limit(limit).with_for_update(skip_locked=True))
    return (x402_payments.update().where(p.id.in_(due.scalar_subquery()))
            .values(attempts=p.attempts + 1, next_attempt_at=sa.func.now() + retry_after)
            .returning(x402_payments))


def renewals_to_remind(now: datetime, ahead: timedelta) -> sa.Select[Any]:
    """Active x402 workspaces whose paid period ends within `ahead` and whose owner was not told about it yet."""
    b = businesses.c
    return sa.select(b.id).where(b.payment_capture == "x402", b.lifecycle_state == "active",
                                 b.subscription_status == "active", b.paid_through > now,
                                 b.paid_through <= now + ahead,
                                 b.renewal_reminded_through.is_distinct_from(b.paid_through))


# -- workspaces billed on the account's subscription (services.accounts.billing.workspace_billing) ---------------------

async def lock_payer(conn: AsyncConnection, account_id: str, *, lock: bool = True) -> sa.Row[Any] | None:
    """The account's paying business (its first that pays for itself: the signup's), locked until the transaction
    ends (`lock`): workspaces are added to its subscription one at a time."""
    b = businesses.c
    query = (sa.select(businesses).where(b.account_id == account_id, b.billed_on.is_(None))
             .order_by(b.created_at, b.id).limit(1))
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def delete_pending_workspace(conn: AsyncConnection, business_id: str, token: str) -> None:
    """Undo a workspace the payment provider refused to bill, if its request still holds its lease."""
    await conn.execute(businesses.delete().where(businesses.c.id == business_id, leases.held(businesses, token),
                                                 businesses.c.subscription_status == "incomplete"))


async def retry_pending_workspace(conn: AsyncConnection, business_id: str, token: str, at: datetime) -> None:
    """Leave a workspace the provider did not answer about to the billing worker from `at` (its lease ends then)."""
    await conn.execute(businesses.update().where(businesses.c.id == business_id, leases.held(businesses, token))
                       .values(lease_until=at))


async def delete_business(conn: AsyncConnection, business_id: str) -> None:
    """Undo a workspace whose x402 payment was refused (its payment goes with it)."""
    await conn.execute(businesses.delete().where(businesses.c.id == business_id))


async def live_workspaces(conn: AsyncConnection, account_id: str) -> Sequence[Any]:
    """The account's workspaces that are not torn down (what the plan's limit counts), with their billing."""
    b = businesses.c
    return (await conn.execute(sa.select(b.id, b.billed_on, b.subscription_status, b.lease_until)
                               .where(b.account_id == account_id, b.lifecycle_state != "inactive"))).all()


async def billed_on(conn: AsyncConnection, payer_id: str, *, lock: bool = False) -> Sequence[Any]:
    """The workspaces billed on a business's subscription, not torn down."""
    query = sa.select(businesses).where(businesses.c.billed_on == payer_id, businesses.c.lifecycle_state != "inactive")
    return (await conn.execute(query.with_for_update() if lock else query)).all()


def pending_workspaces(now: datetime) -> sa.Select[Any]:
    """Workspaces still being added to their payer's subscription whose request's lease ran out (the billing worker
    finishes them)."""
    b = businesses.c
    return sa.select(b.id, b.account_id).where(b.billed_on.is_not(None), b.subscription_status == "incomplete",
                                               b.lease_until.is_not(None), b.lease_until <= now)


def zones_of(business_ids: Iterable[str]) -> sa.Select[Any]:
    return (sa.select(businesses.c.id, businesses.c.name, businesses.c.timezone)
            .where(businesses.c.id.in_(business_ids)).order_by(businesses.c.created_at, businesses.c.id))
