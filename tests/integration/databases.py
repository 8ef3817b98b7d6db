"""A database of its own on the stack's server, for what must start from nothing (the migrations)."""
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.engine import make_url

from core import db_roles


@asynccontextmanager
async def new_database(stack, prefix: str) -> AsyncIterator[str]:
    """An empty database (its owner's URL), dropped on the way out with the roles a migrations run made for it
    (core.db_roles names them after the database)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    url = make_url(stack.database_url).set(database=name).render_as_string(hide_password=False)
    conn = await asyncpg.connect(stack.database_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield url
        finally:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            for role in db_roles.ROLES:
                await conn.execute(f"DROP ROLE IF EXISTS {db_roles.ident(db_roles.role_name(name, role.key))}")
    finally:
        await conn.close()
