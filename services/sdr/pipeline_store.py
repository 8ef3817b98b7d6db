"""Tables of the sales pipeline (each business's SDR config, and the activity log of its touches and choices) and
the queries on them, each taking a connection. The pipeline's counters of a lead (touch_count, last_touch_at,
paused) are columns of the leads table (services.sdr.store)."""
from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from services.sdr.schema import Ts, Uuid, metadata

configs = sa.Table(
    "pipeline_configs", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("min_touch_gap_hours", sa.Integer, nullable=False),
    sa.Column("max_touches", sa.Integer, nullable=False),
    sa.Column("auto_call", sa.Boolean, nullable=False),
    sa.Column("auto_email", sa.Boolean, nullable=False),
    sa.Column("auto_sms", sa.Boolean, nullable=False),
    sa.Column("sdr_agent_id", Uuid),
    sa.Column("business_hours_start", sa.Integer, nullable=False),
    sa.Column("business_hours_end", sa.Integer, nullable=False),
    sa.Column("email_from_account_id", sa.Text),
    sa.Column("updated_at", Ts, nullable=False),
)

activity = sa.Table(
    "pipeline_activity", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("lead_id", Uuid, sa.ForeignKey("sdr.leads.id", ondelete="CASCADE"), nullable=False),
    sa.Column("action", sa.Text, nullable=False),  # pipeline_domain.ACTIONS, or escalate
    sa.Column("status", sa.Text, nullable=False),  # pending (a touch being made), done, failed
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("touch_number", sa.Integer),  # the lead's n-th touch (touches only): made once
    sa.Column("reference", sa.Text),  # the call, message or email the touch made
    sa.Column("origin", sa.Text, nullable=False),  # api (a key or session) or runner
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

sa.Index("pipeline_activity_business_created", activity.c.business_id, activity.c.created_at.desc(),
         activity.c.id.desc())
sa.Index("pipeline_activity_lead_created", activity.c.lead_id, activity.c.created_at.desc(), activity.c.id.desc())
sa.Index("pipeline_activity_touch_once", activity.c.lead_id, activity.c.touch_number, unique=True,
         postgresql_where=sa.and_(activity.c.touch_number.is_not(None), activity.c.status != "failed"))

CONFIG_COLUMNS = tuple(c.name for c in configs.c if c.name not in ("business_id", "updated_at"))


async def config_of(conn: AsyncConnection, business_id: str):
    return (await conn.execute(sa.select(configs).where(configs.c.business_id == business_id))).first()


async def save_config(conn: AsyncConnection, business_id: str, values: dict, now: datetime):
    statement = insert(configs).values(business_id=business_id, **values, updated_at=now)
    statement = statement.on_conflict_do_update(index_elements=[configs.c.business_id],
                                                set_={**values, "updated_at": now})
    return (await conn.execute(statement.returning(configs))).first()
