"""A person's erasure from the webhook history (services.webhooks.erasure): the redaction rule over the payloads the
producers emit (core.events.to_data of each events.proto message carrying a customer's data), and the use case on
the in-memory database: the business's events and delivery texts naming the person redacted, counted once,
another business's untouched, and what a replay sends and the history lists afterwards. The SQL search and the
gRPC step run against the stack in tests/integration/test_webhooks_erasure.py."""
import json
from datetime import timedelta

import pytest

from core.events import Envelope, to_data
from core.ids import new_id, utcnow
from core.pagination import Page
from core.sealing import SecretBox
from core.settings import derive_sealing_key
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from services.webhooks import delivery_service
from services.webhooks.erasure import Erased, Erasure, Person, names, redact, redact_text
from services.webhooks.service import Webhooks
from switchboard.v1 import events_pb2
from tests.memory import MemoryDatabase
from tests.memory.webhooks import MemoryWebhooksUnit
from tests.unit.fakes import FakeSender

URL = "http://127.0.0.1:9/hooks"
BOX = SecretBox(derive_sealing_key("fast-tier-server-secret"))
PHONE, EMAIL, NAME = "+14155550142", "Ann.Lee_1@Example.com", "Ann Lee"
BUSINESS_NUMBER = "+14155550100"
LEAD, CALL, MESSAGE, OTHER_LEAD = new_id(), new_id(), new_id(), new_id()
PERSON = Person.of([PHONE], [EMAIL.lower()], [LEAD, CALL, MESSAGE])
# What says who she is: none of it may stay in a redacted event.
PERSONAL = (PHONE, "14155550142", EMAIL.lower(), NAME, "roof", "Hi, it's Ann", "555-0142", "hooks.example.com",
            "crm-ann")


def personal_events() -> dict[str, tuple[dict, dict]]:
    """type: (the data its producer emits naming her, the data once redacted)."""
    booking = dict(id="bk-1", starts_at="2026-03-09T09:00:00-04:00", ends_at="2026-03-09T09:30:00-04:00",
                   timezone="America/New_York", status="confirmed", name=NAME, phone_number=PHONE, email=EMAIL,
                   notes="roof leak, side door", lead_id=LEAD, call_id=CALL)
    call = dict(call_id=CALL, conversation_id="conv-9", agent_id="ag-1", direction="inbound", to=BUSINESS_NUMBER,
                lead_id=LEAD)
    cases = {
        "lead.created": (events_pb2.LeadCreated(id=LEAD, name=NAME, email=EMAIL, phone=PHONE, source="inbound_call"),
                         {"id": LEAD}),
        "lead.scored": (events_pb2.LeadScored(lead_id=LEAD, score=80, confidence="high",
                                              explanation=f"{NAME} asked for a roof quote",
                                              factors=["inbound call", "email known"]), {"lead_id": LEAD}),
        "call.received": (events_pb2.CallReceived(**{k: call[k] for k in ("call_id", "conversation_id", "agent_id",
                                                                           "to", "lead_id")}, **{"from": PHONE}),
                          {k: call[k] for k in ("call_id", "conversation_id", "agent_id", "lead_id")}),
        "call.started": (events_pb2.CallStarted(**call, **{"from": PHONE}, external_ref="crm-ann", touch_id="t-1"),
                         {k: call[k] for k in ("call_id", "conversation_id", "agent_id", "lead_id")} | {
                             "touch_id": "t-1"}),
        "call.completed": (events_pb2.CallCompleted(
            **call, **{"from": PHONE}, status="completed", duration=95,
            summary=f"{NAME} wants a roof quote; call her back on 555-0142", ended_reason="customer-ended-call",
            recording_url=f"https://recordings.example.com/{CALL}.wav", contact_name=NAME, contact_email=EMAIL,
            intent="roof quote", cost_cents=12, webhook_url=f"https://hooks.example.com/calls?caller={PHONE}"),
            {k: call[k] for k in ("call_id", "conversation_id", "agent_id", "lead_id")}),
        "call.failed": (events_pb2.CallFailed(call_id=CALL, conversation_id="conv-9", agent_id="ag-1",
                                              direction="outbound", status="no-answer", to=PHONE,
                                              **{"from": BUSINESS_NUMBER}, cost_cents=0),
                        {"call_id": CALL, "conversation_id": "conv-9", "agent_id": "ag-1"}),
        "voicemail.received": (events_pb2.VoicemailReceived(call_id=CALL, from_number=PHONE,
                                                            transcript="Hi, it's Ann about the roof",
                                                            recording_url="https://r.example.com/v.wav"),
                               {"call_id": CALL}),
        "sms.received": (events_pb2.SmsReceived(message_id=MESSAGE, conversation_id="cv-1", message_sid="SM1",
                                                **{"from": PHONE}, to=BUSINESS_NUMBER,
                                                body=f"Hi, it's Ann, write to {EMAIL}", agent_id="ag-1"),
                         {"message_id": MESSAGE, "conversation_id": "cv-1", "message_sid": "SM1", "agent_id": "ag-1"}),
        "sms.sent": (events_pb2.SmsSent(message_id=MESSAGE, conversation_id="cv-1", message_sid="SM2",
                                        agent_id="ag-1", to=PHONE, **{"from": BUSINESS_NUMBER}, lead_id=LEAD,
                                        external_ref="crm-ann", touch_id="t-2"),
                     {"message_id": MESSAGE, "conversation_id": "cv-1", "message_sid": "SM2", "agent_id": "ag-1",
                      "lead_id": LEAD, "touch_id": "t-2"}),
        "sms.delivered": (events_pb2.SmsDelivered(message_id=MESSAGE, conversation_id="cv-1", message_sid="SM2",
                                                  to=PHONE, **{"from": BUSINESS_NUMBER}),
                          {"message_id": MESSAGE, "conversation_id": "cv-1", "message_sid": "SM2"}),
        "sms.failed": (events_pb2.SmsFailed(message_id=MESSAGE, conversation_id="cv-1", to=PHONE,
                                            **{"from": BUSINESS_NUMBER}, status="undelivered", error_code="30003",
                                            error_message=f"Unreachable destination handset {PHONE}"),
                       {"message_id": MESSAGE, "conversation_id": "cv-1"}),
        "booking.created": (events_pb2.BookingCreated(**booking), {"id": "bk-1", "lead_id": LEAD, "call_id": CALL}),
        "booking.rescheduled": (events_pb2.BookingRescheduled(**booking, previous_starts_at="2026-03-08T09:00:00Z",
                                                              previous_ends_at="2026-03-08T09:30:00Z"),
                                {"id": "bk-1", "lead_id": LEAD, "call_id": CALL}),
        "booking.canceled": (events_pb2.BookingCanceled(**booking | {"status": "canceled"}),
                             {"id": "bk-1", "lead_id": LEAD, "call_id": CALL}),
        "communication.touch_completed": (events_pb2.CommunicationTouchCompleted(
            communication_run_id="run-1", job_id="job-1", external_ref="crm-ann", touch_id="t-3", channel="call",
            to=PHONE, outcome="completed", attempts=1, call_id=CALL),
            {"communication_run_id": "run-1", "job_id": "job-1", "touch_id": "t-3", "call_id": CALL}),
        "communication.touch_failed": (events_pb2.CommunicationTouchFailed(
            communication_run_id="run-1", job_id="job-1", external_ref="x", touch_id="t-4", channel="sms", to=PHONE,
            status="refused", code="number_opted_out", reason="opted out", attempts=0),
            {"communication_run_id": "run-1", "job_id": "job-1", "touch_id": "t-4"}),
        "communication.touch_deferred": (events_pb2.CommunicationTouchDeferred(
            communication_run_id="run-1", job_id="job-1", external_ref="x", touch_id="t-5", channel="call", to=PHONE,
            rule="state_hours", message="too late", not_before="2026-03-09T13:00:00Z"),
            {"communication_run_id": "run-1", "job_id": "job-1", "touch_id": "t-5"}),
    }
    return {kind: (to_data(payload), kept | {"redacted": True}) for kind, (payload, kept) in cases.items()}


