"""A person's erasure from the messaging service (ErasePerson, as the accounts service's privacy job asks it over
gRPC) against the running stack: their texts (sent through the API, received at the simulator with a photo) are
redacted at the provider and here, their thread, email and the owner's approval of their address, the outbox's
events, and the evidence logs keep their rows under the number's suppression hash; the hash on the business's
do-not-contact list then refuses a text and a call, as a STOP does after an erasure without suppression. The same
request again changes nothing; another business's text named in it is left alone; the evidence stays append-only
but for that one redaction; and no process but the accounts service may ask."""
import uuid

import aiohttp
import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_for
from services.messaging import schema
from services.messaging import store as messaging_store
from services.messaging.suppression import Suppression
from switchboard.v1 import common_pb2, messaging_pb2, messaging_pb2_grpc
from tests.tenants import as_business, signed
from tests.texting import number, opt_in, send, settled_message
from tests.waiting import wait_until

EMAIL = "dana.erased@example.com"


@pytest.fixture
async def messaging(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('messaging').port}") as channel:
        yield messaging_pb2_grpc.MessagingStub(channel)


@pytest.fixture
def suppression(cfg) -> Suppression:
    return Suppression(cfg.privacy_hash_key.reveal())


def by_the_privacy_job(stack, business_id: str) -> tuple:
    return signed(stack, acting_for(business_id, "privacy"), "accounts", to="messaging")


async def erase(messaging, stack, business_id: str, **fields) -> common_pb2.ErasureReport:
    request = common_pb2.ErasureRequest(business_id=business_id, erasure_id=fields.pop("erasure_id", "er_test"),
                                        suppress=fields.pop("suppress", True), **fields)
    return await messaging.ErasePerson(request, metadata=by_the_privacy_job(stack, business_id), timeout=30)


