"""Where the workspace and API-key use cases (service.py, lifecycle.py) keep workspaces, keys and find sessions: a
repository bound to one unit of work's handle, and the workspace read on the raw pool. They only store and find;
the rules stay in domain.py and the use cases (a key not usable, a workspace not found, a lifecycle move).

`SqlAccounts` and `PooledWorkspaces` are the production ones, over store.py (the same statements); the fast test
tier has in-memory ones (tests/memory/accounts.py), and the same behaviour tests run on both
(tests/storage_contracts.py). Signup, sign-in links and sessions' writes, usage, billing's own reads and
provisioning stay on store.py directly."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

import asyncpg
from sqlalchemy.ext.asyncio import AsyncConnection

from services.accounts import store


class AccountsRepository(Protocol):
    async def add_business(self, **values: Any) -> Any:
        """Record a workspace (schema.businesses' columns); its row."""

    async def lock_business(self, business_id: str) -> Any | None:
        """The workspace, held for update, or None."""

    async def change_business(self, business_id: str, values: dict[str, Any]) -> Any | None:
        """The workspace after `values`, or None when there is none."""

    async def business_of_account(self, account_id: str, business_id: str) -> bool: ...

    async def standings(self, account_id: str, business_id: str | None = None) -> dict[str, str]:
        """The account's workspaces (or the one of them named) with their core.standing values."""

    async def add_key(self, **values: Any) -> Any:
        """Record an API key (schema.api_keys' columns); its row. One per key hash."""

    async def key_by_hash(self, key_hashes: list[str]) -> Any | None:
        """The key stored under any of these hashes."""

    async def keys_of(self, account_id: str) -> list[Any]:
        """The account's keys, newest first."""

    async def change_key(self, key_id: str, account_id: str, values: dict[str, Any], *,
                         revoke_at: datetime | None = None) -> Any | None:
        """The account's key after `values` (and revoked at `revoke_at` unless it was revoked before; read as it
        is with neither), or None when the account has no such key."""

    async def session(self, token_hashes: list[str]) -> Any | None:
        """The session stored under any of these hashes: its token_hash, account_id, expires_at and last_used_at, or
        None."""


class SqlAccounts:
    """`AccountsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_business(self, **values: Any) -> Any:
        return await store.insert_business(self.conn, **values)

    async def lock_business(self, business_id: str) -> Any | None:
        return await store.lock_business(self.conn, business_id)

    async def change_business(self, business_id: str, values: dict[str, Any]) -> Any | None:
        return await store.update_business(self.conn, business_id, values)

    async def business_of_account(self, account_id: str, business_id: str) -> bool:
        return await store.business_of_account(self.conn, account_id, business_id)

    async def standings(self, account_id: str, business_id: str | None = None) -> dict[str, str]:
        return await store.standings_of(self.conn, account_id, business_id)

    async def add_key(self, **values: Any) -> Any:
        return await store.insert_key(self.conn, **values)

    async def key_by_hash(self, key_hashes: list[str]) -> Any | None:
        return await store.key_by_hash(self.conn, key_hashes)

    async def keys_of(self, account_id: str) -> list[Any]:
        return await store.keys_of(self.conn, account_id)

    async def change_key(self, key_id: str, account_id: str, values: dict[str, Any], *,
                         revoke_at: datetime | None = None) -> Any | None:
        if revoke_at is not None:
            values = {**values, "revoked_at": store.first_revocation(revoke_at)}
        return await store.change_key(self.conn, key_id, account_id, values)

    async def session(self, token_hashes: list[str]) -> Any | None:
        return await store.session_by_hash(self.conn, token_hashes)


class WorkspaceLookup(Protocol):
    async def workspace(self, business_id: str) -> tuple[Any, Any | None] | None:
        """The workspace's row (store.WORKSPACE_COLUMNS) and its signup's provisioning (None when it has none), or
        None when there is no such workspace."""


class PooledWorkspaces:
    """`WorkspaceLookup` on the raw pool: one prepared statement (store.workspace_by_id), outside any unit of
    work."""

    def __init__(self, pool: asyncpg.Pool):
        self.pool = pool

    async def workspace(self, business_id: str) -> tuple[Any, Any | None] | None:
        return await store.workspace_by_id(self.pool, business_id)
