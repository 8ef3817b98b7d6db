"""The connector's OAuth storage (schema.oauth_*), on the connection of the caller's transaction or read
(AccountsUnit.oauth): clients, grants, codes and refresh tokens. `SqlOAuth` is the production one, over
oauth_store.py; the fast tier has an in-memory one (tests/memory/accounts.py), held to the same behaviour by
tests/storage_contracts.py."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core.records import record
from services.accounts import oauth_store, store
from services.accounts.records import (
    BusinessName,
    OAuthClient,
    OAuthCode,
    OAuthConnection,
    OAuthGrant,
    OAuthRefreshToken,
)


class OAuthRepository(Protocol):
    async def client(self, client_id: str) -> OAuthClient | None: ...

    async def add_client(self, **values: Any) -> OAuthClient:
        """Record a client (schema.oauth_clients' columns). One per client_id."""

    async def save_client_document(self, **values: Any) -> OAuthClient:
        """A client known by its metadata document, as last fetched (its name, URI, redirect URIs, grant types and
        fetch time replace those of an earlier fetch)."""

    async def has_grant(self, account_id: str, client_id: str) -> bool:
        """Whether the account approved the client (a grant in force)."""

    async def add_grant(self, **values: Any) -> None: ...

    async def grant(self, grant_id: str) -> OAuthGrant | None: ...

    async def touch_grant(self, grant_id: str, now: datetime) -> None: ...

    async def revoke_grant(self, grant_id: str, now: datetime, account_id: str | None = None) -> str | None:
        """Revoke a grant (a revoked one keeps its first revocation time): the account it belonged to, or None when
        there is no such grant (of that account)."""

    async def connections_of(self, account_id: str) -> list[OAuthConnection]:
        """The account's grants in force, newest first, with their client's name."""

    async def businesses_named(self, account_id: str) -> list[BusinessName]:
        """The account's businesses, oldest first."""

    async def business_ids_of(self, account_id: str) -> list[str]: ...

    async def add_code(self, **values: Any) -> None: ...

    async def take_code(self, code_hashes: list[str]) -> OAuthCode | None:
        """The code stored under any of these hashes, with its grant, held for update."""

    async def use_code(self, code_hash: str, now: datetime) -> None: ...

    async def add_refresh_token(self, **values: Any) -> None: ...

    async def take_refresh_token(self, token_hashes: list[str]) -> OAuthRefreshToken | None:
        """The refresh token stored under any of these hashes, with its grant, held for update."""

    async def use_refresh_token(self, token_hash: str, now: datetime) -> None: ...


class SqlOAuth:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def client(self, client_id: str) -> OAuthClient | None:
        row = await oauth_store.client(self.conn, client_id)
        return record(OAuthClient, row._mapping) if row is not None else None

    async def add_client(self, **values: Any) -> OAuthClient:
        return record(OAuthClient, (await oauth_store.insert_client(self.conn, **values))._mapping)

    async def save_client_document(self, **values: Any) -> OAuthClient:
        return record(OAuthClient, (await oauth_store.save_client_document(self.conn, **values))._mapping)

    async def has_grant(self, account_id: str, client_id: str) -> bool:
        return await oauth_store.has_grant(self.conn, account_id, client_id)

    async def add_grant(self, **values: Any) -> None:
        await oauth_store.insert_grant(self.conn, **values)

    async def grant(self, grant_id: str) -> OAuthGrant | None:
        row = await oauth_store.grant(self.conn, grant_id)
        return record(OAuthGrant, row._mapping) if row is not None else None

    async def touch_grant(self, grant_id: str, now: datetime) -> None:
        await oauth_store.touch_grant(self.conn, grant_id, now)

    async def revoke_grant(self, grant_id: str, now: datetime, account_id: str | None = None) -> str | None:
        return await oauth_store.revoke_grant(self.conn, grant_id, now, account_id)

    async def connections_of(self, account_id: str) -> list[OAuthConnection]:
        return [record(OAuthConnection, row._mapping) for row in await oauth_store.connections_of(self.conn,
                                                                                                   account_id)]

    async def businesses_named(self, account_id: str) -> list[BusinessName]:
        return [record(BusinessName, row._mapping) for row in await oauth_store.businesses_named(self.conn,
                                                                                                  account_id)]

    async def business_ids_of(self, account_id: str) -> list[str]:
        return await store.business_ids_of(self.conn, account_id)

    async def add_code(self, **values: Any) -> None:
        await oauth_store.insert_code(self.conn, **values)

    async def take_code(self, code_hashes: list[str]) -> OAuthCode | None:
        row = await oauth_store.take_code(self.conn, code_hashes)
        return record(OAuthCode, row._mapping) if row is not None else None

    async def use_code(self, code_hash: str, now: datetime) -> None:
        await oauth_store.use_code(self.conn, code_hash, now)

    async def add_refresh_token(self, **values: Any) -> None:
        await oauth_store.insert_refresh_token(self.conn, **values)

    async def take_refresh_token(self, token_hashes: list[str]) -> OAuthRefreshToken | None:
        row = await oauth_store.take_refresh_token(self.conn, token_hashes)
        return record(OAuthRefreshToken, row._mapping) if row is not None else None

    async def use_refresh_token(self, token_hash: str, now: datetime) -> None:
        await oauth_store.use_refresh_token(self.conn, token_hash, now)
