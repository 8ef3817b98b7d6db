"""A torn-down business's deletion from the webhooks service (services.webhooks.erasure.Erasure.erase_business) on
the running stack: its event history, deliveries and subscriptions deleted a bounded batch per request (`more` until
done), the RPC refused to any caller but the accounts service, and another business's history untouched."""
import uuid
from datetime import timedelta

import grpc
import pytest

from core import db, registry
from core.events import Envelope, to_data
from core.ids import new_id, utcnow
from core.tenant import Tenant
from core.uow import Database, UnitOfWork
from services.webhooks import erasure as webhooks_erasure
from services.webhooks.erasure import Erasure
from services.webhooks.repository import WebhooksUnit
from switchboard.v1 import common_pb2, events_pb2, webhooks_pb2_grpc
from tests.receiver import Receiver
from tests.tenants import signed


@pytest.fixture
async def webhooks(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('webhooks').port}") as channel:
        yield webhooks_pb2_grpc.WebhooksStub(channel)


@pytest.fixture
async def history(stack):
    engine = db.create_engine(stack.database_url, pool_size=2, application_name="teardown-tests")
    yield UnitOfWork(Database(engine), WebhooksUnit)
    await engine.dispose()


def texts(business_id: str, n: int) -> list[Envelope]:
    at = utcnow() - timedelta(minutes=5)
    return [Envelope(new_id(), "sms.received", at + timedelta(seconds=i), business_id, to_data(events_pb2.SmsReceived(
        message_id=new_id(), conversation_id=new_id(), **{"from": "+14155550178"}, to="+14155550100",
        body=f"text {i}"))) for i in range(n)]


def counts(report: common_pb2.ErasureReport) -> dict[str, int]:
    return {item.what: item.count for item in report.items if item.action == "deleted"}


async def test_a_torn_down_business_history_and_subscriptions_are_deleted_in_batches(
        api, account, stack, webhooks, history, monkeypatch):
    business_id, key = account["business_id"], account["key"]
    receiver = await Receiver().start()
    try:
        status, sub, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
            "webhook_url": receiver.url, "events": ["sms.received"]})
    finally:
        await receiver.stop()
    assert status == 201, sub
    other = str(uuid.uuid4())
    mine, theirs = texts(business_id, 5), texts(other, 2)
    async with history.transaction() as work:
        await work.events.keep(mine + theirs)
    request = common_pb2.ErasureRequest(business_id=business_id, erasure_id=business_id, whole_business=True)
    with pytest.raises(grpc.aio.AioRpcError) as refused:  # the accounts service's teardown deletion alone may ask
        await webhooks.ErasePerson(request, metadata=signed(stack, Tenant(), registry.GATEWAY, to="webhooks"))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED

    # Two events a batch, one batch a request: asked again while `more`.
    monkeypatch.setattr(webhooks_erasure, "BUSINESS_ROUNDS", 1)
    deletion = Erasure(history, batch=2)
    answers = [await deletion.erase_business(business_id) for _ in range(3)]
    assert [more for _, more in answers] == [True, True, False]
    assert sum(c["webhooks.event"] for c, _ in answers) == 5 and answers[-1][0]["webhooks.subscription"] == 1
    # Through the RPC, as the accounts service asks: nothing left.
    report = await webhooks.ErasePerson(request, metadata=signed(stack, Tenant(), "accounts", to="webhooks"))
    assert counts(report) == {"webhooks.delivery": 0, "webhooks.event": 0, "webhooks.subscription": 0}
    assert not report.more
    async with history.read() as work:
        kept = await work.events.by_ids([e.event_id for e in mine + theirs])
    assert set(kept) == {e.event_id for e in theirs}
    status, listed, _ = await api.request("GET", "/api/v1/webhooks", key=key)
    assert status == 200 and listed["webhooks"] == [], listed
