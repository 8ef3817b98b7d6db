"""The send use case (services/messaging/service.py: Texts.place/send) and consent and do-not-call
(consent_service.py) in the fast tier: on the in-memory database (tests/memory), the messaging simulator served
in this process and the other services behind in-memory ports (tests/service/fakes.py). The compliance decision
(consent, the do-not-call list, quiet hours) logged with its text, the pending message on its thread, the
provider's acceptance or refusal with their events, and idempotency keys; the provider's status callbacks and inbound
texts (provider_service.py)."""
from datetime import UTC, datetime, timedelta

import pytest

from core.compliance import decision as compliance
from core.errors import ServiceError
from core.ids import new_id
from core.pagination import Page
from core.tenant import Tenant, acting_as
from services.messaging.compliance_service import Compliance
from services.messaging.consent_service import Consents
from services.messaging.ports import Lead, Sender
from services.messaging.provider_service import ProviderRequests
from services.messaging.repositories.unit import messaging_uow
from services.messaging.schema import compliance_decisions, conversations
from services.messaging.service import NewText, Texts
from tests.memory import MemoryDatabase
from tests.memory.messaging import MEMORY, MemoryCompliance, MemoryMessages
from tests.service.fakes import MessagingNeighbours
from tests.unit.conftest import MIDDAY

SENDER, CALLEE, PLATFORM_LISTED = "+14155550100", "+14155550123", "+14155550999"
NIGHT = datetime(2026, 11, 18, 7, 0, tzinfo=UTC)  # 23:00 in California


@pytest.fixture
def agent_id() -> str:
    return new_id()


@pytest.fixture
def lead(business_id) -> Lead:
    return Lead(new_id(), business_id, "CA", "new")


@pytest.fixture
def others(business_id, agent_id, lead) -> MessagingNeighbours:
    return MessagingNeighbours(senders={agent_id: Sender(business_id, SENDER)}, leads={(business_id, CALLEE): lead},
                               names={business_id: "Acme Plumbing"})


@pytest.fixture
def caller(business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "active"),),
                          api_key_id="fast")) as who:
        yield who


@pytest.fixture
def consents(database, caller, clock) -> Consents:
    return Consents(messaging_uow(database, MEMORY), frozenset({PLATFORM_LISTED}))


@pytest.fixture
def texts(database, sms, others, consents) -> Texts:
    uow = messaging_uow(database, MEMORY)
    rules = Compliance(uow, consents.platform_dnc, compliance.Policy())
    return Texts(uow, sms.client, rules, others.ports, "http://127.0.0.1:9")


def text(agent_id: str, to: str = CALLEE, body: str = "Your quote is ready.", **fields) -> NewText:
    return NewText(to=to, agent_id=agent_id, body=body, **fields)


async def logged(database: MemoryDatabase) -> list[dict]:
    async with database.read() as conn:
        return sorted(conn.rows(compliance_decisions).values(), key=lambda row: row["decided_at"])


async def test_a_consenting_callee_is_texted_on_a_thread_with_the_decision_logged(texts, consents, database, sms,
                                                                                  agent_id, lead, business_id):
    await consents.record(CALLEE, None, "opted_in", "signed the form")
    sent = await texts.send(text(agent_id))
    message = sent.message
    [taken] = sms.texts
    assert (sent.from_number, message.status, message.provider_sid, message.lead_id) == (
        SENDER, "queued", taken["sid"], lead.id)
    assert (taken["to"], taken["from"], taken["body"]) == (CALLEE, SENDER, "Your quote is ready.")
    assert taken["_status_callback"].endswith(f"?message_id={message.id}")
    [decision] = await logged(database)
    assert (decision["outcome"], decision["channel"], decision["reference"], decision["actor"]) == (
        "allow", "sms", message.id, "sms")
    assert [event["type"] for event in database.events] == ["sms.sent"]
    async with database.read() as conn:
        [thread] = conn.rows(conversations).values()
    assert (thread["id"], thread["outbound_count"], thread["last_message_id"], thread["lead_id"]) == (
        message.conversation_id, 1, message.id, lead.id)


