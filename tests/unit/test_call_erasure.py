"""A person's erasure from the calls service (services/calls/erasure.py, issue 56) in the fast tier: its redaction
rules as plain functions, the use case on the in-memory database with the voice simulator served in this process
(the provider's copy deleted first, then our row; again: nothing more), the writers that must not bring personal
data back, and the simulator's DELETE /call/{id} as Vapi documents it."""
import asyncio
from datetime import UTC, datetime

import aiohttp
import pytest

from core.errors import ServiceError
from core.ids import new_id
from core.tenant import Tenant, acting_as
from providers.voice.port import CallRef, CallReport, ProviderError, StatusUpdate, ToolCall, ToolCallsRequest
from services.calls import erasure
from services.calls.erasure import ERASED_NUMBER, ERASED_TEXT, Erasure
from services.calls.lifecycle_service import Lifecycle, changes_of, events_of
from services.calls.ports import CallingProfile
from services.calls.repository import calls_units
from services.calls.service import ERASED_RECORDING, Calls, NewCall
from services.calls.tools_service import NOT_THIS_CALL, ToolCalls
from switchboard.v1 import common_pb2
from tests.memory.calls import MemoryCalls
from tests.service.fakes import CallsNeighbours

BASE_URL = "https://switchboard.example.com"
CALLEE, OTHER_CALLEE = "+14155550123", "+14155550124"

OTHER_BUSINESS_NUMBER = "+14155550140"


def row(**fields) -> dict:
    """A call as the repositories hand it to the rules (its columns)."""
    base = {"id": new_id(), "direction": "outbound", "to_number": CALLEE, "from_number": "+14155550100",
            "forwarded_to": None, "variables": {"name": "Sam", "business_name": "Acme", "lead_score": 10},
            "transcript": "AI: Hello Sam", "erased_at": None}
    return {**base, **fields}


# -- the rules -----------------------------------------------------------------------------------------------------

def test_an_outbound_call_loses_what_was_said_and_its_callee_and_keeps_what_billing_needs():
    changes = erasure.redaction(row(), [CALLEE])
    assert {c: changes[c] for c in erasure.PERSONAL_COLUMNS} == dict.fromkeys(erasure.PERSONAL_COLUMNS)
    assert changes["to_number"] == ERASED_NUMBER and "from_number" not in changes  # the business's own number
    assert changes["variables"] == {"business_name": "Acme", "lead_score": 10}
    assert changes["erased_at"] is not None
    assert not {"status", "duration", "cost_cents", "started_at", "ended_at", "created_at", "lead_id",
                "provider_call_id", "recording_consent"} & set(changes)


def test_an_inbound_call_loses_its_caller_and_a_forward_to_phone_that_is_the_persons():
    changes = erasure.redaction(row(direction="inbound", to_number="+14155550100", from_number=CALLEE,
                                    forwarded_to=OTHER_CALLEE), [CALLEE, OTHER_CALLEE])
    assert (changes["from_number"], changes["forwarded_to"]) == (ERASED_NUMBER, ERASED_NUMBER)
    assert "to_number" not in changes
    withheld = erasure.redaction(row(direction="inbound", to_number="+14155550100", from_number=None), [CALLEE])
    assert "from_number" not in withheld and "to_number" not in withheld


def test_a_writer_changes_an_erased_call_but_nothing_personal():
    changes = {"status": "completed", "cost_cents": 12, "transcript": "AI: Hi Sam", "summary": "Sam called",
               "recording_url": "https://r/1.wav", "structured_data": {"name": "Sam"}, "to_number": CALLEE,
               "forwarded_to": "+14155550100"}
    assert erasure.without_personal(row(), changes) == changes
    assert erasure.without_personal(row(erased_at=datetime.now(UTC)), changes) == {
        "status": "completed", "cost_cents": 12, "forwarded_to": "+14155550100"}  # the business's own phone


