"""Alembic per service: each service keeps its migrations and version table in its own schema.

A service's `migrations/env.py` is two lines calling `run_env(schema)`; the
launcher, the tests and `python -m core.migrate` call `upgrade_all`.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from alembic import command, context
from alembic.config import Config
from sqlalchemy.ext.asyncio import create_async_engine

from core import db_roles, registry
from core.db import async_url

ROOT = Path(__file__).resolve().parent.parent
# Services with a database schema, in the order their migrations run (the registry's order).
SERVICES = tuple(s.name for s in registry.SERVICES if s.schema)


def _config(service: str, database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "services" / service / "migrations"))
    cfg.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    cfg.attributes["schema"] = service
    return cfg


def upgrade(service: str, database_url: str, revision: str = "head") -> None:
    command.upgrade(_config(service, database_url), revision)


def downgrade(service: str, database_url: str, revision: str) -> None:
    command.downgrade(_config(service, database_url), revision)


def upgrade_all(database_url: str) -> None:
    """Every service's migrations, then each process's role and its privileges (core.db_roles), connected as the
    owner of the schemas (`database_url`)."""
    for service in SERVICES:
        upgrade(service, database_url)
    db_roles.grant(database_url)


def run_env(schema: str, metadata: sa.MetaData | None = None) -> None:
    """Body of every service's alembic env.py (online mode, asyncpg). A schema with no version table yet is
    created from `metadata`, the service's one definition of its tables (services/<name>/schema.py), and stamped
    at the head (Alembic's cookbook: "building an up to date database from scratch"); the migrations then only
    carry existing databases from one head to the next. (`metadata` None: the schema is built by its migrations
    from the first, for the services whose tables are not yet in one schema module.)"""
    url = context.config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("the alembic configuration has no sqlalchemy.url")

    def do_run(connection: sa.Connection) -> None:
        connection.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        context.configure(connection=connection, version_table_schema=schema, include_schemas=True,
                          target_metadata=metadata)
        migrations = context.get_context()
        if metadata is not None and migrations.get_current_revision() is None:
            with context.begin_transaction():
                metadata.create_all(connection)
                migrations.stamp(context.script, "heads")
            return
        with context.begin_transaction():
            context.run_migrations()

    async def main() -> None:
        engine = create_async_engine(url, poolclass=sa.pool.NullPool)
        async with engine.begin() as conn:
            await conn.run_sync(do_run)
        await engine.dispose()

    asyncio.run(main())




def create_baseline(metadata: sa.MetaData) -> None:
    """A service's baseline revision: its tables as its schema module defines them (reached only by a database
    with a version table but no revision; run_env builds a new one the same way)."""
    from alembic import op

    metadata.create_all(op.get_bind())


def create_event_tables(schema: str) -> None:
    """The outbox and inbox every event-producing or -consuming service has (first version)."""
    from alembic import op
    from sqlalchemy.dialects.postgresql import JSONB, UUID

    uuid, ts = UUID(as_uuid=False), sa.DateTime(timezone=True)
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("event_id", uuid, nullable=False, unique=True),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("business_id", uuid),
        sa.Column("occurred_at", ts, nullable=False),
        sa.Column("data", JSONB, nullable=False),
        sa.Column("headers", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("published_at", ts),
        schema=schema,
    )
    op.create_index("outbox_pending", "outbox", ["id"], schema=schema, postgresql_where=sa.text("published_at IS NULL"))
    op.create_table(
        "inbox",
        sa.Column("consumer", sa.Text, primary_key=True),
        sa.Column("event_id", uuid, primary_key=True),
        sa.Column("processed_at", ts, server_default=sa.func.now(), nullable=False),
        schema=schema,
    )


def notify_on_outbox(schema: str) -> None:
    """The outbox's commits wake the relays of every replica (core.outbox.notify_trigger)."""
    from alembic import op

    from core.outbox import notify_trigger

    for statement in notify_trigger(schema):
        op.execute(statement)


def drop_notify_on_outbox(schema: str) -> None:
    from alembic import op

    op.execute(f'DROP TRIGGER outbox_notify ON "{schema}".outbox')
    op.execute(f'DROP FUNCTION "{schema}".outbox_notify()')


def drop_event_tables(schema: str) -> None:
    from alembic import op

    op.drop_table("inbox", schema=schema)
    op.drop_table("outbox", schema=schema)