async def test_a_repeated_idempotency_key_answers_the_first_text_and_sends_once(texts, consents, database, sms,
                                                                                agent_id):
    await consents.record(CALLEE, None, "opted_in", None)
    first = await texts.send(text(agent_id, idempotency_key="key-1"))
    again = await texts.send(text(agent_id, idempotency_key="key-1"))
    assert again.message == first.message and len(sms.texts) == 1 and len(await logged(database)) == 1
    with pytest.raises(ServiceError) as reused:
        await texts.send(text(agent_id, body="Another text", idempotency_key="key-1"))
    assert reused.value.code == "conflict" and len(sms.texts) == 1


async def test_no_consent_an_opt_out_or_a_listing_refuses_the_text_and_logs_why(texts, consents, database, sms,
                                                                                clock, agent_id):
    with pytest.raises(ServiceError) as unconsented:
        await texts.send(text(agent_id))
    await consents.record(CALLEE, None, "opted_in", None)
    await consents.add_dnc(CALLEE, None, "asked us to stop")
    with pytest.raises(ServiceError) as listed:
        await texts.send(text(agent_id))
    await consents.remove_dnc(CALLEE, None, "asked again")
    clock.now += timedelta(minutes=1)  # the opt-out comes after the opt-in
    await consents.record(CALLEE, None, "opted_out", None)
    with pytest.raises(ServiceError) as opted_out:
        await texts.send(text(agent_id))
    await consents.record(PLATFORM_LISTED, None, "opted_in", None)
    with pytest.raises(ServiceError) as platform:
        await texts.send(text(agent_id, to=PLATFORM_LISTED))
    codes = [err.value.code for err in (unconsented, listed, opted_out, platform)]
    assert codes == ["number_opted_out", "number_on_dnc", "number_opted_out", "number_on_dnc"]
    assert [(d["outcome"], d["code"]) for d in await logged(database)] == [("refuse", code) for code in codes]
    assert sms.texts == [] and database.events == []
    async with database.read() as conn:
        assert conn.rows(conversations) == {}


async def test_a_text_at_night_is_deferred_for_a_run_and_refused_for_a_caller(texts, consents, database, sms, clock,
                                                                             agent_id):
    await consents.record(CALLEE, None, "opted_in", None)
    clock.now = NIGHT
    deferred = await texts.place(text(agent_id, actor="run", reference="touch-1"))
    assert (deferred.outcome, deferred.actor, deferred.reference) == ("defer", "run", "touch-1")
    assert deferred.not_before > NIGHT
    with pytest.raises(ServiceError) as refused:
        await texts.send(text(agent_id))
    assert refused.value.code == deferred.code
    assert sms.texts == [] and [d["outcome"] for d in await logged(database)] == ["defer", "defer"]


async def test_a_provider_refusal_fails_the_message_with_its_event(texts, consents, database, sms, agent_id,
                                                                   business_id):
    await consents.record(CALLEE, None, "opted_in", None)
    await sms.fail_next(400)
    with pytest.raises(ServiceError) as failed:
        await texts.send(text(agent_id, idempotency_key="key-1"))
    assert failed.value.code == "sms_send_failed"
    assert [event["type"] for event in database.events] == ["sms.failed"]
    async with database.read() as conn:
        message = await MemoryMessages(conn).message_by_key(business_id, "key-1")
    assert message.status == "failed" and message.provider_sid is None
    async with database.read() as conn:  # a text never placed frees its slot in the ledger
        assert await MemoryCompliance(conn).recent_touches(business_id, CALLEE, MIDDAY - compliance.DAY) == []
    with pytest.raises(ServiceError) as replayed:  # a replay answers the refusal again (it claimed success: issue 55)
        await texts.send(text(agent_id, idempotency_key="key-1"))
    assert (replayed.value.code, replayed.value.message) == (failed.value.code, failed.value.message)
    assert sms.texts == [] and len(database.events) == 1