def test_an_erased_calls_events_name_no_one():
    erased = row(to_number=ERASED_NUMBER, erased_at=datetime.now(UTC))
    shown = erasure.for_events(erased)
    assert (shown["to_number"], shown["from_number"]) == ("", "+14155550100")
    inbound = erasure.for_events(row(direction="inbound", from_number=ERASED_NUMBER, erased_at=datetime.now(UTC)))
    assert inbound["from_number"] is None
    plain = row()
    assert erasure.for_events(plain) is plain


def test_an_events_personal_fields_become_null_and_the_rest_stays():
    data = {"call_id": "c", "agent_id": "a", "to": CALLEE, "from": None, "summary": "Sam called", "duration": 30,
            "contact_email": "sam@example.com", "cost_cents": 12}
    assert erasure.redacted_event(data) == {**data, "to": None, "summary": None, "contact_email": None}
    assert erasure.redacted_event({"call_id": "c", "to": None, "from": "", "duration": 30}) is None  # nothing left


# -- the use case --------------------------------------------------------------------------------------------------

@pytest.fixture
async def profile(voice_client, business_id) -> CallingProfile:
    """An agent of the business with its assistant and number at the provider."""
    assistant = await voice_client.create_assistant({"name": "Closer"})
    number = await voice_client.import_phone_number({"provider": "vapi", "assistantId": assistant["id"]})
    return CallingProfile(new_id(), "Closer", business_id, assistant["id"], number["number"], number["id"],
                          "Answer the phone.", "Hello!", {})


@pytest.fixture
def units(database):
    return calls_units(database, MemoryCalls)


@pytest.fixture
def calls(units, voice_port, profile, business_id):
    others = CallsNeighbours(profiles=[profile], names={business_id: "Acme Plumbing"})
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,),
                          standings=((business_id, "active"),))):
        yield Calls(units, voice_port, others.ports, recording_secret="s", base_url=BASE_URL)


@pytest.fixture
def lifecycle(units, voice_port):
    return Lifecycle(units, voice_port)


def request(business_id: str, phones=(), **ids) -> common_pb2.ErasureRequest:
    return common_pb2.ErasureRequest(business_id=business_id, erasure_id=new_id(), phones=list(phones), **ids)


def counts(report: common_pb2.ErasureReport) -> dict[str, int]:
    return {item.what: item.count for item in report.items}


async def played(voice, provider_call_id: str) -> dict:
    """The provider's call once its silent playback ended and its report came (the status says ended a moment
    before the end-of-call report puts the artifact on it, as at Vapi)."""
    for _ in range(200):
        status, call = await voice.request("GET", f"/call/{provider_call_id}")
        if call.get("status") == "ended" and "artifact" in call:
            return call
        await asyncio.sleep(0.01)
    raise AssertionError(f"call {provider_call_id} never ended: {status} {call}")


async def reported(lifecycle: Lifecycle, call, **report) -> None:
    await lifecycle.apply([CallReport(CallRef(call.provider_call_id, call.id), "customer-ended-call", "completed",
                                      **report)])


