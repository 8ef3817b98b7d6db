"""The webhook use cases in the fast tier, on the in-memory database (tests/memory/webhooks.py): subscriptions,
their signing secrets and the per-call webhook secret, the test event, the history, replays (service.py), and the
dispatcher's fan-out, delivery and outcomes (delivery_service.py), with a receiver that answers without a network.
Real HTTP, the bus and concurrent dispatchers stay with the stack-backed tests (tests/service,
tests/integration/test_webhook_dispatch.py, tests/e2e/test_webhooks.py)."""
import json
from datetime import timedelta

import pytest

from core import signing
from core.errors import ServiceError
from core.events import Envelope
from core.ids import new_id, utcnow
from core.pagination import Page
from core.sealing import SecretBox
from core.settings import derive_sealing_key
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from services.webhooks import delivery_service, domain
from services.webhooks.delivery import signing_secrets
from services.webhooks.dispatcher import DeliveryWorker
from services.webhooks.service import Webhooks
from tests.memory import MemoryDatabase
from tests.memory.webhooks import MemoryWebhooksUnit
from tests.unit.fakes import FakeSender

URL = "http://127.0.0.1:9/hooks"
BOX = SecretBox(derive_sealing_key("fast-tier-server-secret"))


@pytest.fixture
async def webhooks(business_id):
    """The use cases on an empty in-memory database; `webhooks.sender` is the receivers (tests.unit.fakes)."""
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))):
        yield Webhooks(UnitOfWork(MemoryDatabase(), MemoryWebhooksUnit), BOX, FakeSender(), allow_loopback=True,
                       lease=timedelta(seconds=2))


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


CALL_URL = "http://127.0.0.1:9/calls/1"
OTHER_URL = "http://127.0.0.1:9/other"


def event(business_id, event_type="lead.created", **data) -> Envelope:
    return Envelope(new_id(), event_type, utcnow(), business_id, data)


def signed_with(secret: str, body: bytes, headers: dict[str, str]) -> bool:
    """Whether the request's X-Service-Signature carries a v1 of `secret` (domain.signature_header)."""
    parts = [p.split("=", 1) for p in headers["X-Service-Signature"].split(",")]
    stamp = int(next(v for k, v in parts if k == "t"))
    return signing.signature(secret, stamp, body) in [v for k, v in parts if k == "v1"]


async def deliveries_of(webhooks, **filters):
    paged = await webhooks.list_deliveries(None, filters.get("webhook_id"), filters.get("event_id"),
                                           filters.get("status"), Page(limit=50))
    return paged.rows


async def test_events_fan_out_once_to_the_subscriptions_that_want_them_and_to_a_calls_own_url(webhooks,
                                                                                            business_id):
    wanted = await webhooks.save(None, URL, ["lead.created", "call.completed"], None)
    await webhooks.save(None, OTHER_URL, ["call.failed"], None)
    lead, call = event(business_id), event(business_id, "call.completed", webhook_url=CALL_URL)
    fanned = await delivery_service.fan_out(webhooks.uow, [lead, call, event(None)])  # no business: kept only
    assert (fanned.queued, fanned.claimed) == (3, [])
    assert (await delivery_service.fan_out(webhooks.uow, [lead, call])).queued == 0  # redelivered: nothing new
    queued = await deliveries_of(webhooks, status="pending")
    assert sorted((d.subscription_id or "", d.target_url or "", d.event_type, d.attempts) for d in queued) == [
        ("", CALL_URL, "call.completed", 0), (wanted.row.id, "", "call.completed", 0),
        (wanted.row.id, "", "lead.created", 0)]
    listed = await webhooks.list_events(None, None, None, Page(limit=10))
    assert {e.event_id for e in listed.rows} == {lead.event_id, call.event_id}
    only = await webhooks.list_events(None, "call.completed", None, Page(limit=10))
    assert [e.data for e in only.rows] == [{"webhook_url": CALL_URL}]


async def test_claimed_deliveries_are_sent_signed_outside_any_unit_and_their_outcomes_recorded(webhooks,
                                                                                            business_id):
    saved = await webhooks.save(None, URL, ["lead.created"], None)
    lead, call = event(business_id), event(business_id, "call.completed", webhook_url=CALL_URL)
    await delivery_service.fan_out(webhooks.uow, [lead, call])
    worker = DeliveryWorker(webhooks.uow, BOX, webhooks.sender, lease=timedelta(minutes=1))
    claimed = await worker.claim()
    assert sorted(d.attempts for d in claimed) == [1, 1] and await worker.claim() == []  # held by the lease
    webhooks.sender.answers[CALL_URL] = 500
    await delivery_service.deliver(webhooks.uow, BOX, webhooks.sender, claimed)  # FakeSender refuses inside a unit
    sent = {url: (json.loads(body), body, headers) for url, body, headers in webhooks.sender.sent}
    body, raw, headers = sent[URL]
    assert (body["event_id"], body["event"], headers["X-Service-Event-Id"]) == (lead.event_id, "lead.created",
                                                                                 lead.event_id)
    assert signed_with(saved.secret, raw, headers)
    call_secret = (await webhooks.call_secret(None)).row  # made on first need, and signs the call's own URL
    assert call_secret is not None and signed_with(BOX.open(call_secret.secret_sealed), *sent[CALL_URL][1:])
    [delivered] = await deliveries_of(webhooks, status="delivered")
    [retrying] = await deliveries_of(webhooks, status="pending")
    assert (delivered.event_id, delivered.attempts, delivered.last_status_code) == (lead.event_id, 1, 200)
    assert (retrying.target_url, retrying.attempts, retrying.last_status_code, retrying.last_error) == (
        CALL_URL, 1, 500, "receiver answered 500")
    assert retrying.next_attempt_at > utcnow()  # retried after domain.RETRY_DELAYS[0]
    _, [row] = await webhooks.list_subscriptions(None)
    assert (row.failure_count, row.failing_since) == (0, None) and row.last_triggered_at is not None