async def test_texts_are_counted_and_floridas_cap_counts_them(texts, consents, database, sms, clock, agent_id,
                                                              business_id):
    miami = "+13055550123"  # MIDDAY is 14:00 in Miami: inside Florida's 08:00-20:00
    await consents.record(miami, None, "opted_in", None)
    for minutes in range(3):
        clock.now = MIDDAY + timedelta(minutes=minutes)
        await texts.send(text(agent_id, to=miami))
    async with database.read() as conn:
        counted = await MemoryCompliance(conn).recent_touches(business_id, miami, MIDDAY - compliance.DAY)
    assert [t.channel for t in counted] == ["sms"] * 3
    clock.now = MIDDAY + timedelta(hours=1)
    with pytest.raises(ServiceError) as capped:
        await texts.send(text(agent_id, to=miami))
    assert capped.value.code == "tcpa_violation" and capped.value.message.startswith(
        f"frequency: 3 texts to {miami} in the last 24 hours; FL")
    assert len(sms.texts) == 3 and (await logged(database))[-1]["rule"] == "frequency"
    clock.now = MIDDAY + compliance.DAY  # a day after the first: one slot is free again
    assert (await texts.send(text(agent_id, to=miami))).message.to_number == miami


async def test_a_recipient_who_replied_stop_at_the_provider_is_opted_out_here_too(texts, consents, database, sms,
                                                                               clock, agent_id, business_id):
    """The provider refuses a text to someone who replied STOP to the sender there (21610) though our history says
    they opted in (the opt-in came through the API after the STOP): the text fails, their opt-out is recorded (source
    provider) and the answer is number_opted_out; the next send is refused by our own check, the provider never
    asked."""
    await consents.record(CALLEE, None, "opted_in", "web form")
    sms.stopped(SENDER, CALLEE)
    clock.now = MIDDAY + timedelta(minutes=1)
    with pytest.raises(ServiceError) as refused:
        await texts.send(text(agent_id, idempotency_key="key-1"))
    assert refused.value.code == "number_opted_out" and "replied STOP" in refused.value.message
    assert "START" in refused.value.message
    assert [event["type"] for event in database.events] == ["sms.failed"]
    async with database.read() as conn:
        message = await MemoryMessages(conn).message_by_key(business_id, "key-1")
    assert (message.status, message.error_code, message.provider_sid) == ("failed", "21610", None)
    with pytest.raises(ServiceError) as replayed:  # a replay answers the refusal again, sending nothing
        await texts.send(text(agent_id, idempotency_key="key-1"))
    assert (replayed.value.code, replayed.value.message) == (refused.value.code, refused.value.message)
    _, _, history = await consents.get(CALLEE, None)
    assert [(row.kind, row.source, row.reference) for row in history] == [
        ("opt_in", "api", None), ("opt_out", "provider", str(message.id))]
    with pytest.raises(ServiceError) as again:
        await texts.send(text(agent_id))
    assert again.value.code == "number_opted_out" and sms.texts == []
    assert [d["outcome"] for d in await logged(database)] == ["allow", "refuse"]


async def test_a_legal_refusal_comes_before_the_contents_and_the_contents_before_the_time(
        texts, consents, database, sms, clock, agent_id, business_id):
    blocked = text(agent_id, body="Cheap payday loans today")
    with pytest.raises(ServiceError) as unconsented:
        await texts.send(blocked)  # no consent and bad content: the consent is what no rewording fixes
    assert unconsented.value.code == "number_opted_out"
    await consents.record(CALLEE, business_id, "opted_in", "form")
    clock.now = NIGHT
    with pytest.raises(ServiceError) as content:
        await texts.send(blocked)  # at night and bad content: waiting would not help
    assert content.value.code == "content_blocked" and "payday" in content.value.message
    with pytest.raises(ServiceError) as night:
        await texts.send(text(agent_id))
    assert night.value.code == "tcpa_violation" and "quiet hours" in night.value.message
    # The legal refusal and the deferral are logged; the content refusal is not a compliance decision.
    assert sorted(d["outcome"] for d in await logged(database)) == ["defer", "refuse"] and sms.texts == []


async def test_bad_texts_and_senders_are_refused_before_anything_is_written(texts, others, database, sms, agent_id,
                                                                            business_id):
    for new, code in ((text(agent_id, to="not a phone"), "invalid_request"), (text(new_id()), "not_found")):
        with pytest.raises(ServiceError) as refused:
            await texts.send(new)
        assert refused.value.code == code
    others.senders[agent_id] = Sender(business_id, None)
    with pytest.raises(ServiceError) as numberless:
        await texts.send(text(agent_id))
    assert numberless.value.code == "not_found" and "assign it one" in numberless.value.message
    assert sms.texts == [] and await logged(database) == [] and database.events == []


