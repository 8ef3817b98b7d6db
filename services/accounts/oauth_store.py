"""Queries on the connector's OAuth tables (defined in services.accounts.schema with the rest of the schema), used by
its repository (oauth_repository.py)."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from services.accounts.schema import businesses, oauth_clients, oauth_codes, oauth_grants, oauth_refresh_tokens


async def client(conn: AsyncConnection, client_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(oauth_clients).where(oauth_clients.c.client_id == client_id))).first()


async def insert_client(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(oauth_clients.insert().values(**values).returning(oauth_clients))).one()
    return row


async def save_client_document(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    """A client known by its metadata document, as last fetched."""
    stmt = insert(oauth_clients).values(**values)
    changed = {k: stmt.excluded[k] for k in ("client_name", "client_uri", "redirect_uris", "grant_types", "fetched_at")}
    row: sa.Row[Any] = (await conn.execute(stmt.on_conflict_do_update(
        index_elements=[oauth_clients.c.client_id], set_=changed).returning(oauth_clients))).one()
    return row


async def insert_grant(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(oauth_grants.insert().values(**values))


async def grant(conn: AsyncConnection, grant_id: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(oauth_grants).where(oauth_grants.c.id == grant_id))).first()


async def revoke_grant(conn: AsyncConnection, grant_id: str, now: datetime, account_id: str | None = None) -> str | None:
    """Revoke a grant (its refresh tokens die with it; its access tokens are refused from now on): the account it
    belonged to, or None when there is no such grant (of that account)."""
    where = [oauth_grants.c.id == grant_id]
    if account_id is not None:
        where.append(oauth_grants.c.account_id == account_id)
    row = (await conn.execute(oauth_grants.update().where(*where)
                              .values(revoked_at=sa.func.coalesce(oauth_grants.c.revoked_at, now))
                              .returning(oauth_grants.c.account_id))).first()
    return None if row is None else str(row.account_id)


async def has_grant(conn: AsyncConnection, account_id: str, client_id: str) -> bool:
    """Whether the account has a grant in force for the client (it approved the client and has not revoked it)."""
    return bool((await conn.execute(sa.select(sa.exists().where(
        oauth_grants.c.account_id == account_id, oauth_grants.c.client_id == client_id,
        oauth_grants.c.revoked_at.is_(None))))).scalar())


async def touch_grant(conn: AsyncConnection, grant_id: str, now: datetime) -> None:
    await conn.execute(oauth_grants.update().where(oauth_grants.c.id == grant_id).values(last_used_at=now))


async def connections_of(conn: AsyncConnection, account_id: str) -> Sequence[Any]:
    """The account's grants in force, newest first, with their client's name."""
    return (await conn.execute(
        sa.select(oauth_grants, oauth_clients.c.client_name)
        .join(oauth_clients, oauth_clients.c.client_id == oauth_grants.c.client_id)
        .where(oauth_grants.c.account_id == account_id, oauth_grants.c.revoked_at.is_(None))
        .order_by(oauth_grants.c.created_at.desc()))).all()


async def businesses_named(conn: AsyncConnection, account_id: str) -> Sequence[Any]:
    return (await conn.execute(sa.select(businesses.c.id, businesses.c.name)
                               .where(businesses.c.account_id == account_id)
                               .order_by(businesses.c.created_at))).all()


async def insert_code(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(oauth_codes.insert().values(**values))


def _with_grant(table: sa.Table, secret_hash_matches: sa.ColumnElement[bool]) -> sa.Select[Any]:
    """A code or refresh token with its grant, locked until the transaction ends (each is used once)."""
    return (sa.select(table, oauth_grants.c.account_id, oauth_grants.c.client_id, oauth_grants.c.scopes,
                      oauth_grants.c.resource, oauth_grants.c.revoked_at)
            .join(oauth_grants, oauth_grants.c.id == table.c.grant_id)
            .where(secret_hash_matches).with_for_update(of=table))


async def take_code(conn: AsyncConnection, code_hashes: list[str]) -> sa.Row[Any] | None:
    """The code stored under any of these hashes (its forms under each version of the server secret held)."""
    row: sa.Row[Any] | None = (await conn.execute(_with_grant(oauth_codes,
                                                              oauth_codes.c.code_hash.in_(code_hashes)))).first()
    return row


async def use_code(conn: AsyncConnection, code_hash: str, now: datetime) -> None:
    await conn.execute(oauth_codes.update().where(oauth_codes.c.code_hash == code_hash).values(used_at=now))


async def insert_refresh_token(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(oauth_refresh_tokens.insert().values(**values))


async def take_refresh_token(conn: AsyncConnection, token_hashes: list[str]) -> sa.Row[Any] | None:
    """The refresh token stored under any of these hashes."""
    row: sa.Row[Any] | None = (await conn.execute(_with_grant(
        oauth_refresh_tokens, oauth_refresh_tokens.c.token_hash.in_(token_hashes)))).first()
    return row


async def use_refresh_token(conn: AsyncConnection, token_hash: str, now: datetime) -> None:
    await conn.execute(oauth_refresh_tokens.update().where(oauth_refresh_tokens.c.token_hash == token_hash)
                       .values(used_at=now))
