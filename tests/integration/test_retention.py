"""Retention (core.retention) on the stack's real PostgreSQL and NATS: the sweep deletes exactly what is past its
time, in batches, each row once however many sweeps run; the services' own sweeps run; the streams get their
limits."""
import asyncio
import uuid
from datetime import timedelta

import asyncpg
import pytest
import sqlalchemy as sa
from nats.js.api import DiscardPolicy

from core import settings
from core.bus import PROVIDER_STREAM, STREAM, Limits, limits_of
from core.db import create_engine
from core.ids import utcnow
from core.registry import DEADLETTER_STREAM
from core.retention import RetentionSweep, inbox_ids, published_outbox
from services.accounts.repository import retention_rules as accounts_rules
from services.webhooks.repository import retention_rules as webhooks_rules
from tests.nats_admin import admin_bus
from tests.waiting import wait_until

KEEP = timedelta(days=1)
MINUTE = timedelta(minutes=1)


async def _fill(engine, outbox, inbox, *, due: int, kept: int) -> None:
    """`due` rows past KEEP in the outbox (published) and the inbox; `kept` just inside it in each, and as many
    unpublished outbox rows far older than KEEP."""
    now = utcnow()
    past, inside, ancient = now - KEEP - MINUTE, now - KEEP + MINUTE, now - 100 * KEEP

    def event(published_at):
        return {"event_id": str(uuid.uuid4()), "type": "test.retention", "occurred_at": ancient, "data": {},
                "published_at": published_at}
    async with engine.begin() as conn:
        await conn.execute(outbox.insert(), [event(past) for _ in range(due)] + [event(inside) for _ in range(kept)]
                           + [event(None) for _ in range(kept)])
        await conn.execute(inbox.insert(), [{"consumer": "c", "event_id": str(uuid.uuid4()), "processed_at": at}
                                            for at in [past] * due + [inside] * kept])


async def _left(engine, outbox, inbox) -> tuple[int, int, int]:
    """Outbox rows published, unpublished; inbox rows."""
    async with engine.connect() as conn:
        published = (await conn.execute(sa.select(sa.func.count()).select_from(outbox)
                                        .where(outbox.c.published_at.is_not(None)))).scalar()
        pending = (await conn.execute(sa.select(sa.func.count()).select_from(outbox)
                                      .where(outbox.c.published_at.is_(None)))).scalar()
        ids = (await conn.execute(sa.select(sa.func.count()).select_from(inbox))).scalar()
    return published, pending, ids


async def test_the_sweep_deletes_what_is_past_retention_in_batches_and_nothing_else(scratch):
    engine, _, outbox, inbox = scratch
    await _fill(engine, outbox, inbox, due=25, kept=7)
    sweep = RetentionSweep(engine, [published_outbox(outbox, KEEP), inbox_ids(inbox, KEEP)], batch=10)
    rounds = []
    while True:
        more = await sweep.round()
        rounds.append(await _left(engine, outbox, inbox))
        if not more:
            break
    # 10, 10, then 5 of each: a full batch starts the next round at once, a short one ends them
    assert rounds == [(22, 7, 22), (12, 7, 12), (7, 7, 7)]
    assert await sweep.sweep() == {f"{outbox.schema}.outbox": 0, f"{inbox.schema}.inbox": 0}
    # the rows just inside the window and the unpublished ones, however old, are those left
    async with engine.connect() as conn:
        oldest_kept = (await conn.execute(sa.select(sa.func.min(outbox.c.published_at)))).scalar()
        assert oldest_kept > utcnow() - KEEP
        assert (await conn.execute(sa.select(sa.func.min(inbox.c.processed_at)))).scalar() > utcnow() - KEEP


async def test_concurrent_sweeps_delete_each_row_once(scratch, stack):
    engine, _, outbox, inbox = scratch
    await _fill(engine, outbox, inbox, due=600, kept=5)
    other = create_engine(stack.database_url)  # a second replica: its own connections
    rules = [published_outbox(outbox, KEEP), inbox_ids(inbox, KEEP)]
    try:
        async def drain(sweep: RetentionSweep) -> dict[str, int]:
            total = dict.fromkeys((r.name for r in rules), 0)
            while True:
                deleted = await sweep.sweep()
                for name, n in deleted.items():
                    assert n <= sweep.batch
                    total[name] += n
                if not any(deleted.values()):
                    return total
        first, second = await asyncio.gather(drain(RetentionSweep(engine, rules, batch=20)),
                                             drain(RetentionSweep(other, rules, batch=20)))
    finally:
        await other.dispose()
    for rule in rules:
        assert first[rule.name] + second[rule.name] == 600  # every due row deleted by exactly one of them
        assert first[rule.name] and second[rule.name]  # both took batches
    assert await _left(engine, outbox, inbox) == (5, 5, 5)