def briefing() -> dict:
    return to_data(events_pb2.BriefingCreated(
        briefing_id="br-1", window_start="2026-03-09T08:00:00Z", calls_queued=2, escalated=2, email_id="em-1",
        needs_owner=[events_pb2.BriefingLead(lead_id=LEAD, name=NAME, reason="asked for the owner"),
                     events_pb2.BriefingLead(lead_id=OTHER_LEAD, name="Bo Park", reason="angry")]))


@pytest.mark.parametrize("kind", sorted(personal_events()))
def test_an_event_naming_the_person_keeps_only_the_platforms_ids(kind):
    data, expected = personal_events()[kind]
    assert names(data, PERSON.needles)
    redacted = redact(data, PERSON)
    assert redacted == expected
    assert not any(text.lower() in json.dumps(redacted).lower() for text in PERSONAL)
    assert redact(redacted, PERSON) == redacted  # again: unchanged, so not counted again


def test_an_event_is_found_by_any_of_its_ids_or_the_persons_number_or_email_in_any_form():
    by_phone_only = Person.of(["+1 (415) 555-0142"], [], [])  # any format: its digits are searched
    by_email_only = Person.of([], [EMAIL.lower()], [])
    by_call_only = Person.of([], [], [CALL])
    data = dict(personal_events())
    assert names(data["sms.received"][0], by_phone_only.needles)
    assert names({"webhook_url": "https://h.example.com/?to=%2B14155550142"}, by_phone_only.needles)
    assert names({"note": f"write to {EMAIL}"}, by_email_only.needles)  # in any case
    assert names({"url": "https://h.example.com/?e=ann.lee_1%40example.com"}, by_email_only.needles)  # URL-encoded
    assert names({"recording_url": f"https://r.example.com/{CALL}.wav"}, by_call_only.needles)
    assert redact(data["call.completed"][0], by_call_only) == data["call.completed"][1]