async def test_a_subscription_failing_past_its_window_is_disabled_and_a_deleted_ones_deliveries_canceled(
        webhooks, business_id):
    await webhooks.save(None, URL, ["lead.created"], None)
    webhooks.sender.status = 503
    for _ in range(2):  # the first failure starts the streak, the next (past the scaled window) disables it
        fanned = await delivery_service.fan_out(webhooks.uow, [event(business_id)], lease=timedelta(minutes=1))
        await delivery_service.deliver(webhooks.uow, BOX, webhooks.sender, fanned.claimed, scale=1e-9,
                                       known=fanned)
    _, [row] = await webhooks.list_subscriptions(None)
    assert (row.is_active, row.failure_count) == (False, 2) and "save the subscription again" in row.disabled_reason
    fanned = await delivery_service.fan_out(webhooks.uow, [event(business_id)])
    assert fanned.queued == 0  # a disabled subscription wants nothing
    again = await webhooks.save(None, URL, ["lead.created"], None)
    fanned = await delivery_service.fan_out(webhooks.uow, [event(business_id)], lease=timedelta(minutes=1))
    await webhooks.delete(None, again.row.id)
    sent = len(webhooks.sender.sent)
    await delivery_service.deliver(webhooks.uow, BOX, webhooks.sender, fanned.claimed)  # it reads the subscription
    assert len(webhooks.sender.sent) == sent
    assert [d.status for d in await deliveries_of(webhooks, event_id=fanned.claimed[0].event_id)] == ["canceled"]


async def test_the_test_event_is_sent_now_and_recorded_without_retries(webhooks, business_id):
    saved = await webhooks.save(None, URL, ["lead.created"], None)
    await webhooks.save(None, OTHER_URL, ["lead.created"], None)
    webhooks.sender.answers[OTHER_URL] = 404
    sent = await webhooks.send_test(None, None)
    assert {(t.url, o.ok) for t, o in sent.results} == {(URL, True), (OTHER_URL, False)}
    recorded = await deliveries_of(webhooks, event_id=sent.event_id)
    assert sorted((d.status, d.attempts) for d in recorded) == [("delivered", 1), ("failed", 1)]
    [listed] = (await webhooks.list_events(None, "webhook.test", None, Page(limit=10))).rows
    assert listed.event_id == sent.event_id
    one = await webhooks.send_test(None, saved.row.id)
    assert [t.id for t, _ in one.results] == [saved.row.id]
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))), pytest.raises(ServiceError) as none:
        await webhooks.send_test(None, None)
    assert none.value.code == "not_found"


async def test_events_are_replayed_or_backfilled_to_an_active_subscription(webhooks, business_id):
    saved = await webhooks.save(None, URL, ["lead.created"], None)
    first, second, other = event(business_id), event(business_id), event(business_id, "call.failed")
    await delivery_service.fan_out(webhooks.uow, [first, second, other])
    replayed = await webhooks.replay(None, saved.row.id, [first.event_id], None, None)
    backfilled = await webhooks.replay(None, saved.row.id, [], first.occurred_at, None)  # its types only
    replays = await deliveries_of(webhooks, webhook_id=saved.row.id)
    assert sorted(d.event_id for d in replays if d.replay) == sorted([first.event_id, first.event_id,
                                                                     second.event_id])
    assert len(replayed) == 1 and len(backfilled) == 2
    for event_ids, since, refusal in [([], None, "invalid_request"), ([first.event_id], first.occurred_at,
                                                                      "invalid_request"),
                                      (["not-a-uuid"], None, "invalid_request"), ([new_id()], None, "not_found")]:
        with pytest.raises(ServiceError) as refused:
            await webhooks.replay(None, saved.row.id, event_ids, since, None)
        assert refused.value.code == refusal
    async with webhooks.uow.transaction() as work:
        await work.subscriptions.disable(saved.row.id, "failing")
    with pytest.raises(ServiceError) as disabled:
        await webhooks.replay(None, saved.row.id, [first.event_id], None, None)
    assert "disabled" in disabled.value.message