def counts(report: common_pb2.ErasureReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


async def decided_call(messaging, stack, account, phone: str) -> common_pb2.ComplianceDecision:
    return await messaging.DecideCall(messaging_pb2.DecideCallRequest(
        business_id=account["business_id"], phone=phone, actor="enforced_call"),
        metadata=as_business(stack, account, "messaging"))


async def rows(database, table: sa.Table, *where) -> list:
    async with database.read() as conn:
        return list((await conn.execute(sa.select(table).where(*where))).all())


async def another_business_text(database) -> str:
    """A text of a business of its own (no API: the message row alone): its id."""
    business_id, message_id, now = str(uuid.uuid4()), new_id(), utcnow()
    async with database.transaction() as conn:
        await messaging_store.add_to_thread(conn, business_number="+14155550188", contact_number="+14155550189",
                                            id=message_id, business_id=business_id, direction="inbound",
                                            from_number="+14155550189", to_number="+14155550188", body="Not yours",
                                            status="received", created_at=now, updated_at=now)
    return message_id


async def test_an_erased_person_is_gone_from_texts_provider_and_logs_and_never_texted_or_called_again(
        api, stack, account, calling_agent, sms, messaging, database, suppression):
    key, business_id, ours = account["key"], account["business_id"], calling_agent["phone_number"]
    person = number("0561")
    await opt_in(api, key, person)
    status, sent, _ = await send(api, key, calling_agent, person, "Your quote is 420 dollars, Dana.")
    assert status == 200, sent
    await settled_message(api, key, sent["message_sid"])
    _, received = await sms.control("POST", "/inbound", {"from": person, "to": ours, "body": "Here is my gate code",
                                                         "media": ["image/jpeg"]})
    assert received["status"] == 200, received
    async with database.transaction() as conn:
        await messaging_store.queue_email(conn, id=new_id(), business_id=business_id, kind="api", to_address=EMAIL,
                                          subject="Your quote, Dana", body="420 dollars",
                                          status="pending_approval", created_at=utcnow(), updated_at=utcnow())
        await messaging_store.approve_recipient(conn, business_id, EMAIL, "owner", utcnow())
    theirs = await wait_until(lambda: rows(database, schema.messages, schema.messages.c.business_id == business_id),
                              "their two texts", lambda found: len(found) == 2)
    elsewhere = await another_business_text(database)

    report = await erase(messaging, stack, business_id, phones=[person], emails=[EMAIL.upper()],
                         message_ids=[elsewhere, "not-an-id"])

    assert sorted(report.message_ids) == sorted(str(m.id) for m in theirs)
    found = counts(report)
    assert found[("provider.message", "redacted")] == 2 and found[("messaging.message_body", "redacted")] == 2
    assert found[("messaging.conversation", "redacted")] == 1 and found[("messaging.email", "redacted")] == 1
    assert found[("messaging.approved_recipient", "deleted")] == 1 and found[("messaging.dnc", "suppressed")] == 1
    assert found[("messaging.consent_events", "redacted")] >= 2  # the opt-in, the text they sent
    assert found[("messaging.compliance_decisions", "redacted")] == 1 and found[("messaging.outbox", "redacted")] >= 2
    # Here: no body, no number (the business's own stays), the status and the provider's sid kept for billing.
    hashed, marker = suppression.hash(person), "erased:er_test"
    for text in await rows(database, schema.messages, schema.messages.c.business_id == business_id):
        assert text.body == "" and person not in (text.from_number, text.to_number) and marker in (
            text.from_number, text.to_number) and ours in (text.from_number, text.to_number)
        assert text.status in ("delivered", "received") and text.provider_sid
    [thread] = await rows(database, schema.conversations, schema.conversations.c.business_id == business_id)
    assert thread.contact_number == f"{marker}/{thread.id}"
    [email] = await rows(database, schema.emails, schema.emails.c.business_id == business_id)
    assert (email.to_address, email.subject, email.body, email.status) == (marker, "", "", "failed")
    assert await rows(database, schema.approved_recipients, schema.approved_recipients.c.business_id == business_id) \
        == []
    for event in await rows(database, schema.outbox, schema.outbox.c.business_id == business_id):
        assert person not in str(event.data) and "gate code" not in str(event.data)
    # The evidence keeps its rows, under the hash.
    consent = await rows(database, schema.consent_events, schema.consent_events.c.business_id == business_id)
    decisions = await rows(database, schema.compliance_decisions,
                           schema.compliance_decisions.c.business_id == business_id)
    assert consent and decisions and {r.phone for r in consent} == {r.phone for r in decisions} == {hashed}
    assert all(person not in d.message for d in decisions) and all(r.note is None for r in consent)
    # At the provider: the bodies gone, the photo deleted.
    for text in theirs:
        assert (await provider_message(stack, text.provider_sid))["body"] == ""
        assert (await provider_media(stack, text.provider_sid))["media_list"] == []
    # The same request again: nothing found, nothing changed, nothing listed twice.
    again = await erase(messaging, stack, business_id, phones=[person], emails=[EMAIL], message_ids=[elsewhere])
    assert not again.message_ids and all(n == 0 for n in counts(again).values())
    listed = await rows(database, schema.dnc_entries, schema.dnc_entries.c.business_id == business_id)
    assert [(e.phone, e.removed_at) for e in listed] == [(hashed, None)]
    # Never texted or called again: the hash on the list refuses both, logged under the hash (their number is not
    # written back into the log).
    status, refused, _ = await send(api, key, calling_agent, person, "Still there?")
    assert status == 400 and refused["error"]["code"] == "number_on_dnc", refused
    call = await decided_call(messaging, stack, account, person)
    assert (call.outcome, call.code, call.rule, call.phone) == ("refuse", "number_on_dnc", "business_dnc", hashed)
    assert person not in call.message
    logged = await rows(database, schema.compliance_decisions, schema.compliance_decisions.c.business_id == business_id)
    assert len(logged) == 3 and {d.phone for d in logged} == {hashed}
    [untouched] = await rows(database, schema.messages, schema.messages.c.id == elsewhere)
    assert untouched.body == "Not yours" and untouched.from_number == "+14155550189"


async def test_a_stop_outlives_an_erasure_without_suppression(api, stack, account, calling_agent, sms, messaging,
                                                              database, suppression):
    key, business_id = account["key"], account["business_id"]
    person = number("0562")
    await opt_in(api, key, person)
    stop = await sms.answered(person, calling_agent["phone_number"], "STOP")
    assert stop["auto_reply"], stop
    report = await erase(messaging, stack, business_id, phones=[person], suppress=False)
    assert counts(report)[("messaging.dnc", "suppressed")] == 0
    assert await rows(database, schema.dnc_entries, schema.dnc_entries.c.business_id == business_id) == []
    call = await decided_call(messaging, stack, account, person)
    assert (call.outcome, call.code, call.rule) == ("refuse", "number_opted_out", "opted_out")
    status, refused, _ = await send(api, key, calling_agent, person, "Still there?")  # refused here, not at Twilio
    assert status == 400 and refused["error"]["code"] in ("number_opted_out", "number_on_dnc"), refused
    [decision] = await rows(database, schema.compliance_decisions,
                            schema.compliance_decisions.c.business_id == business_id,
                            schema.compliance_decisions.c.channel == "sms")
    assert decision.outcome == "refuse" and decision.rule in ("opted_out", "lead_do_not_contact")
    assert decision.phone == call.phone == suppression.hash(person)
    # The evidence's one redaction is done; any other change of it is refused, as before.
    async with database.engine.connect() as conn:
        for change in (f"UPDATE messaging.consent_events SET kind = 'opt_in' WHERE phone = '{suppression.hash(person)}'",
                       f"DELETE FROM messaging.consent_events WHERE phone = '{suppression.hash(person)}'",
                       f"UPDATE messaging.consent_events SET phone = '{person}' WHERE phone = "
                       f"'{suppression.hash(person)}'"):
            with pytest.raises(Exception, match="append-only"):
                async with conn.begin():
                    await conn.execute(sa.text(change))


async def test_only_the_accounts_service_may_erase(stack, account, messaging):
    request = common_pb2.ErasureRequest(business_id=account["business_id"], erasure_id="er_x", phones=["+14155550190"])
    for process in ("gateway", "calls"):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await messaging.ErasePerson(request, metadata=signed(
                stack, Tenant(account_id="x", business_ids=(account["business_id"],)), process, to="messaging"),
                timeout=30)
        assert from_rpc_error(refused.value).code in ("unauthorized", "forbidden")


async def provider_message(stack, sid: str) -> dict:
    return await _provider_get(stack, f"/Messages/{sid}.json")


async def provider_media(stack, sid: str) -> dict:
    return await _provider_get(stack, f"/Messages/{sid}/Media.json")


async def _provider_get(stack, path: str) -> dict:
    """GET an API path of the account at the messaging simulator, as the provider shows it."""
    env = stack.env()
    account = env["SMS_ACCOUNT_SID"]
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{env['SMS_API_URL']}/2010-04-01/Accounts/{account}{path}", headers={
                "Authorization": aiohttp.encode_basic_auth(account, env["SMS_AUTH_TOKEN"])}) as r:
            assert r.status == 200, await r.text()
            return await r.json()
