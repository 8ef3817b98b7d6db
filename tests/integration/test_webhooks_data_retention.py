"""The retention a business set, applied to its webhook event history on the running stack
(services.webhooks.data_retention): the webhooks service's ApplyRetention called over gRPC as the accounts service's
retention job calls it (no other process may). Events older than the cutoff go with their deliveries and attempts,
a batch at a time (`more` until done); an old event whose delivery is still pending stays until it ends; newer
events and another business's stay; GET /api/v1/events shows what is left; a repeated call changes nothing."""
import uuid
from datetime import timedelta

import grpc
import pytest
import sqlalchemy as sa

from core import db, registry
from core.events import Envelope, to_data
from core.ids import new_id, utcnow
from core.messages import set_timestamp
from core.tenant import acting_for
from core.uow import Database, UnitOfWork
from services.webhooks import domain
from services.webhooks.repository import WebhooksUnit
from services.webhooks.schema import attempts, deliveries
from switchboard.v1 import common_pb2, events_pb2, webhooks_pb2_grpc
from tests.tenants import signed

# past the test's cutoff, not the default retention (30 days) the stack's own job applies to the business
OLD, CUTOFF = timedelta(days=20), timedelta(days=10)


@pytest.fixture
async def webhooks(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('webhooks').port}") as channel:
        yield webhooks_pb2_grpc.WebhooksStub(channel)


@pytest.fixture
async def database(stack):
    engine = db.create_engine(stack.database_url, pool_size=2, application_name="retention-tests")
    yield Database(engine)
    await engine.dispose()


@pytest.fixture
def history(database):
    """The webhooks service's unit of work on the stack's database (events kept as the dispatcher keeps them)."""
    return UnitOfWork(database, WebhooksUnit)


def text_event(business_id: str, age: timedelta, body: str) -> Envelope:
    payload = events_pb2.SmsReceived(message_id=new_id(), conversation_id=new_id(), message_sid="SM" + uuid.uuid4().hex,
                                     **{"from": "+14155550177"}, to="+14155550100", body=body)
    return Envelope(new_id(), "sms.received", utcnow() - age, business_id, to_data(payload))


async def apply(webhooks, stack, business_id: str, batch: int = 100, process: str = "accounts",
                before: timedelta | None = CUTOFF) -> common_pb2.RetentionReport:
    request = common_pb2.RetentionRequest(business_id=business_id, run_id="rr_test", batch=batch)
    if before is not None:
        set_timestamp(request, "webhook_events_before", utcnow() - before)
    return await webhooks.ApplyRetention(request, metadata=signed(stack, acting_for(business_id, "retention"),
                                                                  process, to="webhooks"), timeout=30)


def counts(report: common_pb2.RetentionReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


async def test_old_events_go_with_their_deliveries_but_for_one_still_pending(api, account, stack, webhooks,
                                                                             history, database):
    business_id, key = account["business_id"], account["key"]
    delivered, quiet, waiting = (text_event(business_id, OLD + timedelta(minutes=n), f"old text {n}")
                                 for n in (3, 2, 1))
    recent = text_event(business_id, timedelta(minutes=5), "new text")
    theirs = text_event(str(uuid.uuid4()), OLD, "their old text")
    now = utcnow()
    done = {**domain.delivery_values(None, business_id, delivered.event_id, delivered.type, now,
                                     target_url="https://example.com/hook"), "status": "delivered", "attempts": 1}
    retrying = domain.delivery_values(None, business_id, waiting.event_id, waiting.type, now, attempts=1,
                                      next_attempt_at=now + timedelta(days=1), target_url="https://example.com/hook")
    async with history.transaction() as work:
        await work.events.keep([delivered, quiet, waiting, recent, theirs])
        await work.deliveries.add([done, retrying])
    async with database.transaction() as conn:
        await conn.execute(attempts.insert().values(delivery_id=done["id"], attempt=1, status_code=200,
                                                    latency_ms=12, at=now))

    with pytest.raises(grpc.aio.AioRpcError) as refused:  # the accounts service's retention job alone may ask
        await apply(webhooks, stack, business_id, process=registry.GATEWAY)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    kept = await apply(webhooks, stack, business_id, before=None)
    assert set(counts(kept).values()) == {0} and not kept.more

    first = await apply(webhooks, stack, business_id, batch=1)
    second = await apply(webhooks, stack, business_id, batch=1)
    again = await apply(webhooks, stack, business_id, batch=1)
    assert (counts(first)[("webhooks.event", "deleted")], first.more) == (1, True)
    assert (counts(second)[("webhooks.event", "deleted")], second.more) == (1, False)
    assert counts(first)[("webhooks.delivery", "deleted")] + counts(second)[("webhooks.delivery", "deleted")] == 1
    assert set(counts(again).values()) == {0} and not again.more

    status, page, _ = await api.request("GET", "/api/v1/events", key=key, params={"limit": 100})
    assert status == 200, page
    listed = {e["event_id"] for e in page["events"]}
    assert {recent.event_id, waiting.event_id} <= listed and not {delivered.event_id, quiet.event_id} & listed
    async with database.read() as conn:
        left = (await conn.execute(sa.select(deliveries.c.id).where(deliveries.c.business_id == business_id)))\
            .scalars().all()
        assert [str(i) for i in left] == [retrying["id"]]
        assert (await conn.execute(sa.select(attempts).where(attempts.c.delivery_id == done["id"]))).all() == []
    async with history.read() as work:
        assert theirs.event_id in await work.events.by_ids([theirs.event_id])

    # The pending delivery ended: its event goes in the next round.
    async with database.transaction() as conn:
        await conn.execute(deliveries.update().where(deliveries.c.id == retrying["id"]).values(status="failed"))
    last = await apply(webhooks, stack, business_id)
    assert counts(last) == {("webhooks.event", "deleted"): 1, ("webhooks.delivery", "deleted"): 1}


async def test_another_business_cannot_be_named(account, stack, webhooks):
    request = common_pb2.RetentionRequest(business_id=str(uuid.uuid4()), run_id="rr_test", batch=10)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await webhooks.ApplyRetention(request, metadata=signed(
            stack, acting_for(account["business_id"], "retention"), "accounts", to="webhooks"), timeout=30)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
