"""Where the account use cases (service.py, sign_in.py, lifecycle.py) keep users, workspaces, keys, sign-in links,
sessions and usage: `AccountsUnit`, the service's unit of work (core.uow) with its repositories bound to one
transaction's or read's handle (these, and billing's, OAuth's and the provisioning saga's), and `HotPath`, the
request hot path's statements on the raw pool (core.uow.Database.pooled: a workspace read, a session's touch, a
rotated hash, the gateways' usage appended). They only store and find; the rules stay in domain.py and the use cases
(a key not usable, a workspace not found, a lifecycle move).

`SqlAccounts` and `PooledAccounts` are the production ones, over store.py (the same statements); the fast test
tier has in-memory ones (tests/memory/accounts.py), and the same behaviour tests run on both
(tests/storage_contracts.py). Billing (billing_repository.py), OAuth (oauth_repository.py), the provisioning saga
(provisioning_repository.py) and the erasures of a person (privacy_repository.py) have their own repositories on the
same unit."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.pagination import Page, Paged, fetch_page
from core.records import or_none, record
from core.retention import Rule
from core.uow import Connections, Database, Unit, UnitOfWork
from services.accounts import store
from services.accounts.billing_repository import SqlBilling, business_record
from services.accounts.exports_repository import SqlExports
from services.accounts.oauth_repository import OAuthRepository, SqlOAuth
from services.accounts.privacy_repository import SqlDataRetention, SqlErasureReplay, SqlErasures
from services.accounts.provisioning_repository import SqlProvisioning
from services.accounts.records import (
    ApiKeyRecord,
    Business,
    CheckoutFacts,
    SessionRecord,
    Subscription,
    UsageRecord,
    UsedSignInLink,
    Workspace,
    WorkspaceOwner,
    WorkspaceProvisioning,
    Zone,
)
from services.accounts.schema import businesses, outbox, usage_log
from services.accounts.teardown_repository import SqlDataDeletions


class AccountsRepository(Protocol):
    async def add_business(self, **values: Any) -> Business:
        """Record a workspace (schema.businesses' columns)."""

    async def lock_business(self, business_id: str) -> Business | None:
        """The workspace, held for update, or None."""

    async def change_business(self, business_id: str, values: dict[str, Any]) -> Business | None:
        """The workspace after `values`, or None when there is none."""

    async def business_of_account(self, account_id: str, business_id: str) -> bool: ...

    async def standings(self, account_id: str, business_id: str | None = None) -> dict[str, str]:
        """The account's workspaces (or the one of them named) with their core.standing values."""

    async def add_key(self, **values: Any) -> ApiKeyRecord:
        """Record an API key (schema.api_keys' columns). One per key hash."""

    async def key_by_hash(self, key_hashes: list[str]) -> ApiKeyRecord | None:
        """The key stored under any of these hashes."""

    async def keys_of(self, account_id: str) -> list[ApiKeyRecord]:
        """The account's keys, newest first."""

    async def change_key(self, key_id: str, account_id: str, values: dict[str, Any], *,
                         revoke_at: datetime | None = None) -> ApiKeyRecord | None:
        """The account's key after `values` (and revoked at `revoke_at` unless it was revoked before; read as it
        is with neither), or None when the account has no such key."""

    async def session(self, token_hashes: list[str]) -> SessionRecord | None:
        """The session stored under any of these hashes, or None."""

    # -- signup (store.py's statements of the same names) --

    async def count_signup_attempts(self, client_ip: str, since: datetime) -> tuple[int, datetime | None]: ...

    async def add_signup_attempt(self, client_ip: str, at: datetime) -> None: ...

    async def email_taken(self, email: str) -> bool: ...

    async def add_user(self, **values: Any) -> bool:
        """False when the address has an account already."""

    async def delete_account(self, account_id: str) -> None: ...

    # -- sign-in links and sessions --

    async def account_by_email(self, email: str) -> str | None: ...

    async def pending_magic_links(self, account_id: str, now: datetime) -> int: ...

    async def add_magic_link(self, **values: Any) -> None: ...

    async def use_magic_link(self, token_hashes: list[str], now: datetime) -> UsedSignInLink | None: ...

    async def confirm_email(self, account_id: str, now: datetime) -> None: ...

    async def add_session(self, **values: Any) -> None: ...

    async def end_session(self, token_hashes: list[str]) -> int: ...

    async def end_sessions_of(self, account_id: str) -> int: ...

    async def end_dead_sessions_of(self, account_id: str, now: datetime, idle: timedelta) -> None: ...

    async def expire_magic_links_of(self, account_id: str, now: datetime) -> None: ...

    # -- workspaces' reads and usage --

    async def workspace_owner(self, business_id: str) -> WorkspaceOwner | None: ...

    async def checkout_facts(self, business_id: str) -> CheckoutFacts | None: ...

    async def workspaces_page(self, business_ids: list[str], page: Page) -> Paged:
        """A page of the workspaces (`Workspace` records), newest first."""

    async def zones_of(self, business_ids: list[str]) -> list[Zone]:
        """Oldest first."""

    async def usage_page(self, account_id: str, business_id: str | None, start: datetime | None,
                         end: datetime | None, page: Page) -> Paged:
        """A page of the usage log (`UsageRecord`s), newest first."""

    async def subscriptions_of(self, business_ids: list[str]) -> list[Subscription]: ...

    async def minutes_used(self, business_ids: list[str]) -> dict[str, int]: ...

    async def accounts_of(self, business_ids: set[str]) -> dict[str, str]: ...

    async def append_call_usage(self, entries: list[dict[str, Any]]) -> int:
        """How many entries were new (a call is billed once)."""


class SqlAccounts:
    """`AccountsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_business(self, **values: Any) -> Business:
        return business_record(await store.insert_business(self.conn, **values))

    async def lock_business(self, business_id: str) -> Business | None:
        return or_none(business_record, await store.lock_business(self.conn, business_id))

    async def change_business(self, business_id: str, values: dict[str, Any]) -> Business | None:
        return or_none(business_record, await store.update_business(self.conn, business_id, values))

    async def business_of_account(self, account_id: str, business_id: str) -> bool:
        return await store.business_of_account(self.conn, account_id, business_id)

    async def standings(self, account_id: str, business_id: str | None = None) -> dict[str, str]:
        return await store.standings_of(self.conn, account_id, business_id)

    async def add_key(self, **values: Any) -> ApiKeyRecord:
        return record(ApiKeyRecord, (await store.insert_key(self.conn, **values))._mapping)

    async def key_by_hash(self, key_hashes: list[str]) -> ApiKeyRecord | None:
        row = await store.key_by_hash(self.conn, key_hashes)
        return record(ApiKeyRecord, row._mapping) if row is not None else None

    async def keys_of(self, account_id: str) -> list[ApiKeyRecord]:
        return [record(ApiKeyRecord, row._mapping) for row in await store.keys_of(self.conn, account_id)]

    async def change_key(self, key_id: str, account_id: str, values: dict[str, Any], *,
                         revoke_at: datetime | None = None) -> ApiKeyRecord | None:
        if revoke_at is not None:
            values = {**values, "revoked_at": store.first_revocation(revoke_at)}
        row = await store.change_key(self.conn, key_id, account_id, values)
        return record(ApiKeyRecord, row._mapping) if row is not None else None

    async def session(self, token_hashes: list[str]) -> SessionRecord | None:
        row = await store.session_by_hash(self.conn, token_hashes)
        return record(SessionRecord, row._mapping) if row is not None else None

    async def count_signup_attempts(self, client_ip: str, since: datetime) -> tuple[int, datetime | None]:
        return await store.recent_signup_attempts(self.conn, client_ip, since)

    async def add_signup_attempt(self, client_ip: str, at: datetime) -> None:
        await store.add_signup_attempt(self.conn, client_ip, at)

    async def email_taken(self, email: str) -> bool:
        return await store.email_taken(self.conn, email)

    async def add_user(self, **values: Any) -> bool:
        return await store.insert_user(self.conn, **values)

    async def delete_account(self, account_id: str) -> None:
        await store.delete_account(self.conn, account_id)

    async def account_by_email(self, email: str) -> str | None:
        return await store.account_by_email(self.conn, email)

    async def pending_magic_links(self, account_id: str, now: datetime) -> int:
        return await store.pending_magic_links(self.conn, account_id, now)

    async def add_magic_link(self, **values: Any) -> None:
        await store.insert_magic_link(self.conn, **values)

    async def use_magic_link(self, token_hashes: list[str], now: datetime) -> UsedSignInLink | None:
        return or_none(lambda row: record(UsedSignInLink, row._mapping),
                       await store.use_magic_link(self.conn, token_hashes, now))

    async def confirm_email(self, account_id: str, now: datetime) -> None:
        await store.confirm_email(self.conn, account_id, now)

    async def add_session(self, **values: Any) -> None:
        await store.insert_session(self.conn, **values)

    async def end_session(self, token_hashes: list[str]) -> int:
        return await store.end_session(self.conn, token_hashes)

    async def end_sessions_of(self, account_id: str) -> int:
        return await store.end_sessions_of(self.conn, account_id)

    async def end_dead_sessions_of(self, account_id: str, now: datetime, idle: timedelta) -> None:
        await store.end_dead_sessions_of(self.conn, account_id, now, idle)

    async def expire_magic_links_of(self, account_id: str, now: datetime) -> None:
        await store.expire_magic_links_of(self.conn, account_id, now)

    async def workspace_owner(self, business_id: str) -> WorkspaceOwner | None:
        row = await store.workspace_owner(self.conn, business_id)
        return record(WorkspaceOwner, row._mapping) if row is not None else None

    async def checkout_facts(self, business_id: str) -> CheckoutFacts | None:
        row = await store.checkout_facts(self.conn, business_id)
        return record(CheckoutFacts, row._mapping) if row is not None else None

    async def workspaces_page(self, business_ids: list[str], page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.workspaces_of(business_ids), businesses.c.created_at,
                                 businesses.c.id, page)
        return paged.map(lambda row: record(Workspace, row._mapping))

    async def zones_of(self, business_ids: list[str]) -> list[Zone]:
        return [record(Zone, row._mapping) for row in await self.conn.execute(store.zones_of(business_ids))]

    async def usage_page(self, account_id: str, business_id: str | None, start: datetime | None,
                         end: datetime | None, page: Page) -> Paged:
        paged = await fetch_page(self.conn, store.usage_of(account_id, business_id, start, end),
                                 usage_log.c.created_at, usage_log.c.id, page)
        return paged.map(lambda row: record(UsageRecord, row._mapping))

    async def subscriptions_of(self, business_ids: list[str]) -> list[Subscription]:
        return [record(Subscription, row._mapping) for row in await store.subscriptions_of(self.conn, business_ids)]

    async def minutes_used(self, business_ids: list[str]) -> dict[str, int]:
        return await store.minutes_used(self.conn, business_ids)

    async def accounts_of(self, business_ids: set[str]) -> dict[str, str]:
        return await store.accounts_of(self.conn, business_ids)

    async def append_call_usage(self, entries: list[dict[str, Any]]) -> int:
        return await store.append_call_usage(self.conn, entries)


class AccountsUnit(Unit):
    """The accounts service's unit of work on one transaction's or read's connection (core.uow.UnitOfWork)."""

    def __init__(self, handle: AsyncConnection):
        super().__init__()
        self.accounts: AccountsRepository = SqlAccounts(handle)
        self.billing = SqlBilling(handle)
        self.oauth: OAuthRepository = SqlOAuth(handle)
        self.provisioning = SqlProvisioning(handle)
        self.erasures = SqlErasures(handle)
        self.erasure_replay = SqlErasureReplay(handle)
        self.data_retention = SqlDataRetention(handle)
        self.data_deletions = SqlDataDeletions(handle)
        self.exports = SqlExports(handle)


def accounts_units(connections: Connections) -> UnitOfWork[AccountsUnit]:
    """The accounts service's unit of work on `connections`; the events its units raise go to the accounts outbox."""
    return UnitOfWork(connections, AccountsUnit, outbox)


class HotPath(Protocol):
    """The request hot path's statements, each one round trip outside any unit of work."""

    async def workspace(self, business_id: str) -> tuple[Workspace, WorkspaceProvisioning | None] | None:
        """The workspace and its signup's provisioning (None when it has none), or None when there is no such
        workspace."""

    async def touch_session(self, token_hash: str, now: datetime) -> None:
        """Record a use of the session (its idle time restarts)."""

    async def rehash(self, table: str, old_hash: str, new_hash: str) -> None:
        """Store a key's or session's secret under its current hash (its first use since a rotation)."""

    async def append_usage(self, records: list[tuple[Any, ...]], last_used: dict[str, datetime]) -> int:
        """Append the gateways' usage rows (store.USAGE_COLUMNS order), but none whose id is there already (a batch
        resent), and move the keys' last use on; returns how many rows were new."""


class PooledAccounts:
    """`HotPath` on a raw pool's connection (core.uow.Database.pooled): prepared statements, as store.py
    has them."""

    def __init__(self, database: Database):
        self.database = database

    async def workspace(self, business_id: str) -> tuple[Workspace, WorkspaceProvisioning | None] | None:
        async with self.database.pooled() as conn:
            row = await store.workspace_by_id(conn, business_id)
        if row is None:
            return None
        saga = row[store.PROVISIONING_PREFIX + "status"] is not None
        return record(Workspace, row), record(WorkspaceProvisioning, row, store.PROVISIONING_PREFIX) if saga else None

    async def touch_session(self, token_hash: str, now: datetime) -> None:
        async with self.database.pooled() as conn:
            await store.touch_session(conn, token_hash, now)

    async def rehash(self, table: str, old_hash: str, new_hash: str) -> None:
        async with self.database.pooled() as conn:
            await store.rehash(conn, table, old_hash, new_hash)

    async def append_usage(self, records: list[tuple[Any, ...]], last_used: dict[str, datetime]) -> int:
        async with self.database.pooled() as conn:
            return await store.append_usage(conn, records, last_used)


def retention_rules(keep_usage: timedelta) -> list[Rule]:
    """The accounts' own records past their time (core.retention): the usage log's request entries."""
    return [store.usage_retention(keep_usage)]