async def test_consent_and_the_do_not_call_list_are_kept_per_business(consents, business_id):
    assert await consents.get(CALLEE, None) == (business_id, CALLEE, [])
    _, _, history = await consents.record(CALLEE, business_id, "opted_in", "form")
    _, _, history = await consents.record(CALLEE, None, "opted_out", None)
    assert [(e.kind, e.source, e.actor, e.note) for e in history] == [("opt_in", "api", "api_key:fast", "form"),
                                                                      ("opt_out", "api", "api_key:fast", None)]
    entry = await consents.add_dnc(CALLEE, None, "asked")
    assert (await consents.add_dnc(CALLEE, None, "again")).id == entry.id
    standing = await consents.check_dnc(CALLEE, None)
    assert standing.listed and standing.entry.reason == "asked" and not standing.platform
    assert (await consents.check_dnc(PLATFORM_LISTED, None)).listed
    assert [r.id for r in (await consents.list_dnc(None, Page(limit=10))).rows] == [entry.id]
    for bad in (lambda: consents.record(CALLEE, None, "maybe", None), lambda: consents.remove_dnc(CALLEE, None, ""),
                lambda: consents.get("junk", None)):
        with pytest.raises(ServiceError) as refused:
            await bad()
        assert refused.value.code == "invalid_request"
    removed = await consents.remove_dnc(CALLEE, None, "opted in again")
    assert (removed.removed_reason, removed.removed_by) == ("opted in again", "api_key:fast")
    assert not (await consents.check_dnc(CALLEE, None)).listed
    with pytest.raises(ServiceError) as gone:
        await consents.remove_dnc(CALLEE, None, "twice")
    assert gone.value.code == "not_found"
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))), pytest.raises(ServiceError) as other:
        await consents.get(CALLEE, business_id)
    assert other.value.code in ("forbidden", "not_found")


@pytest.fixture
def provider(database, others) -> ProviderRequests:
    return ProviderRequests(messaging_uow(database, MEMORY), others.ports, keywords_answered_by="ours")


async def test_status_callbacks_move_a_text_forward_once_with_their_events(texts, consents, provider, database,
                                                                            agent_id):
    await consents.record(CALLEE, None, "opted_in", None)
    message = (await texts.send(text(agent_id))).message
    delivered = {"message_id": message.id, "params": {"MessageSid": message.provider_sid,
                                                      "MessageStatus": "delivered"}}
    late = {"message_id": None, "params": {"MessageSid": message.provider_sid, "MessageStatus": "sent"}}
    await provider.apply_statuses([delivered, late])
    await provider.apply_statuses([delivered])
    async with database.read() as conn:
        assert (await MemoryMessages(conn).message_by_sid(message.provider_sid)).status == "delivered"
    assert [event["type"] for event in database.events] == ["sms.sent", "sms.delivered"]


async def test_an_inbound_text_lands_on_its_thread_as_consent_and_a_stop_is_confirmed_once(provider, consents,
                                                                                           database, business_id):
    said = {"From": CALLEE, "To": SENDER, "MessageSid": "SMin1", "Body": "Is Tuesday fine?"}
    assert "<Message>" not in await provider.inbound(said)
    assert "<Message>" not in await provider.inbound(said)  # the provider sent it again: taken once
    _, _, history = await consents.get(CALLEE, business_id)
    assert [(e.kind, e.source, e.reference) for e in history] == [("conversational", "inbound_text", "SMin1")]
    stop = {**said, "MessageSid": "SMin2", "Body": "STOP"}
    assert "Acme Plumbing" in await provider.inbound(stop)
    assert "<Message>" not in await provider.inbound({**stop, "MessageSid": "SMin3"})  # already opted out
    _, _, history = await consents.get(CALLEE, business_id)
    assert [e.kind for e in history] == ["conversational", "opt_out", "opt_out"]
    assert [event["type"] for event in database.events] == ["sms.received"] * 3
    async with database.read() as conn:
        [thread] = (await MemoryMessages(conn).conversations_page((business_id,), None, Page(limit=10))).rows
    assert (thread.contact_number, thread.inbound_count, thread.unread_count, thread.last_body) == (
        CALLEE, 3, 3, "STOP")
