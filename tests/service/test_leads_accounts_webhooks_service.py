"""Use cases of the sdr, accounts and webhooks services run directly on the real database."""
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.pagination import Page
from core.sealing import SecretBox
from core.tenant import acting_as
from core.uow import Database, UnitOfWork
from services.sdr import schema as sdr_schema
from services.sdr.repository import sql_unit
from services.sdr.service import Contact, LeadFilters, Leads
from services.webhooks import delivery_service
from services.webhooks.delivery import Outcome, Sender
from services.webhooks.repository import WebhooksUnit
from services.webhooks.schema import attempts
from services.webhooks.service import Webhooks
from tests.api import next_client_ip
from tests.service.conftest import new_tenant


def _leads(engine, pool) -> Leads:
    """The lead use cases on the stack's database, the lead list on the raw pool; no agents lookup (no agent_id
    here)."""
    database = Database(engine, pool=pool)
    return Leads(UnitOfWork(database, sql_unit(database), events=sdr_schema.outbox), agents=None)


async def test_a_contact_upsert_then_interactions_rescore_once_per_reference(engine, pool):
    leads = _leads(engine, pool)
    with acting_as(new_tenant()) as who:
        business = who.business_ids[0]
        lead, created = await leads.upsert_contact(business, "+14155550150", {"agent_name": "Front desk"})
        again, created_again = await leads.upsert_contact(business, "+14155550150", {"name": "Dana",
                                                                                     "source": "sms"})
        assert (created, created_again) == (True, False) and again.id == lead.id
        assert (again.name, again.source, again.agent_name) == ("Dana", "inbound_call", "Front desk")
        first = await leads.record_interaction(str(lead.id), "call", "inbound", "call-1", "Wants a quote", None)
        repeat = await leads.record_interaction(str(lead.id), "call", "inbound", "call-1", "Wants a quote", None)
        assert first.interaction_count == repeat.interaction_count == 1 and first.score > lead.score
        page = await leads.list(LeadFilters(phone="+14155550150", score_gte=first.score), Page(limit=10))
        assert [r.id for r in page.rows] == [lead.id] and not page.has_more
        with pytest.raises(ServiceError) as err:
            await leads.list(LeadFilters(score_lte=101), Page(limit=10))
        assert err.value.code == "invalid_request" and "score_lte" in err.value.message
    with acting_as(new_tenant()):
        assert (await leads.list(LeadFilters(), Page(limit=10))).rows == []  # another tenant sees none of them


async def test_a_batch_of_contacts_is_recorded_in_order_each_for_its_business(engine, database, pool):
    """The sdr's consumers record a fetched batch of call and text events together: a first call makes the lead
    and a second one in the same batch counts on it; each contact acts for its own business; a lead of another
    business fails the batch (the consumer then takes its events one by one)."""
    leads = _leads(engine, pool)
    one, other = new_tenant(), new_tenant()
    at = utcnow()

    def contact(business, phone, reference, lead_id=None, **collected):
        return Contact(business, phone, lead_id, "call", "outbound", reference, collected, "quote", at)

    await leads.record_contacts([
        contact(one.business_ids[0], "+14155550160", "c-1", name="Robin"),
        contact(other.business_ids[0], "+14155550160", "c-2"),
        contact(one.business_ids[0], "+14155550160", "c-3"),
        contact(one.business_ids[0], "+14155550160", "c-1"),  # a redelivered event: counted once
    ], "sdr-calls")
    with acting_as(one):
        [mine] = (await leads.list(LeadFilters(phone="+14155550160"), Page(limit=10))).rows
    with acting_as(other):
        [theirs] = (await leads.list(LeadFilters(phone="+14155550160"), Page(limit=10))).rows
    assert (mine.name, mine.source, mine.interaction_count) == ("Robin", "outbound_call", 2)
    assert (theirs.name, theirs.interaction_count) == (None, 1) and theirs.id != mine.id
    async with engine.connect() as conn:
        types = (await conn.execute(sa.select(sdr_schema.outbox.c.type).where(
            sdr_schema.outbox.c.business_id == one.business_ids[0]).order_by(sdr_schema.outbox.c.id))).scalars().all()
    assert types[:2] == ["lead.created", "lead.scored"] and set(types[2:]) <= {"lead.scored"}

    with pytest.raises(ServiceError) as err:
        await leads.record_contacts([contact(one.business_ids[0], "+14155550161", "c-4"),
                                     contact(one.business_ids[0], "+14155550161", "c-5",
                                             lead_id=theirs.id)], "sdr-calls")
    assert err.value.code == "not_found"
    with acting_as(one):  # the failed batch left nothing behind
        assert (await leads.list(LeadFilters(phone="+14155550161"), Page(limit=10))).rows == []


async def test_signups_past_the_hourly_limit_are_refused_with_retry_after(cfg, accounts_of):
    accounts = accounts_of(cfg.model_copy(update={"signup_limit_per_hour": 2}))
    ip = next_client_ip()
    for _n in range(2):
        done = await accounts.signup.signup("Acme", f"limit-{new_id()}@example.com", "", "", "", "", ip)
        assert done.api_key.startswith("svc_live_") and done.magic_link.startswith(cfg.public_base_url)
    with pytest.raises(ServiceError) as err:
        await accounts.signup.signup("Acme", f"limit-{new_id()}@example.com", "", "", "", "", ip)
    assert err.value.code == "rate_limited" and 1 <= int(err.value.details["retry_after"]) <= 3601
    assert "at most 2 signups" in err.value.message


async def test_a_subscription_failing_past_the_window_is_disabled(cfg, engine, database):
    box = SecretBox(cfg.webhook_secrets_key.reveal())
    sender = Sender(allow_loopback=True)
    webhooks = Webhooks(UnitOfWork(database, WebhooksUnit), box, sender, allow_loopback=True,
                        lease=timedelta(seconds=2))
    try:
        with acting_as(new_tenant()) as who:
            saved = await webhooks.save(None, "http://127.0.0.1:9/hook", ["lead.created"], None)
            sent = await webhooks.send_test(who.business_ids[0], saved.row.id)  # nothing listens on port 9
            [(_, outcome)] = sent.results
            assert not outcome.ok and outcome.error.startswith("could not connect")
            deliveries = await webhooks.list_deliveries(None, saved.row.id, sent.event_id, None, Page(limit=10))
            [delivery] = deliveries.rows
            assert (delivery.status, delivery.attempts) == ("failed", 1)  # a test event is not retried
            # Failing for longer than the (scaled) window: the next failed outcome disables it.
            scale = 1e-9
            await delivery_service.record_outcomes(webhooks.uow, [(delivery, Outcome(500, 3, "receiver answered 500"))],
                                                   retry=False, scale=scale)
            _, [row] = await webhooks.list_subscriptions(None)
        assert not row.is_active and "save the subscription again" in row.disabled_reason
        async with engine.connect() as conn:
            assert await conn.scalar(sa.select(sa.func.count()).select_from(attempts)
                                     .where(attempts.c.delivery_id == delivery.id)) == 2
    finally:
        await sender.close()
