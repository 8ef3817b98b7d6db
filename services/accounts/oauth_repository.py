"""The connector's OAuth storage (schema.oauth_*, through oauth_store.py), on the connection of the caller's
transaction or read (AccountsUnit.oauth): clients, grants, codes and refresh tokens. Codes and refresh tokens are
read with their grant's columns (account, client, scopes, resource, revocation) and held for update."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from core.records import record
from services.accounts import oauth_store, store
from services.accounts.records import OAuthClient, OAuthConnection


class SqlOAuth:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def client(self, client_id: str) -> OAuthClient | None:
        row = await oauth_store.client(self.conn, client_id)
        return record(OAuthClient, row._mapping) if row is not None else None

    async def add_client(self, **values: Any) -> OAuthClient:
        return record(OAuthClient, (await oauth_store.insert_client(self.conn, **values))._mapping)

    async def save_client_document(self, **values: Any) -> OAuthClient:
        """A client known by its metadata document, as last fetched."""
        return record(OAuthClient, (await oauth_store.save_client_document(self.conn, **values))._mapping)

    async def has_grant(self, account_id: str, client_id: str) -> bool:
        """Whether the account approved the client (a grant in force)."""
        return await oauth_store.has_grant(self.conn, account_id, client_id)

    async def add_grant(self, **values: Any) -> None:
        await oauth_store.insert_grant(self.conn, **values)

    async def grant(self, grant_id: str) -> Any | None:
        return await oauth_store.grant(self.conn, grant_id)

    async def touch_grant(self, grant_id: str, now: datetime) -> None:
        await oauth_store.touch_grant(self.conn, grant_id, now)

    async def revoke_grant(self, grant_id: str, now: datetime, account_id: str | None = None) -> str | None:
        """The account the grant belonged to, or None when there is no such grant (of that account)."""
        return await oauth_store.revoke_grant(self.conn, grant_id, now, account_id)

    async def connections_of(self, account_id: str) -> list[OAuthConnection]:
        """The account's grants in force, newest first."""
        return [record(OAuthConnection, row._mapping) for row in await oauth_store.connections_of(self.conn,
                                                                                                   account_id)]

    async def businesses_named(self, account_id: str) -> list[Any]:
        """The account's businesses (id, name), oldest first."""
        return list(await oauth_store.businesses_named(self.conn, account_id))

    async def business_ids_of(self, account_id: str) -> list[str]:
        return await store.business_ids_of(self.conn, account_id)

    async def add_code(self, **values: Any) -> None:
        await oauth_store.insert_code(self.conn, **values)

    async def take_code(self, code_hashes: list[str]) -> Any | None:
        """The code stored under any of these hashes, with its grant, held for update."""
        return await oauth_store.take_code(self.conn, code_hashes)

    async def use_code(self, code_hash: str, now: datetime) -> None:
        await oauth_store.use_code(self.conn, code_hash, now)

    async def add_refresh_token(self, **values: Any) -> None:
        await oauth_store.insert_refresh_token(self.conn, **values)

    async def take_refresh_token(self, token_hashes: list[str]) -> Any | None:
        """The refresh token stored under any of these hashes, with its grant, held for update."""
        return await oauth_store.take_refresh_token(self.conn, token_hashes)

    async def use_refresh_token(self, token_hash: str, now: datetime) -> None:
        await oauth_store.use_refresh_token(self.conn, token_hash, now)
