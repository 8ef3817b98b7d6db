"""Each process's PostgreSQL role: a service (and its workers) reads and writes its own schema's tables alone.

The migrations (core.migrations.upgrade_all, connected as the database's owner) create the roles `ROLES` names,
NOLOGIN when new (a role that exists keeps its login and password), and grant each what it may do: CONNECT on the
database (TEMPORARY too, to the one that stages in temporary tables), USAGE on its schema, SELECT/INSERT/UPDATE/DELETE
on its tables (every one of the schema, those created later too; only SELECT on the schema's alembic_version) and
the use of its sequences. The owner keeps the schemas and tables: a role may change rows but not drop, alter or
grant, so a compromised pod cannot undo the migrations or read another service's schema. PUBLIC keeps nothing on
the database or the schemas.

A role's name is the database's and the role's (`switchboard_accounts` in the database `switchboard`): roles belong
to the whole server, where several databases (the tests', a staging one) may each have their own set.

Logins: the local launcher gives each role a password of its data folder (set_passwords) and each process the URL of
its role (url_for). A deployment sets them with `DATABASE_URL=<the owner's> python -m core.db_roles [ROLE...]`,
which gives every role (or those named) a new random password and prints its DATABASE_URL_<ROLE> for the Secret
(deploy/k8s/README.md).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from core import registry
from core.db import raw_url

DML = "SELECT, INSERT, UPDATE, DELETE"


@dataclass(frozen=True)
class Role:
    """A role (named `key` within the database) with DML on `schema`'s tables: `tables` alone when named, else every
    table of the schema, present and future; `temporary`: it may create temporary tables."""

    key: str
    schema: str
    tables: tuple[str, ...] = ()
    temporary: bool = False


# The national do-not-call import (a job: services.messaging.registry) writes the registry's three tables of the
# messaging schema and nothing else of it (not consent, conversations or messages), staging each file in a temporary
# table.
NATIONAL_DNC_TABLES = ("national_dnc", "national_dnc_areas", "national_dnc_files")
ROLES: tuple[Role, ...] = (*(Role(s.name, s.name) for s in registry.SERVICES if s.schema),
                           Role(registry.NATIONAL_DNC_IMPORT, "messaging", NATIONAL_DNC_TABLES, temporary=True))
SCHEMAS = tuple(s.name for s in registry.SERVICES if s.schema)


def role_name(database: str, key: str) -> str:
    name = f"{database}_{key.replace('-', '_')}"
    if len(name.encode()) > 63:  # PostgreSQL would cut it short, and two roles might end up one
        raise ValueError(f"the role name {name!r} is longer than PostgreSQL's 63 bytes: use a shorter database name")
    return name


def ident(name: str) -> str:
    """`name` quoted as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def database_of(url: str) -> str:
    database = make_url(url).database
    if not database:
        raise ValueError("DATABASE_URL names no database")
    return database


def grant_statements(database: str) -> list[str]:
    """What makes every role of ROLES exist with its privileges (and PUBLIC without them): idempotent."""
    db = ident(database)
    statements = [f"REVOKE ALL ON DATABASE {db} FROM PUBLIC", "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                  *(f"REVOKE ALL ON SCHEMA {ident(schema)} FROM PUBLIC" for schema in SCHEMAS)]
    for role in ROLES:
        name, schema = ident(role_name(database, role.key)), ident(role.schema)
        statements += [
            # no IF NOT EXISTS for roles: a role made meanwhile (another migrations run) is fine too
            f"DO $$ BEGIN CREATE ROLE {name} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            f"GRANT {'CONNECT, TEMPORARY' if role.temporary else 'CONNECT'} ON DATABASE {db} TO {name}",
            f"GRANT USAGE ON SCHEMA {schema} TO {name}"]
        if role.tables:
            statements.append(f"GRANT {DML} ON {', '.join(f'{schema}.{ident(t)}' for t in role.tables)} TO {name}")
            continue
        statements += [
            f"GRANT {DML} ON ALL TABLES IN SCHEMA {schema} TO {name}",
            f"REVOKE INSERT, UPDATE, DELETE ON {schema}.alembic_version FROM {name}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {name}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT {DML} ON TABLES TO {name}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {name}"]
    return statements


async def grant(conn: asyncpg.Connection, database: str) -> None:
    """Create the roles and grant their privileges on `conn`, the owner's: a migrations run's
    (core.migrations.upgrade_all), whose lock keeps two runs from granting at once (a concurrent update fails)."""
    async with conn.transaction():
        for statement in grant_statements(database):
            await conn.execute(statement)


async def _set_passwords(database_url: str, passwords: dict[str, str]) -> None:
    database = database_of(database_url)
    conn = await asyncpg.connect(raw_url(database_url))
    try:
        for key, password in passwords.items():
            statement = await conn.fetchval("SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', $1::text, $2::text)",
                                            role_name(database, key), password)
            await conn.execute(statement)
    finally:
        await conn.close()


def set_passwords(database_url: str, passwords: dict[str, str]) -> None:
    """Let each role of `passwords` ({key: password}) log in with its password (connected as the owner)."""
    asyncio.run(_set_passwords(database_url, passwords))


def url_for(database_url: str, key: str, password: str) -> str:
    """The owner's `database_url` with the role `key` and its password in place of the owner's."""
    url = make_url(database_url)
    return url.set(username=role_name(database_of(database_url), key), password=password).render_as_string(
        hide_password=False)


def secret_key(key: str, variable: str = "DATABASE_URL") -> str:
    """The deployment Secret's key holding the role's DATABASE_URL (or DIRECT_DATABASE_URL: deploy.generate)."""
    return f"{variable}_{registry.env_prefix(key)}"


def main(argv: list[str]) -> int:
    """`python -m core.db_roles [--pooler HOST:PORT] [--userlist FILE] [ROLE...]`: a new password for every role (or
    those named), after the migrations made them, and their DATABASE_URL_<ROLE> lines of the Secret. With a
    transaction pooler (PgBouncer: deploy/k8s/README.md), DATABASE_URL_<ROLE> goes through it and
    DIRECT_DATABASE_URL_<ROLE> straight to the owner's host, and `--userlist` writes PgBouncer's auth_file."""
    parser = argparse.ArgumentParser(prog="python -m core.db_roles")
    parser.add_argument("--pooler", default="", metavar="HOST:PORT", help="the transaction pooler's address")
    parser.add_argument("--userlist", type=Path, help="write PgBouncer's auth_file (each role and its password)")
    parser.add_argument("roles", nargs="*", metavar="ROLE")
    args = parser.parse_args(argv)
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url:
        print("DATABASE_URL: must be set to the URL of the database's owner (the migrations')", file=sys.stderr)
        return 1
    keys = [role.key for role in ROLES]
    if unknown := sorted(set(args.roles) - set(keys)):
        print(f"no role {', '.join(unknown)}: the roles are {', '.join(keys)}", file=sys.stderr)
        return 1
    passwords = {key: secrets.token_urlsafe(32) for key in args.roles or keys}
    set_passwords(database_url, passwords)
    for key, password in passwords.items():
        direct = url_for(database_url, key, password)
        if not args.pooler:
            print(f"{secret_key(key)}={direct}")
            continue
        host, _, port = args.pooler.rpartition(":")
        print(f"{secret_key(key)}={make_url(direct).set(host=host, port=int(port)).render_as_string(False)}")
        print(f"{secret_key(key, 'DIRECT_DATABASE_URL')}={direct}")
    if args.userlist:
        database = database_of(database_url)
        args.userlist.write_text("".join(f'"{role_name(database, key)}" "{password}"\n'
                                         for key, password in passwords.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
