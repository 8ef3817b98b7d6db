"""The owners' side of the providers' webhooks, as the PROVIDER stream's consumers call it on the real database:
an SMS status callback or a payment event applied twice (a repeat after NATS's duplicate window, or two replicas)
changes things once, and one that can never apply is PermanentError (terminated, not redelivered forever)."""
import time
import uuid

import pytest
import sqlalchemy as sa

from core.bus import PermanentError
from core.ids import new_id, utcnow
from services.accounts import schema as accounts_schema
from services.accounts.billing.worker import payment_parts
from services.accounts.provisioning.service import Provisioning
from services.accounts.repository import accounts_units
from services.messaging import schema as messaging_schema
from services.messaging import store as messaging_store
from services.messaging.provider_service import ProviderRequests
from services.messaging.repositories.unit import messaging_uow
from tests.memory.agents_port import InMemoryAgents
from tests.service.conftest import new_business

BUSINESS_NUMBER, CONTACT = "+14155550140", "+14155550141"


async def events_of(database, outbox: sa.Table, business_id: str, kind: str) -> list:
    async with database.read() as conn:
        return (await conn.execute(sa.select(outbox.c.data).where(outbox.c.business_id == business_id,
                                                                   outbox.c.type == kind))).all()


async def queued_text(database) -> tuple[str, str, str]:
    """An outbound text of a business of its own, queued at the provider: (business, message id, sid)."""
    business_id, message_id, sid, now = str(uuid.uuid4()), new_id(), f"SM{uuid.uuid4().hex}", utcnow()
    async with database.transaction() as conn:
        await messaging_store.add_to_thread(conn, business_number=BUSINESS_NUMBER, contact_number=CONTACT,
                                            id=message_id, business_id=business_id, direction="outbound",
                                            from_number=BUSINESS_NUMBER, to_number=CONTACT, body="Hi",
                                            status="queued", provider_sid=sid, created_at=now, updated_at=now)
    return business_id, message_id, sid


async def test_a_status_callback_applied_twice_moves_its_text_once(database):
    business_id, message_id, sid = await queued_text(database)
    provider = ProviderRequests(messaging_uow(database), others=None)
    delivered = {"message_id": message_id, "params": {"MessageSid": sid, "MessageStatus": "delivered"}}
    late = {"message_id": None, "params": {"MessageSid": sid, "MessageStatus": "sent"}}  # by its sid alone
    await provider.apply_statuses([delivered, late])
    await provider.apply_statuses([delivered])
    async with database.read() as conn:
        status = await conn.scalar(sa.select(messaging_schema.messages.c.status)
                                   .where(messaging_schema.messages.c.id == message_id))
    assert status == "delivered"
    assert len(await events_of(database, messaging_schema.outbox, business_id, "sms.delivered")) == 1


@pytest.mark.parametrize("stored", [["not", "an", "object"], {"message_id": None},
                                    {"message_id": None, "params": {"MessageSid": 7}}])
async def test_a_status_callback_that_can_never_apply_is_permanent(database, stored):
    with pytest.raises(PermanentError):
        await ProviderRequests(messaging_uow(database), others=None).apply_statuses([stored])


@pytest.fixture
async def payments(cfg, database):
    uow = accounts_units(database)
    parts = payment_parts(cfg, uow, Provisioning(uow, InMemoryAgents([]), cfg.provisioning_retry_seconds))
    yield parts.payments
    for close in parts.closers:
        await close()


async def test_a_payment_event_applied_twice_is_applied_once(database, payments):
    async with database.transaction() as conn:
        business_id = await new_business(conn, "trialing")
    event = {"id": f"evt_{uuid.uuid4().hex}", "object": "event", "type": "customer.subscription.trial_will_end",
             "created": int(time.time()), "data": {"object": {
                 "id": "sub_x", "object": "subscription", "status": "trialing",
                 "trial_end": int(time.time()) + 3 * 86400, "metadata": {"business_id": business_id}}}}
    await payments.apply_event(event)
    await payments.apply_event(event)
    assert len(await events_of(database, accounts_schema.outbox, business_id, "workspace.owner_notice")) == 1


@pytest.mark.parametrize("event", [
    "not an event", {"id": "evt_1", "type": "invoice.paid", "created": 1},  # no data.object
    {"id": "evt_2", "type": "invoice.paid", "created": "yesterday", "data": {"object": {}}},
    {"id": 3, "type": "invoice.paid", "created": 1, "data": {"object": {}}}])
async def test_a_payment_event_that_can_never_apply_is_permanent(payments, event):
    with pytest.raises(PermanentError):
        await payments.apply_event(event)