async def test_a_person_is_erased_at_the_provider_then_here_and_a_repeat_changes_nothing(
        calls, lifecycle, units, database, voice, voice_port, profile, business_id):
    theirs = await calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE, name="Sam Lee", context="Sam's quote"))
    someone_else = await calls.create(NewCall(agent_id=profile.agent_id, to=OTHER_CALLEE))
    at_provider = await played(voice, theirs.provider_call_id)
    recording = at_provider["artifact"]["recording"]["mono"]["combinedUrl"]
    recording = recording if recording.startswith("http") else voice.url + recording  # served without a public URL
    await reported(lifecycle, theirs, transcript="AI: Hello Sam\nUser: Hi", recording_url=recording,
                   summary="Sam wants a quote", structured_data={"name": "Sam Lee", "email": "sam@example.com"},
                   cost_cents=42)
    async with database.transaction() as conn:
        await MemoryCalls(conn).claim_tool_call(call_id=theirs.id, tool_call_id="t1", name="book",
                                                arguments={"name": "Sam Lee"}, result="Booked Sam", outcome="ok",
                                                created_at=datetime.now(UTC))
    eraser = Erasure(units, voice_port)

    report = await eraser.erase(request(business_id, ["+1 (415) 555-0123"]))
    assert list(report.call_ids) == [theirs.id]
    assert counts(report) == {"calls.call": 1, "calls.transcript": 1, "calls.recording": 1, "provider.call": 1,
                              "calls.tool_call_arguments": 1, "calls.outbox": 0}
    status, _ = await voice.request("GET", f"/call/{theirs.provider_call_id}")
    assert status == 404
    async with aiohttp.ClientSession() as session, session.get(recording) as audio:
        assert audio.status == 404
    _, listed = await voice.request("GET", "/call")
    assert [c["id"] for c in listed] == [someone_else.provider_call_id]

    erased, tool_calls = await calls.detail(theirs.id)
    assert (erased.to_number, erased.name, erased.context, erased.transcript, erased.summary, erased.recording_url,
            erased.structured_data) == (ERASED_NUMBER, None, None, None, None, None, None)
    assert (erased.status, erased.cost_cents, erased.provider_call_id) == ("completed", 42, theirs.provider_call_id)
    assert "name" not in erased.variables and erased.erased_at is not None
    assert [(t.arguments, t.result, t.outcome) for t in tool_calls] == [({}, ERASED_TEXT, "ok")]
    assert (await calls.transcript(theirs.id)).transcript is None
    with pytest.raises(ServiceError) as gone:
        await calls.recording(theirs.id)
    assert (gone.value.code, gone.value.message) == ("not_found", ERASED_RECORDING)
    assert (await calls.get(someone_else.id)).to_number == OTHER_CALLEE

    again = await eraser.erase(request(business_id, [CALLEE], call_ids=[theirs.id]))
    assert set(counts(again).values()) == {0} and list(again.call_ids) == []


async def test_another_business_is_out_of_reach_however_its_calls_are_named(
        calls, units, voice, voice_port, profile, business_id):
    placed = await calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE))
    report = await Erasure(units, voice_port).erase(request(new_id(), [CALLEE], call_ids=[placed.id],
                                                            lead_ids=[new_id()]))
    assert set(counts(report).values()) == {0} and list(report.call_ids) == []
    assert (await calls.get(placed.id)).to_number == CALLEE
    status, _ = await voice.request("GET", f"/call/{placed.provider_call_id}")
    assert status == 200
    with pytest.raises(ServiceError) as malformed:
        await Erasure(units, voice_port).erase(request("not-a-business", [CALLEE]))
    assert malformed.value.code == "invalid_request"


async def test_a_provider_outage_leaves_the_call_for_the_repeat_which_completes_it(
        calls, units, voice, voice_port, profile, business_id):
    placed = await calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE))
    await voice.fail_next("DELETE", "/call/", 503)
    with pytest.raises(ServiceError) as failed:
        await Erasure(units, voice_port).erase(request(business_id, [CALLEE]))
    assert failed.value.code == "provider_error"
    assert (await calls.get(placed.id)).erased_at is None  # the provider first: our row waits for it
    report = await Erasure(units, voice_port).erase(request(business_id, [CALLEE]))
    assert counts(report)["provider.call"] == 1 and counts(report)["calls.call"] == 1


async def test_a_crash_after_the_providers_deletion_is_completed_by_the_repeat(
        calls, units, voice, voice_port, profile, business_id):
    placed = await calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE))
    await voice_port.delete_call(placed.provider_call_id)  # the job died before our write
    report = await Erasure(units, voice_port).erase(request(business_id, [CALLEE]))
    assert counts(report)["provider.call"] == 1 and counts(report)["calls.call"] == 1  # a 404 there: deleted
    assert (await calls.get(placed.id)).to_number == ERASED_NUMBER


async def test_a_call_erased_while_it_was_being_placed_is_deleted_at_the_provider_once_placed(
        calls, units, voice, voice_port, profile, business_id):
    await voice.delay_next("POST", "/call", 0.2)
    placing = asyncio.ensure_future(calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE)))
    await asyncio.sleep(0.05)  # recorded queued; the provider has not answered yet
    report = await Erasure(units, voice_port).erase(request(business_id, [CALLEE]))
    assert counts(report)["calls.call"] == 1 and counts(report)["provider.call"] == 0  # nothing there yet
    placed = await placing
    assert placed.erased_at is not None and placed.to_number == ERASED_NUMBER
    assert (await voice.request("GET", f"/call/{placed.provider_call_id}"))[0] == 404


