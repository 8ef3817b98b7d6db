"""A person's erasure from the webhook history on the running stack (services.webhooks.erasure): the webhooks
service's ErasePerson called over gRPC as the accounts service's privacy job calls it (no other process may), on
events that came the producers' way (a lead made through the API: lead.created and lead.scored through sdr's outbox,
NATS and the dispatcher) and events kept through the repository as the dispatcher keeps them (a text with its body, a
call with its summary, a booking). Afterwards GET /api/v1/events shows them redacted, a replay sends the redacted
data, a second erasure finds nothing more, and another business's events naming the same person are untouched."""
import json
import uuid
from datetime import timedelta

import grpc
import pytest

from core import db, registry
from core.events import Envelope, to_data
from core.ids import new_id, utcnow
from core.tenant import Tenant
from core.uow import Database, UnitOfWork
from services.webhooks.repository import WebhooksUnit
from switchboard.v1 import common_pb2, events_pb2, webhooks_pb2_grpc
from tests.leads import new_lead
from tests.receiver import Receiver
from tests.tenants import signed
from tests.waiting import wait_until

PHONE, EMAIL, NAME = "+14155550177", "erin.vale@example.com", "Erin Vale"
PERSONAL = (PHONE[1:], EMAIL, NAME, "gutter", "Hi it's Erin")


@pytest.fixture
async def webhooks(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('webhooks').port}") as channel:
        yield webhooks_pb2_grpc.WebhooksStub(channel)


@pytest.fixture
async def history(stack):
    """The webhooks service's unit of work on the stack's database (events kept as the dispatcher keeps them)."""
    engine = db.create_engine(stack.database_url, pool_size=2, application_name="erasure-tests")
    yield UnitOfWork(Database(engine), WebhooksUnit)
    await engine.dispose()


def seeded(business_id: str, lead_id: str, call_id: str, message_id: str) -> list[Envelope]:
    at = utcnow() - timedelta(minutes=5)
    payloads = [
        events_pb2.SmsReceived(message_id=message_id, conversation_id=new_id(), message_sid="SM" + uuid.uuid4().hex,
                               **{"from": PHONE}, to="+14155550100", body="Hi it's Erin, the gutter again",
                               lead_id=lead_id),
        events_pb2.CallCompleted(call_id=call_id, conversation_id="conv-" + call_id, agent_id=new_id(),
                                 direction="inbound", status="completed", to="+14155550100", **{"from": PHONE},
                                 duration=61, summary=f"{NAME} wants the gutter fixed", contact_name=NAME,
                                 contact_email=EMAIL),
        events_pb2.BookingCreated(id=new_id(), starts_at="2026-03-09T09:00:00-04:00",
                                  ends_at="2026-03-09T09:30:00-04:00", timezone="America/New_York",
                                  status="confirmed", name=NAME, phone_number=PHONE, email=EMAIL, notes="gutter")]
    return [Envelope(new_id(), kind, at + timedelta(seconds=n), business_id, to_data(payload))
            for n, (kind, payload) in enumerate(zip(("sms.received", "call.completed", "booking.created"), payloads,
                                                    strict=True))]


def erasure(business_id: str, **ids) -> common_pb2.ErasureRequest:
    return common_pb2.ErasureRequest(business_id=business_id, erasure_id="er_" + uuid.uuid4().hex, phones=[PHONE],
                                     emails=[EMAIL], suppress=True, **ids)


def counts(report: common_pb2.ErasureReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


def naming(data: dict) -> list[str]:
    text = json.dumps(data).lower()
    return [p for p in PERSONAL if p.lower() in text]


async def test_a_person_is_erased_from_the_history_of_their_business_only(api, account, stack, webhooks, history):
    business_id, key = account["business_id"], account["key"]
    receiver = await Receiver().start()
    try:
        status, sub, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
            "webhook_url": receiver.url, "events": ["lead.created", "sms.received"]})
        assert status == 201, sub
        lead = await new_lead(api, key, business_id, name=NAME, phone=PHONE, email=EMAIL)
        await receiver.wait_for(1, "lead.created")  # through sdr's outbox, NATS and the dispatcher
        call_id, message_id = new_id(), new_id()
        mine = seeded(business_id, lead["id"], call_id, message_id)
        other_business = str(uuid.uuid4())
        theirs = seeded(other_business, lead["id"], call_id, message_id)
        async with history.transaction() as work:
            await work.events.keep(mine + theirs)

        async def listed() -> dict[str, dict]:
            status, page, _ = await api.request("GET", "/api/v1/events", key=key, params={"limit": 100})
            assert status == 200, page
            return {e["event_id"]: e for e in page["events"]}

        before = await wait_until(listed, "the lead's events in the history",
                                  lambda events: {"lead.created", "lead.scored"} <= {e["type"] for e in events.values()})
        assert all(naming(before[e.event_id]["data"]) for e in mine)

        request = erasure(business_id, lead_ids=[lead["id"]], call_ids=[call_id], message_ids=[message_id])
        with pytest.raises(grpc.aio.AioRpcError) as refused:  # the accounts service's privacy job alone may ask
            await webhooks.ErasePerson(request, metadata=signed(stack, Tenant(), registry.GATEWAY, to="webhooks"))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "may not call ErasePerson" in (refused.value.details() or "")
        as_accounts = signed(stack, Tenant(), "accounts", to="webhooks")
        report = await webhooks.ErasePerson(request, metadata=as_accounts)
        again = await webhooks.ErasePerson(request, metadata=as_accounts)
        assert counts(again) == {("webhooks.event", "redacted"): 0, ("webhooks.delivery", "redacted"): 0}
        after = await listed()
        lead_events = [e for e in before.values() if e["data"].get("id") == lead["id"]
                       or e["data"].get("lead_id") == lead["id"]]
        redacted = {key for key, e in after.items() if e["data"].get("redacted")}
        assert {e.event_id for e in mine} | {e["event_id"] for e in lead_events} <= redacted
        assert counts(report) == {("webhooks.event", "redacted"): len(redacted), ("webhooks.delivery", "redacted"): 0}
        for event in [*mine, *lead_events]:
            event_id = event.event_id if isinstance(event, Envelope) else event["event_id"]
            data = after[event_id]["data"]
            assert data["redacted"] is True and not naming(data), (after[event_id]["type"], data)
        assert after[mine[1].event_id]["data"] == {
            "call_id": call_id, "conversation_id": "conv-" + call_id, "agent_id": mine[1].data["agent_id"],
            "redacted": True}
        async with history.read() as work:
            kept = await work.events.by_ids([e.event_id for e in theirs])
        assert {e.event_id: e.data for e in kept.values()} == {e.event_id: e.data for e in theirs}

        sms, created = mine[0], next(e for e in lead_events if e["type"] == "lead.created")
        status, replayed, _ = await api.request("POST", "/api/v1/events/replay", key=key, json={
            "webhook_id": sub["webhook"]["id"], "event_ids": [sms.event_id, created["event_id"]]})
        assert status == 200 and replayed["queued"] == 2, replayed
        await wait_until(lambda: receiver.requests, "the replays",
                         lambda requests: len([r for r in requests if r["accepted"]]) >= 3, timeout=20)
        sent = {r["json"]["event_id"]: r["json"]["data"] for r in receiver.requests}  # the last of each
        assert sent[sms.event_id] == {"message_id": message_id, "conversation_id": sms.data["conversation_id"],
                                      "message_sid": sms.data["message_sid"], "lead_id": lead["id"],
                                      "redacted": True}
        assert sent[created["event_id"]] == {"id": lead["id"], "redacted": True}
    finally:
        await receiver.stop()