def test_an_event_about_someone_else_is_unchanged():
    someone = Person.of(["+14155550199"], ["bo@example.com"], [new_id()])
    for data, _ in personal_events().values():
        assert redact(data, someone) == data


def test_a_briefing_about_several_leads_loses_only_the_persons_entry():
    data = briefing()
    redacted = redact(data, PERSON)
    assert redacted["needs_owner"] == [{"lead_id": LEAD, "redacted": True},
                                       {"lead_id": OTHER_LEAD, "name": "Bo Park", "reason": "angry"}]
    assert {k: v for k, v in redacted.items() if k != "needs_owner"} == {
        k: v for k, v in data.items() if k != "needs_owner"}
    assert redact(redacted, PERSON) == redacted


def test_an_id_holding_the_persons_number_is_dropped_and_texts_lose_number_and_email():
    assert redact({"call_id": CALL, "conversation_id": f"conv-{PHONE}"}, PERSON) == {"call_id": CALL, "redacted": True}
    assert redact_text(f"could not connect to https://h.example.com/?p={PHONE}&e={EMAIL}", PERSON) == (
        "could not connect to https://h.example.com/?p=+[redacted]&e=[redacted]")
    assert redact_text(None, PERSON) is None
    assert Person.of([""], [" "], []).needles == []


# -- the use case, on the in-memory database ---------------------------------------------------------


@pytest.fixture
async def webhooks(business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))):
        yield Webhooks(UnitOfWork(MemoryDatabase(), MemoryWebhooksUnit), BOX, FakeSender(), allow_loopback=True,
                       lease=timedelta(seconds=2))


def stored(business_id: str) -> list[Envelope]:
    at = utcnow() - timedelta(hours=1)
    made = [Envelope(new_id(), kind, at + timedelta(seconds=n), business_id, data)
            for n, (kind, (data, _)) in enumerate(sorted(personal_events().items()))]
    return [*made, Envelope(new_id(), "dispatcher.briefing_created", at, business_id, briefing()),
            Envelope(new_id(), "lead.created", at, business_id, to_data(events_pb2.LeadCreated(
                id=OTHER_LEAD, name="Bo Park", phone="+14155550199", source="api")))]


async def test_the_businesss_events_and_delivery_texts_are_redacted_once_and_another_business_untouched(
        webhooks, business_id):
    saved = await webhooks.save(None, URL, ["sms.received", "call.completed", "lead.created"], None)
    other_business = new_id()
    mine, theirs = stored(business_id), stored(other_business)
    await delivery_service.fan_out(webhooks.uow, [*mine, *theirs], lease=timedelta(minutes=1))
    async with webhooks.uow.transaction() as work:  # a per-call delivery failed on a URL naming her
        [failing] = [d for d in (await work.deliveries.page([business_id], None, None, None, Page(limit=100))).rows
                     if d.target_url]
        await work.deliveries.record_attempts([
            {"delivery": failing.id, "attempt": 1, "status": "pending", "status_code": None, "latency_ms": 3,
             "error": f"could not connect: {failing.target_url}", "next_attempt_at": utcnow() + timedelta(hours=1)}],
            utcnow())
    erasure = Erasure(webhooks.uow, batch=4)  # several batches
    erased = await erasure.erase(business_id, PERSON, "er_1")
    assert (erased.events, erased.deliveries) == (len(personal_events()) + 1, 1)  # + the briefing's entry
    assert await erasure.erase(business_id, PERSON, "er_1") == Erased(0, 0)

    listed = {e.event_id: e for e in (await webhooks.list_events(None, None, None, Page(limit=100))).rows}
    for event in mine:
        text = json.dumps(listed[event.event_id].data)
        assert not any(p.lower() in text.lower() for p in PERSONAL), (event.type, text)
    assert listed[mine[-1].event_id].data == mine[-1].data  # Bo's lead
    async with webhooks.uow.read() as work:
        after = await work.deliveries.page([business_id], None, failing.event_id, None, Page(limit=10))
        [row] = [d for d in after.rows if d.id == failing.id]
        assert PHONE not in (row.target_url or "") and "[redacted]" in (row.last_error or "")
        untouched = await work.events.by_ids([e.event_id for e in theirs])
    assert {e.event_id: e.data for e in untouched.values()} == {e.event_id: e.data for e in theirs}

    sms = next(e for e in mine if e.type == "sms.received")
    webhooks.sender.sent.clear()
    [replayed] = await webhooks.replay(None, saved.row.id, [sms.event_id], None, None)
    async with webhooks.uow.transaction() as work:
        claimed = [d for d in await work.deliveries.claim_due(100, timedelta(minutes=1)) if d.id == replayed]
    await delivery_service.deliver(webhooks.uow, BOX, webhooks.sender, claimed)
    [(_, body, _)] = webhooks.sender.sent
    assert json.loads(body)["data"] == personal_events()["sms.received"][1]
