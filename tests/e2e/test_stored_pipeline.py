"""The pipeline's stored segments and next actions (services.sdr.schema's triggers, services.sdr.pipeline_store): a change of a
lead's signals (through the API, or an inbound interaction through the trigger on interactions) or of the config
shows in the very next read, and a result computed from signals that changed meanwhile is never stored."""
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import create_async_engine

from contracts.pipeline import SEGMENTS
from core.db import async_url
from services.sdr import pipeline_store
from services.sdr import schema as sdr_schema
from tests.leads import PIPELINE, new_lead, put_config

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


async def read(api, key, business: str) -> tuple[dict, dict]:
    status, pipeline, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business})
    assert status == 200, pipeline
    return {lead["id"]: lead for lead in pipeline["leads"]}, pipeline["summary"]


async def stored(db, lead_id: str):
    return await db.fetchrow("SELECT pipeline_segment, pipeline_next, pipeline_until, pipeline_stamp, created_at, "
                             "last_inbound_call_at FROM sdr.leads WHERE id = $1", uuid.UUID(lead_id))


async def test_a_change_of_signals_or_config_shows_in_the_next_read(api, account, db):
    key, business = account["key"], account["business_id"]
    lead = await new_lead(api, key, business, name="Dana", email="dana@example.com")
    assert (await stored(db, lead["id"]))["pipeline_until"] == EPOCH  # new: due for computing
    leads, summary = await read(api, key, business)
    row = await stored(db, lead["id"])
    assert (SEGMENTS[row["pipeline_segment"]], row["pipeline_next"]) == ("speed_to_lead", "escalate")
    assert row["pipeline_until"] == row["created_at"] + timedelta(days=1)  # speed_to_lead ends then
    assert summary == {"total_leads": 1, "actionable": 0, "needs_manual": 1}

    status, _, _ = await put_config(api, key, business, auto_email=True)  # moves next actions: all due again
    assert status == 200 and (await stored(db, lead["id"]))["pipeline_until"] == EPOCH
    leads, summary = await read(api, key, business)
    assert leads[lead["id"]]["next_action"] == "email" and summary["actionable"] == 1

    # An inbound call (as the calls consumer records it): the trigger keeps its time on the lead.
    called = datetime.now(UTC) - timedelta(hours=2)
    await db.execute("INSERT INTO sdr.interactions (lead_id, business_id, channel, direction, reference, "
                     "occurred_at) VALUES ($1, $2, 'call', 'inbound', 'call-1', $3)",
                     uuid.UUID(lead["id"]), uuid.UUID(business), called)
    assert (await stored(db, lead["id"]))["last_inbound_call_at"] == called
    leads, _ = await read(api, key, business)
    assert leads[lead["id"]]["segment"] == "fresh_demo_caller"
    assert (await stored(db, lead["id"]))["pipeline_until"] == called + timedelta(days=1)

    status, _, _ = await api.request("PATCH", "/api/v1/leads", key=key, json={"id": lead["id"], "status": "lost"})
    assert status == 200
    leads, summary = await read(api, key, business)
    assert leads[lead["id"]]["segment"] == "churned_recent" and leads[lead["id"]]["next_action"] == "skip"
    assert summary == {"total_leads": 1, "actionable": 0, "needs_manual": 0}


async def test_a_result_computed_from_signals_that_changed_since_is_not_stored(api, account, db, stack):
    key, business = account["key"], account["business_id"]
    lead = await new_lead(api, key, business, name="Eli", email="eli@example.com")
    await read(api, key, business)
    before = await stored(db, lead["id"])
    # A signal changes after a read took the lead's stamp and before it stores its result.
    await db.execute("UPDATE sdr.leads SET status = 'contacted' WHERE id = $1", uuid.UUID(lead["id"]))
    changed = await stored(db, lead["id"])
    assert changed["pipeline_stamp"] == before["pipeline_stamp"] + 1 and changed["pipeline_until"] == EPOCH
    engine = create_async_engine(async_url(stack.database_url))
    try:
        async with engine.begin() as conn:
            await pipeline_store.store_computed(conn, [(lead["id"], before["pipeline_stamp"], 0, "email", None)])
    finally:
        await engine.dispose()
    assert (await stored(db, lead["id"]))["pipeline_until"] == EPOCH  # still due: the stale result was dropped
    leads, _ = await read(api, key, business)
    assert (await stored(db, lead["id"]))["pipeline_until"] > EPOCH


async def test_the_trigger_watches_every_signal_the_pipeline_reads(db):
    # A new database's trigger is made from sdr_schema.SIGNAL_COLUMNS; an existing one keeps the trigger its
    # migrations made, so a signal added there needs a migration that watches it too.
    definition = await db.fetchval("SELECT pg_get_triggerdef(oid) FROM pg_trigger "
                                   "WHERE tgname = 'leads_pipeline_signals'")
    watched = {column for column in sdr_schema.SIGNAL_COLUMNS if f"new.{column} IS DISTINCT" in definition}
    assert watched == set(sdr_schema.SIGNAL_COLUMNS), definition
