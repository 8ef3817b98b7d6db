"""The retention a business set, applied by the messaging service (ApplyRetention, as the accounts service's
retention job asks it over gRPC) against the running stack: texts past the cutoff (one sent through the API, one
received at the simulator with a photo) are redacted at the provider and here while newer ones keep their bodies; a
sent email past it loses its content; the consent and decision logs past theirs keep their rows under the number's
suppression hash, the opt-in still holding. A small batch says `more`; a repeated call changes nothing; another
business's records are untouched; only the accounts service may ask, for the business it acts for."""
import uuid
from datetime import timedelta

import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import new_id, utcnow
from core.messages import set_timestamp
from core.tenant import acting_for
from services.messaging import schema
from services.messaging import store as messaging_store
from services.messaging.data_retention import TEXTS_PER_CALL
from services.messaging.suppression import Suppression
from switchboard.v1 import common_pb2, messaging_pb2, messaging_pb2_grpc
from tests.service.test_messaging_erasure import provider_media, provider_message
from tests.tenants import as_business, signed
from tests.texting import number, opt_in, send, settled_message
from tests.waiting import wait_until

OLD = timedelta(days=60)  # past the test's cutoff, not the default retention the stack's own job applies
CUTOFF = timedelta(days=30)


@pytest.fixture
async def messaging(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('messaging').port}") as channel:
        yield messaging_pb2_grpc.MessagingStub(channel)


@pytest.fixture
def suppression(cfg) -> Suppression:
    return Suppression(cfg.privacy_hash_key.reveal())


async def apply(messaging, stack, business_id: str, batch: int = 100, acting_for_business: str | None = None,
                process: str = "accounts", **cutoffs) -> common_pb2.RetentionReport:
    now = utcnow()
    request = common_pb2.RetentionRequest(business_id=business_id, run_id="rr_test", batch=batch)
    for name, age in cutoffs.items():
        set_timestamp(request, name, now - age)
    return await messaging.ApplyRetention(request, metadata=signed(
        stack, acting_for(acting_for_business or business_id, "retention"), process, to="messaging"), timeout=30)


