"""Baseline for bench.gateway: the same request served by one bare aiohttp + asyncpg process.

`python -m bench.bare_server PORT` serves `GET /api/v1/workspaces?id=<business_id>` with
`Authorization: Bearer <key>`: it looks the key up by its keyed hash, checks that it is
neither revoked nor expired, reads the business row of that key's account and returns it as
the gateway's JSON. No gRPC hop, no principal cache, no usage log: the floor the gateway is
measured against. DATABASE_URL and SWITCHBOARD_SECRET_KEY come from the environment.
"""
from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
from aiohttp import web

from core.settings import load
from services.accounts.secret_keys import API_KEY, SecretKeys

KEY_SQL = """SELECT account_id, business_id FROM accounts.api_keys
             WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())"""
BUSINESS_SQL = """SELECT id, name, lifecycle_state, metadata, external_ref, created_at, updated_at
                  FROM accounts.businesses WHERE id = $1 AND account_id = $2"""
POOL = web.AppKey("pool", asyncpg.Pool)
KEYS = web.AppKey("keys", SecretKeys)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


async def workspace_json(pool: asyncpg.Pool, keys: SecretKeys, header: str, business_id: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of the read (bench.bare_two_hop does the same work behind a gRPC hop)."""
    if not header.startswith("Bearer ") or not business_id:
        return 401, {"error": "unauthorized"}
    async with pool.acquire() as conn:
        key = await conn.fetchrow(KEY_SQL, keys.hash(API_KEY, header[7:].strip()))
        if key is None:
            return 401, {"error": "unauthorized"}
        if key["business_id"] is not None and str(key["business_id"]) != business_id:
            return 404, {"error": "not_found"}
        row = await conn.fetchrow(BUSINESS_SQL, business_id, key["account_id"])
    if row is None:
        return 404, {"error": "not_found"}
    ws = {"id": str(row["id"]), "name": row["name"], "lifecycle_state": row["lifecycle_state"],
          "metadata": row["metadata"], "external_ref": row["external_ref"],
          "created_at": iso(row["created_at"]), "updated_at": iso(row["updated_at"])}
    return 200, {"workspaces": [ws], "has_more": False, "next_cursor": None}


async def workspaces(request: web.Request) -> web.Response:
    status, body = await workspace_json(request.app[POOL], request.app[KEYS],
                                        request.headers.get("Authorization", ""), request.query.get("id", ""))
    return web.json_response(body, status=status)


async def _init(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


def build_app() -> web.Application:
    settings = load()
    app = web.Application()
    app[KEYS] = SecretKeys.of(settings)

    async def pool_ctx(app: web.Application) -> AsyncIterator[None]:
        # Sized like the accounts service's SQLAlchemy engine (pool_size=10, max_overflow=10).
        app[POOL] = await asyncpg.create_pool(settings.database_url.reveal(), min_size=10, max_size=20, init=_init)
        yield
        await app[POOL].close()

    app.cleanup_ctx.append(pool_ctx)
    app.router.add_get("/api/v1/workspaces", workspaces)
    return app


if __name__ == "__main__":
    import uvloop

    uvloop.install()
    web.run_app(build_app(), host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