async def test_webhook_deliveries_and_usage_entries_past_retention_go_and_nothing_else(stack):
    """On the services' own tables (with other tests' rows in them: only this test's rows are looked at)."""
    keep, business, account = timedelta(days=30), uuid.uuid4(), uuid.uuid4()
    now = utcnow()
    old, recent = now - keep - MINUTE, now - keep + MINUTE
    deliveries = {(status, at): uuid.uuid4() for status in ("delivered", "failed", "canceled", "pending")
                  for at in (old, recent)}
    usage = {(method, at): uuid.uuid4() for method in ("GET", "CALL") for at in (old, recent)}
    conn = await asyncpg.connect(stack.database_url)
    try:
        await conn.executemany(
            "INSERT INTO webhooks.deliveries (id, business_id, event_id, event_type, status, attempts, "
            "next_attempt_at, replay, created_at) VALUES ($1, $2, $3, 'call.completed', $4, 1, $5, false, $6)",
            # a pending one is due tomorrow: the dispatcher leaves it alone meanwhile
            [(i, business, uuid.uuid4(), status, now + timedelta(days=1) if status == "pending" else at, at)
             for (status, at), i in deliveries.items()])
        await conn.executemany("INSERT INTO webhooks.attempts (delivery_id, attempt, latency_ms, at) "
                               "VALUES ($1, 1, 5, $2)", [(i, at) for (_, at), i in deliveries.items()])
        await conn.executemany(
            "INSERT INTO accounts.usage_log (id, account_id, endpoint, method, status_code, call_id, cost_cents, "
            "created_at) VALUES ($1, $2, '/api/v1/x', $3, 200, $4, 0, $5)",
            [(i, account, method, str(i) if method == "CALL" else None, at) for (method, at), i in usage.items()])
        engine = create_engine(stack.database_url)
        try:
            sweep = RetentionSweep(engine, webhooks_rules(keep) + accounts_rules(keep), batch=50)
            while await sweep.round():
                pass
        finally:
            await engine.dispose()
        left = {r["id"] for r in await conn.fetch("SELECT id FROM webhooks.deliveries WHERE business_id = $1",
                                                  business)}
        attempts_left = {r["delivery_id"] for r in await conn.fetch(
            "SELECT delivery_id FROM webhooks.attempts WHERE delivery_id = ANY($1)", list(deliveries.values()))}
        usage_left = {r["id"] for r in await conn.fetch("SELECT id FROM accounts.usage_log WHERE account_id = $1",
                                                        account)}
    finally:
        await conn.close()
    kept = {i for (status, at), i in deliveries.items() if at == recent or status == "pending"}
    assert left == kept and attempts_left == kept  # a finished delivery goes with its attempts; a pending one stays
    assert usage_left == {i for (method, at), i in usage.items() if at == recent or method == "CALL"}


async def test_each_service_sweeps_its_own_tables(stack):
    """The services run their sweeps with the default retention (RETENTION_INTERVAL_SECONDS is short on the tests'
    stack): an outbox row published a year ago and an inbox id of a year ago go. (An unpublished row would be
    relayed, not kept: that it is never deleted is shown on a scratch outbox above.)"""
    conn = await asyncpg.connect(stack.database_url)
    published, seen = uuid.uuid4(), uuid.uuid4()
    ancient = utcnow() - timedelta(days=365)
    try:
        await conn.execute("INSERT INTO calls.outbox (event_id, type, occurred_at, data, published_at) "
                           "VALUES ($1, 'test.retention', $2, '{}', $2)", published, ancient)
        await conn.execute("INSERT INTO webhooks.inbox (consumer, event_id, processed_at) VALUES ('test', $1, $2)",
                           seen, ancient)

        async def left():
            return (await conn.fetchval("SELECT count(*) FROM calls.outbox WHERE event_id = $1", published),
                    await conn.fetchval("SELECT count(*) FROM webhooks.inbox WHERE event_id = $1", seen))
        await wait_until(left, "the services' sweeps", lambda value: value == (0, 0), timeout=15)
    finally:
        await conn.close()


@pytest.mark.parametrize("name", [STREAM, DEADLETTER_STREAM])
async def test_the_streams_are_created_with_their_limits_and_an_existing_one_gets_new_ones(stack, name):
    configured = limits_of(settings.load())
    assert configured[STREAM].discard is DiscardPolicy.OLD and configured[PROVIDER_STREAM].discard is DiscardPolicy.NEW
    assert configured[DEADLETTER_STREAM].discard is DiscardPolicy.NEW  # a dead letter is never dropped to make room
    assert sum(limits.max_bytes for limits in configured.values()) < 10 * 1024 ** 3 * 0.7
    # created by the stack's processes with the settings' limits
    for stream in (STREAM, PROVIDER_STREAM, DEADLETTER_STREAM):
        config = await _config(stack, stream)
        assert not configured[stream].differ(config), config
    changed = Limits(3 * 24 * 3600.0, 1024 ** 3, DiscardPolicy.NEW)
    try:
        await _start_bus(stack, name, {name: changed})  # a creator started with other limits
        config = await _config(stack, name)
        assert (config.max_age, config.max_bytes, config.discard) == (3 * 24 * 3600.0, 1024 ** 3, DiscardPolicy.NEW)
    finally:
        await _start_bus(stack, name, configured)  # back to the stack's
    assert not configured[name].differ(await _config(stack, name))


async def _start_bus(stack, name: str, limits) -> None:
    """Start (and close) a bus that creates the stream `name`, as a process does on start."""
    bus = admin_bus(stack, "test-limits", creates=(name,), limits=limits)
    assert await bus.wait_connected(10)
    await bus.close()


async def _config(stack, name: str):
    bus = admin_bus(stack, "test-limits-read")
    assert await bus.wait_connected(10)
    try:
        assert bus.js is not None
        return (await bus.js.stream_info(name)).config
    finally:
        await bus.close()