def counts(report: common_pb2.RetentionReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


async def rows(database, table: sa.Table, *where) -> list:
    async with database.read() as conn:
        return list((await conn.execute(sa.select(table).where(*where).order_by(*table.primary_key))).all())


async def backdate(database, table: sa.Table, ids: list, column: str = "created_at") -> None:
    async with database.transaction() as conn:
        await conn.execute(table.update().where(table.c.id.in_(ids)).values({column: utcnow() - OLD}))


async def text_of(database, business_id: str, body: str, created_at, contact: str = "+14155550189") -> str:
    """A received text of `business_id` (the row alone, no provider sid): its id."""
    message_id = new_id()
    async with database.transaction() as conn:
        await messaging_store.add_to_thread(conn, business_number="+14155550188", contact_number=contact,
                                            id=message_id, business_id=business_id, direction="inbound",
                                            from_number=contact, to_number="+14155550188", body=body,
                                            status="received", created_at=created_at, updated_at=created_at)
    return message_id


async def evidence_of(database, business_id: str, phone: str, at) -> str:
    """An opt-in with a note and a decision naming `phone`, both at `at`: the decision's id."""
    decision_id = new_id()
    async with database.transaction() as conn:
        await messaging_store.add_consent(conn, business_id=business_id, phone=phone, kind="opt_in", source="api",
                                          actor=phone, reference=None, note=f"{phone} said yes at the fair",
                                          created_at=at)
        await conn.execute(schema.compliance_decisions.insert().values(
            id=decision_id, business_id=business_id, channel="sms", phone=phone, outcome="allow", rule="allowed",
            source="", message=f"allowed: opt in ({phone})", actor="api", inputs={"consent_basis": "opt_in"},
            decided_at=at))
    return decision_id


async def email_of(database, business_id: str, status: str, subject: str) -> str:
    email_id = new_id()
    async with database.transaction() as conn:
        await messaging_store.queue_email(conn, id=email_id, business_id=business_id, kind="api",
                                          to_address="dana@example.com", subject=subject, body="420 dollars",
                                          status=status, created_at=utcnow(), updated_at=utcnow())
    return email_id


async def test_what_is_past_the_cutoffs_is_redacted_here_and_at_the_provider_and_nothing_else(
        api, stack, account, calling_agent, sms, messaging, database, suppression):
    key, business_id, ours = account["key"], account["business_id"], calling_agent["phone_number"]
    person, recent, kept_in = number("0571"), number("0572"), number("0573")
    await opt_in(api, key, person)
    status, sent, _ = await send(api, key, calling_agent, person, "Your quote is 420 dollars, Dana.")
    assert status == 200, sent
    await settled_message(api, key, sent["message_sid"])
    _, received = await sms.control("POST", "/inbound", {"from": person, "to": ours, "body": "Here is my gate code",
                                                         "media": ["image/jpeg"]})
    assert received["status"] == 200, received
    old_texts = await wait_until(lambda: rows(database, schema.messages, schema.messages.c.business_id == business_id),
                                 "their two texts", lambda found: len(found) == 2)
    await backdate(database, schema.messages, [t.id for t in old_texts])
    _, fresh = await sms.control("POST", "/inbound", {"from": recent, "to": ours, "body": "Call me tomorrow"})
    assert fresh["status"] == 200, fresh
    [new_text] = await wait_until(lambda: rows(database, schema.messages, schema.messages.c.business_id == business_id,
                                               schema.messages.c.body == "Call me tomorrow"), "the new text", len)
    old_email, new_email = (await email_of(database, business_id, "sent", "Your quote, Dana"),
                            await email_of(database, business_id, "sent", "Your booking, Dana"))
    unsent = await email_of(database, business_id, "pending_approval", "Your invoice, Dana")
    await backdate(database, schema.emails, [old_email, unsent])
    old_decision = await evidence_of(database, business_id, kept_in, utcnow() - OLD)
    new_decision = await evidence_of(database, business_id, recent, utcnow())
    elsewhere = str(uuid.uuid4())
    their_text = await text_of(database, elsewhere, "Not yours", utcnow() - OLD)
    their_decision = await evidence_of(database, elsewhere, kept_in, utcnow() - OLD)

    report = await apply(messaging, stack, business_id, message_bodies_before=CUTOFF, evidence_before=CUTOFF)

    assert not report.more
    assert counts(report) == {("provider.message", "redacted"): 2, ("messaging.message_body", "redacted"): 2,
                              ("messaging.email", "redacted"): 1, ("messaging.consent_events", "redacted"): 1,
                              ("messaging.compliance_decisions", "redacted"): 1}
    # Here: the old texts' bodies gone (numbers, status and sid kept), the new one's kept.
    for text in await rows(database, schema.messages, schema.messages.c.id.in_([t.id for t in old_texts])):
        assert text.body == "" and text.redacted_at is not None and person in (text.from_number, text.to_number)
        assert text.status in ("delivered", "received") and text.provider_sid
    [kept] = await rows(database, schema.messages, schema.messages.c.id == new_text.id)
    assert kept.body == "Call me tomorrow" and kept.redacted_at is None
    # At the provider: the old bodies gone and the photo deleted; the new text untouched.
    for text in old_texts:
        assert (await provider_message(stack, text.provider_sid))["body"] == ""
        assert (await provider_media(stack, text.provider_sid))["media_list"] == []
    assert (await provider_message(stack, new_text.provider_sid))["body"] == "Call me tomorrow"
    # Emails: the old sent one's content gone, the new one and one not sent yet kept.
    found = {str(e.id): e for e in await rows(database, schema.emails, schema.emails.c.business_id == business_id)}
    assert (found[old_email].subject, found[old_email].body) == ("", "")
    assert found[old_email].to_address == "dana@example.com"
    assert found[new_email].body == found[unsent].body == "420 dollars"
    # The evidence: the old rows kept under the hash with what proves them, the new ones as they were.
    hashed = suppression.hash(kept_in)
    [old_consent] = await rows(database, schema.consent_events, schema.consent_events.c.business_id == business_id,
                               schema.consent_events.c.phone == hashed)
    assert (old_consent.kind, old_consent.source, old_consent.actor, old_consent.note) == ("opt_in", "api", hashed,
                                                                                          None)
    [decision] = await rows(database, schema.compliance_decisions, schema.compliance_decisions.c.id == old_decision)
    assert (decision.phone, decision.message, decision.outcome) == (hashed, f"allowed: opt in ({hashed})", "allow")
    [newer] = await rows(database, schema.compliance_decisions, schema.compliance_decisions.c.id == new_decision)
    assert newer.phone == recent
    recent_consent = await rows(database, schema.consent_events, schema.consent_events.c.phone == recent)
    assert recent_consent and all(r.note == f"{recent} said yes at the fair" for r in recent_consent
                                  if r.source == "api")
    # The opt-in still holds: consent is read under the number and its hash.
    consent = await messaging.GetConsent(messaging_pb2.GetConsentRequest(business_id=business_id, phone=kept_in),
                                         metadata=as_business(stack, account, "messaging"))
    assert consent.state == "opted_in"
    # Another business's records: untouched.
    [theirs] = await rows(database, schema.messages, schema.messages.c.id == their_text)
    assert theirs.body == "Not yours" and theirs.redacted_at is None
    [theirs_decided] = await rows(database, schema.compliance_decisions,
                                  schema.compliance_decisions.c.id == their_decision)
    assert theirs_decided.phone == kept_in
    # Again: nothing left to do.
    again = await apply(messaging, stack, business_id, message_bodies_before=CUTOFF, evidence_before=CUTOFF)
    assert not again.more and set(counts(again).values()) == {0}


async def test_a_small_batch_says_more_and_an_unset_cutoff_keeps_its_kind(stack, account, messaging, database):
    business_id = account["business_id"]
    old = [await text_of(database, business_id, f"old text {i}", utcnow() - OLD - timedelta(minutes=i))
           for i in range(3)]
    await evidence_of(database, business_id, "+14155550174", utcnow() - OLD)

    kept = await apply(messaging, stack, business_id, batch=2, evidence_before=CUTOFF)
    assert counts(kept)[("messaging.message_body", "redacted")] == 0 and not kept.more
    first = await apply(messaging, stack, business_id, batch=2, message_bodies_before=CUTOFF)
    assert counts(first)[("messaging.message_body", "redacted")] == 2 and first.more
    second = await apply(messaging, stack, business_id, batch=2, message_bodies_before=CUTOFF)
    assert counts(second)[("messaging.message_body", "redacted")] == 1 and not second.more
    assert {t.body for t in await rows(database, schema.messages, schema.messages.c.id.in_(old))} == {""}


async def test_a_call_redacts_at_most_texts_per_call_whatever_the_batch(stack, account, messaging, database):
    business_id, at = account["business_id"], utcnow() - OLD
    async with database.transaction() as conn:
        for i in range(TEXTS_PER_CALL + 1):
            await messaging_store.add_to_thread(
                conn, business_number="+14155550188", contact_number="+14155550189", id=new_id(),
                business_id=business_id, direction="inbound", from_number="+14155550189",
                to_number="+14155550188", body=f"old text {i}", status="received", created_at=at, updated_at=at)
    first = await apply(messaging, stack, business_id, batch=1000, message_bodies_before=CUTOFF)
    assert counts(first)[("messaging.message_body", "redacted")] == TEXTS_PER_CALL and first.more
    second = await apply(messaging, stack, business_id, batch=1000, message_bodies_before=CUTOFF)
    assert counts(second)[("messaging.message_body", "redacted")] == 1 and not second.more


async def test_only_the_accounts_service_may_ask_and_only_for_the_business_it_acts_for(stack, account, messaging):
    business_id = account["business_id"]
    for process in ("gateway", "calls"):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await apply(messaging, stack, business_id, process=process, message_bodies_before=CUTOFF)
        assert from_rpc_error(refused.value).code in ("unauthorized", "forbidden")
    with pytest.raises(grpc.aio.AioRpcError) as another:
        await apply(messaging, stack, business_id, acting_for_business=str(uuid.uuid4()),
                    message_bodies_before=CUTOFF)
    assert from_rpc_error(another.value).code == "forbidden"
    with pytest.raises(grpc.aio.AioRpcError) as no_batch:
        await apply(messaging, stack, business_id, batch=0, message_bodies_before=CUTOFF)
    assert from_rpc_error(no_batch.value).code == "invalid_request"
