"""The webhook use cases in the fast tier, on the in-memory database (tests/memory/webhooks.py): subscriptions,
their signing secrets and the per-call webhook secret, the test event, the history, replays (service.py), and the
dispatcher's fan-out, delivery and outcomes (delivery_service.py), with a receiver that answers without a network.
Real HTTP, the bus and concurrent dispatchers stay with the stack-backed tests (tests/service,
tests/integration/test_webhook_dispatch.py, tests/e2e/test_webhooks.py)."""
from datetime import timedelta

import pytest

from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.settings import derive_sealing_key
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from services.webhooks import domain
from services.webhooks.delivery import Sender, signing_secrets
from services.webhooks.service import Webhooks
from tests.memory import MemoryDatabase
from tests.memory.webhooks import MemoryWebhooksUnit

URL = "http://127.0.0.1:9/hooks"
BOX = domain.SecretBox(derive_sealing_key("fast-tier-server-secret"))


@pytest.fixture
async def webhooks(business_id):
    sender = Sender(allow_loopback=True)
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))):
        yield Webhooks(UnitOfWork(MemoryDatabase(), MemoryWebhooksUnit), BOX, sender, allow_loopback=True,
                       lease=timedelta(seconds=2))
    await sender.close()


async def test_a_url_is_subscribed_once_with_a_secret_shown_then_updated_and_re_enabled(webhooks, business_id):
    saved = await webhooks.save(None, f" {URL} ", ["lead.created"], "CRM sync")
    assert saved.created and saved.business_id == business_id and saved.secret.startswith(domain.SECRET_PREFIX)
    row = saved.row
    assert (row.url, row.events, row.description, row.is_active, row.secret_tail) == (
        URL, ["lead.created"], "CRM sync", True, saved.secret[-4:])
    assert BOX.open(row.secret_sealed) == saved.secret
    async with webhooks.uow.transaction() as work:  # the dispatcher disabled it (delivery_service.py)
        await work.subscriptions.change_subscription(row.id, {
            "is_active": False, "disabled_reason": "failing for 20 hours", "failure_count": 7,
            "failing_since": utcnow()})
    again = await webhooks.save(business_id, URL, ["call.completed", "lead.created"], None)
    assert not again.created and again.secret is None and again.row.id == row.id
    assert (again.row.events, again.row.description, again.row.is_active, again.row.disabled_reason,
            again.row.failure_count, again.row.failing_since) == (["call.completed", "lead.created"], "CRM sync",
                                                                  True, None, 0, None)
    assert again.row.secret_sealed == row.secret_sealed
    other = await webhooks.save(None, "http://127.0.0.1:9/other", ["lead.created"], None)
    listed_business, listed = await webhooks.list_subscriptions(None)
    assert listed_business == business_id and [r.id for r in listed] == [row.id, other.row.id]


async def test_a_subscription_is_refused_what_it_may_not_ask(webhooks, business_id):
    for url, events, description, message in [
            ("ftp://hooks.example.com", ["lead.created"], None, "http(s) URL"),
            (URL, ["lead.exploded"], None, "unknown event type"),
            (URL, [], None, "at least one event type"),
            (URL, ["lead.created"], "x" * 10_000, "description must be at most")]:
        with pytest.raises(ServiceError) as refused:
            await webhooks.save(None, url, events, description)
        assert refused.value.code == "invalid_request" and message in refused.value.message
    public_only = Webhooks(webhooks.uow, BOX, webhooks.sender, allow_loopback=False, lease=webhooks.lease)
    with pytest.raises(ServiceError) as loopback:
        await public_only.save(None, URL, ["lead.created"], None)
    assert "loopback" in loopback.value.message
    with pytest.raises(ServiceError) as theirs:
        await webhooks.save(new_id(), URL, ["lead.created"], None)
    assert theirs.value.code == "forbidden"
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id, new_id()))), \
            pytest.raises(ServiceError) as which:
        await webhooks.save(None, URL, ["lead.created"], None)
    assert which.value.code == "bad_request"
    assert (await webhooks.list_subscriptions(None))[1] == []


async def test_a_subscription_is_deleted_and_rotated_in_its_business_only(webhooks, business_id):
    saved = await webhooks.save(None, URL, ["lead.created"], None)
    before = utcnow()
    rotated = await webhooks.rotate_secret(None, saved.row.id)
    _, [row] = await webhooks.list_subscriptions(None)
    assert rotated.secret != saved.secret and rotated.previous_expires_at >= before + domain.ROTATION_OVERLAP
    assert signing_secrets(BOX, row, utcnow()) == [rotated.secret, saved.secret]
    assert signing_secrets(BOX, row, rotated.previous_expires_at) == [rotated.secret]
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        for write in (webhooks.delete, webhooks.rotate_secret):
            with pytest.raises(ServiceError) as hidden:
                await write(None, saved.row.id)
            assert hidden.value.code == "not_found"
    assert await webhooks.delete(None, saved.row.id) == saved.row.id
    assert (await webhooks.list_subscriptions(None))[1] == []
    with pytest.raises(ServiceError) as gone:
        await webhooks.delete(business_id, saved.row.id)
    assert gone.value.code == "not_found"


async def test_the_per_call_secret_is_made_on_demand_and_rotated_keeping_the_previous_one(webhooks, business_id):
    none = await webhooks.call_secret(None)
    assert (none.business_id, none.row, none.secret) == (business_id, None, None)
    made = await webhooks.rotate_call_secret(None)
    assert BOX.open(made.row.secret_sealed) == made.secret and made.row.previous_secret_sealed is None
    replaced = await webhooks.rotate_call_secret(business_id)
    assert replaced.secret != made.secret and replaced.row.created_at == made.row.created_at
    assert signing_secrets(BOX, replaced.row, utcnow()) == [replaced.secret, made.secret]
    shown = await webhooks.call_secret(None)
    assert shown.secret is None and shown.row.secret_tail == replaced.secret[-4:]