async def test_messages_after_the_erasure_bring_nothing_personal_back(
        calls, lifecycle, units, database, voice_port, profile, business_id):
    placed = await calls.create(NewCall(agent_id=profile.agent_id, to=CALLEE, name="Sam Lee"))
    ref = CallRef(placed.provider_call_id, placed.id)
    await lifecycle.apply([StatusUpdate(ref, "in-progress", datetime.now(UTC))])
    await Erasure(units, voice_port).erase(request(business_id, call_ids=[placed.id]))
    events_before = len(database.events)
    await reported(lifecycle, placed, transcript="AI: Hello Sam", summary="Sam called", cost_cents=7,
                   recording_url="https://r/1.wav", structured_data={"name": "Sam Lee", "email": "sam@example.com"})
    after = await calls.get(placed.id)
    assert (after.status, after.cost_cents) == ("completed", 7)  # billing still hears of it
    assert (after.transcript, after.summary, after.recording_url, after.structured_data) == (None, None, None, None)
    [completed] = database.events[events_before:]
    assert completed["type"] == "call.completed" and completed["data"]["to"] == ""
    assert (completed["data"]["contact_name"], completed["data"]["summary"]) == (None, None)
    tools = calls_tools(units)
    answered = await tools.answer(ToolCallsRequest(ref, (ToolCall("t9", "book", {"name": "Sam Lee"}),)))
    assert [a.result for a in answered] == [NOT_THIS_CALL]
    async with database.read() as conn:
        assert await MemoryCalls(conn).tool_call(placed.id, "t9") is None


def calls_tools(units) -> ToolCalls:
    """The tool calls' use case (its tools are never reached here)."""
    return ToolCalls(units, None, texts=None, bookings=None, leads=None)


def test_the_lifecycle_rules_guard_an_erased_call():
    erased = row(status="in-progress", answered=True, reported_at=None, status_at=None, provider_call_id="pc",
                 erased_at=datetime.now(UTC), to_number=ERASED_NUMBER, business_id=new_id(), agent_id=new_id(),
                 lead_id=None, external_ref=None, touch_id=None, summary=None, recording_url=None,
                 structured_data=None, cost_cents=0, duration=0, ended_reason=None, webhook_url=None)
    report = CallReport(CallRef("pc"), "customer-ended-call", "completed", transcript="AI: Hi Sam", summary="Sam")
    changes = changes_of(erased, report)
    assert changes["status"] == "completed" and "transcript" not in changes and "summary" not in changes
    [(payload, _)] = events_of(erased, {**erased, **changes})
    assert payload.to == "" and not payload.HasField("summary")


# -- the simulator's DELETE /call/{id} -----------------------------------------------------------------------------

async def test_the_simulator_deletes_a_call_as_vapi_documents_and_refuses_a_bulk_deletion(voice, voice_port,
                                                                                          profile):
    status, placed = await voice.request("POST", "/call", {"assistantId": profile.provider_assistant_id,
                                                           "phoneNumberId": profile.provider_phone_number_id,
                                                           "customer": {"number": CALLEE}})
    assert status == 201
    status, _ = await voice.request("DELETE", f"/call/{placed['id']}", {"ids": [placed["id"]]})
    assert status == 400
    status, _ = await voice.request("DELETE", f"/call/{placed['id']}", {"force": True})
    assert status == 400
    status, deleted = await voice.request("DELETE", f"/call/{placed['id']}", {})
    assert status == 200 and deleted["id"] == placed["id"]  # the call, as it was
    assert (await voice.request("GET", f"/call/{placed['id']}"))[0] == 404
    assert (await voice.request("DELETE", f"/call/{placed['id']}", {}))[0] == 404
    await voice_port.delete_call(placed["id"])  # already gone: deleted
    with pytest.raises(ProviderError):
        await voice.fail_next("DELETE", "/call/", 503)
        await voice_port.delete_call(placed["id"])

