"""Texts sent for a caller that keeps its own schedule (a communication run), over gRPC as the sdr service sends
them: idempotent sends (replayed, racing, and replayed while the first is still at the provider), PlaceSms's
deferral as data, the run's reference and touch id on the sms.* events, and GetStandings, the facts a run
previews its plan with."""
import asyncio
import uuid
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import grpc
import pytest

from core.compliance import decision as compliance
from core.compliance.rules import CALL
from core.grpc_errors import from_rpc_error
from core.tenant import Tenant
from switchboard.v1 import messaging_pb2, messaging_pb2_grpc
from tests.compliance import callee, decisions
from tests.tenants import as_business, signed
from tests.texting import events_of, number, opt_in, settled_message, texts_to
from tests.waiting import wait_until

# One zone for (nearly) every whole-hour offset: at any moment it is between 02:00 and 05:59 in one of them.
ZONES = ("Pacific/Honolulu", "America/Anchorage", "America/Los_Angeles", "America/Denver", "America/Chicago",
         "America/New_York", "America/Sao_Paulo", "Atlantic/Azores", "Europe/London", "Europe/Berlin",
         "Europe/Athens", "Asia/Dubai", "Asia/Karachi", "Asia/Dhaka", "Asia/Bangkok", "Asia/Shanghai", "Asia/Tokyo",
         "Australia/Sydney", "Pacific/Auckland")


def night_zone() -> str:
    """A zone where it is the middle of the night now (texting closed, and open again within hours)."""
    now = datetime.now(UTC)
    for name in ZONES:
        if 2 <= now.astimezone(ZoneInfo(name)).hour <= 5:
            return name
    pytest.fail("no zone is at night")


@pytest.fixture
async def messaging(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('messaging').port}") as channel:
        yield messaging_pb2_grpc.MessagingStub(channel)


def touch(agent: dict, to: str, **fields) -> messaging_pb2.SendSmsRequest:
    return messaging_pb2.SendSmsRequest(to=to, from_agent_id=agent["id"],
                                        **{"actor": "run", "message": "Your quote is ready.", **fields})


async def test_a_repeated_key_answers_with_the_first_text_and_sends_nothing_more(
        api, stack, account, messaging, calling_agent):
    key, to, md = account["key"], number("0170"), as_business(stack, account, "messaging")
    await opt_in(api, key, to)
    request = touch(calling_agent, to, idempotency_key=f"run-1:{to}", reference="touch-1", external_ref="run-1",
                    touch_id="touch-1")
    racing = await asyncio.gather(*(messaging.PlaceSms(request, metadata=md) for _ in range(3)))
    assert {r.WhichOneof("outcome") for r in racing} == {"sent"}
    assert len({r.sent.message_id for r in racing}) == 1
    # The winner answers once the provider took the text; the others with the message as they found it.
    first = next(r.sent for r in racing if r.sent.message_sid)
    assert first.success and first.to == to and first.message_sid.startswith("SM")
    again = await messaging.SendSms(request, metadata=md)
    assert (again.message_id, again.message_sid, again.conversation_id) == (
        first.message_id, first.message_sid, first.conversation_id)
    assert [t["sid"] for t in await texts_to(stack, to)] == [first.message_sid]
    [logged] = await decisions(api, key, phone=to)  # one decision, with the caller's actor and reference
    assert (logged["outcome"], logged["actor"], logged["reference"]) == ("allow", "run", "touch-1")
    # The run's reference and touch on every event of the text.
    [sent] = await events_of(api, key, "sms.sent", first.message_id)
    assert (sent["data"]["external_ref"], sent["data"]["touch_id"]) == ("run-1", "touch-1")
    await settled_message(api, key, first.message_sid)
    [delivered] = await events_of(api, key, "sms.delivered", first.message_id)
    assert (delivered["data"]["external_ref"], delivered["data"]["touch_id"]) == ("run-1", "touch-1")
    # The same key for another text is a conflict, not the first message.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await messaging.PlaceSms(touch(calling_agent, to, idempotency_key=request.idempotency_key,
                                       message="Another text"), metadata=md)
    error = from_rpc_error(refused.value)
    assert error.code == "conflict" and "another text" in error.message
    # A new key is a new text; keys are the business's own.
    other = await messaging.SendSms(touch(calling_agent, to, idempotency_key=f"run-2:{to}"), metadata=md)
    assert other.message_id != first.message_id
    assert len(await texts_to(stack, to)) == 2


async def test_a_replay_while_the_first_send_is_at_the_provider_answers_pending(
        api, stack, account, messaging, sms, db, calling_agent):
    key, to, md = account["key"], number("0171"), as_business(stack, account, "messaging")
    await opt_in(api, key, to)
    request = touch(calling_agent, to, idempotency_key=f"slow:{to}")
    status, _ = await sms.control("POST", "/faults", {"method": "POST", "path": "/2010-04-01/Accounts/", "status": 0,
                                                      "delay_seconds": 1.5, "times": 1})
    assert status == 201
    first = asyncio.ensure_future(messaging.PlaceSms(request, metadata=md))

    async def first_send() -> str | None:
        return await db.fetchval("SELECT status FROM messaging.messages WHERE business_id = $1 AND "
                                 "idempotency_key = $2", account["business_id"], request.idempotency_key)
    recorded = await wait_until(first_send, "the first send to be recorded", lambda status: status is not None,
                                timeout=2, interval=0.02)
    assert recorded == "pending"
    replay = (await messaging.PlaceSms(request, metadata=md)).sent
    assert (replay.success, replay.status, replay.message_sid) == (True, "pending", "")
    placed = (await first).sent
    assert placed.message_id == replay.message_id and placed.message_sid.startswith("SM")
    assert len(await texts_to(stack, to)) == 1 and len(await decisions(api, key, phone=to)) == 1


