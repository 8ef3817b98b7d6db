"""Tables of the evals schema and the queries on them."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from core.leases import lease_columns

SCHEMA = "evals"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

scenarios = sa.Table(
    "scenarios", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("provider_eval_id", sa.Text, nullable=False, unique=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("messages", JSONB, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # One writer at a time while the provider's mirror is changed (core.leases).
    *lease_columns(),
    sa.Index("scenarios_agent_created", "agent_id", "created_at"),
    sa.Index("scenarios_business_created", "business_id", "created_at"),
)

LIST_COLUMNS = [c for c in scenarios.c if c.name not in ("messages", "lease_token", "lease_until")]


def scenarios_of(business_ids, agent_id: str | None) -> sa.Select:
    """The scenarios (without their turns) in the caller's businesses, of one agent when given."""
    query = sa.select(*LIST_COLUMNS).where(scenarios.c.business_id.in_(business_ids))
    return query.where(scenarios.c.agent_id == agent_id) if agent_id else query


async def scenario(conn: AsyncConnection, business_ids, scenario_id: str):
    return (await conn.execute(sa.select(scenarios).where(scenarios.c.id == scenario_id,
                                                          scenarios.c.business_id.in_(business_ids)))).first()


async def insert_scenario(conn: AsyncConnection, **values):
    return (await conn.execute(scenarios.insert().values(**values).returning(scenarios))).first()