async def test_place_sms_returns_a_deferral_as_data_and_logs_it_once(api, stack, account, messaging,
                                                                    calling_agent):
    key, md, zone = account["key"], as_business(stack, account, "messaging"), night_zone()
    to = number("0172")  # open where its number places it; the caller says it is somewhere at night
    await opt_in(api, key, to)
    request = touch(calling_agent, to, callee_timezone=zone, reference="touch-night", idempotency_key=f"n:{to}")
    placed = await messaging.PlaceSms(request, metadata=md)
    assert placed.WhichOneof("outcome") == "deferred"
    deferred = placed.deferred
    assert (deferred.outcome, deferred.code, deferred.channel) == ("defer", "tcpa_violation", "sms")
    assert deferred.rule in ("federal_hours", "state_hours") and zone in deferred.message
    assert (deferred.actor, deferred.reference) == ("run", "touch-night")
    assert deferred.not_before.ToDatetime(UTC) > datetime.now(UTC)
    assert {"zone": zone, "why": "stated"}.items() <= dict(deferred.inputs["zones"][0]).items()
    [logged] = await decisions(api, key, phone=to)
    assert logged["id"] == deferred.id and logged["outcome"] == "defer"
    assert await texts_to(stack, to) == []
    # SendSms refuses the same text; a deferral claims no key, so it is decided again.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await messaging.SendSms(request, metadata=md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert from_rpc_error(err.value).code == "tcpa_violation"
    assert len(await decisions(api, key, phone=to)) == 2
    # Refusals stay errors; a bad zone or actor is a 400 before anything is decided.
    cold = number("0173")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await messaging.PlaceSms(touch(calling_agent, cold), metadata=md)
    assert from_rpc_error(err.value).code == "number_opted_out"
    for bad, named in (({"callee_timezone": "Mars/Olympus_Mons"}, "callee_timezone"), ({"actor": "robot"}, "actor")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await messaging.PlaceSms(touch(calling_agent, to, **bad), metadata=md)
        assert from_rpc_error(err.value).code == "invalid_request" and named in err.value.details()


async def test_standings_say_what_the_decision_would_read_for_each_callee(api, stack, account, messaging):
    key, md, business_id = account["key"], as_business(stack, account, "messaging"), account["business_id"]
    listed, opted_out, clean, opted_in = callee(), callee(), callee(), callee()
    status, _, _ = await api.request("POST", "/api/v1/dnc", key=key, json={"phone": listed, "reason": "asked"})
    assert status == 201
    status, _, _ = await api.request("POST", "/api/v1/sms/consent", key=key,
                                     json={"phone": opted_out, "state": "opted_out"})
    assert status == 201
    await opt_in(api, key, opted_in)
    slot = await messaging.DecideCall(messaging_pb2.DecideCallRequest(business_id=business_id, phone=opted_in,
                                                                      actor="run"), metadata=md)
    assert slot.outcome == "allow"  # it took a slot of the frequency cap
    before = len(await decisions(api, key))
    platform = "+14155550166"  # the stack's PLATFORM_DNC
    reply = await messaging.GetStandings(messaging_pb2.GetStandingsRequest(
        business_id=business_id, phones=[listed, opted_out, clean, opted_in, platform, listed]), metadata=md)
    by_phone = {s.phone: s for s in reply.standings}
    assert [s.phone for s in reply.standings] == [listed, opted_out, clean, opted_in, platform]
    assert by_phone[listed].HasField("business_dnc_since") and not by_phone[listed].platform_dnc
    assert (by_phone[opted_out].consent, by_phone[clean].consent, by_phone[opted_in].consent) == (
        "opted_out", "none", "opted_in")
    assert not any(by_phone[p].HasField("business_dnc_since") for p in (opted_out, clean, opted_in, platform))
    assert by_phone[platform].platform_dnc
    [call] = by_phone[opted_in].recent_touches
    assert (call.channel, call.at.ToDatetime(UTC)) == ("call", slot.decided_at.ToDatetime(UTC))
    assert all(not by_phone[p].recent_touches for p in (listed, opted_out, clean, platform))
    assert len(await decisions(api, key)) == before  # nothing logged
    # A preview with the pure decision reads them as DecideCall would.
    found = by_phone[listed]
    standing = compliance.Standing(platform_dnc=found.platform_dnc, consent=found.consent,
                                   business_dnc_since=found.business_dnc_since.ToDatetime(UTC))
    preview = compliance.decide(compliance.Touch(CALL, datetime.now(UTC)), compliance.Callee(listed),
                                standing)
    assert (preview.outcome, preview.code) == ("refuse", "number_on_dnc")


async def test_standings_refuse_bad_phones_too_many_phones_and_other_businesses(account, messaging, stack):
    md, business_id = as_business(stack, account, "messaging"), account["business_id"]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await messaging.GetStandings(messaging_pb2.GetStandingsRequest(
            business_id=business_id, phones=[callee(), "+1 415 555 0100"]), metadata=md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert from_rpc_error(err.value).code == "invalid_request" and "phones[1]" in err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await messaging.GetStandings(messaging_pb2.GetStandingsRequest(
            business_id=business_id, phones=["+14155550100"] * 10_001), metadata=md)
    assert from_rpc_error(err.value).code == "invalid_request" and "10000" in err.value.details()
    stranger = signed(stack, Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),)), "calls", to="messaging")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await messaging.GetStandings(messaging_pb2.GetStandingsRequest(business_id=business_id,
                                                                       phones=[callee()]), metadata=stranger)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and from_rpc_error(err.value).code == "not_found"
    empty = await messaging.GetStandings(messaging_pb2.GetStandingsRequest(business_id=business_id), metadata=md)
    assert list(empty.standings) == []
