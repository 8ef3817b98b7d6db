"""The calls service's use cases (services/calls/service.py, inbound_service.py) in the fast tier: on the in-memory
database (tests/memory), the voice simulator served in this process and the other services behind in-memory
ports (tests/service/fakes.py). Placing with idempotency keys, the compliance decision (refusal, deferral, the
slot a provider refusal frees), reading calls within the caller's businesses, and answering inbound calls once."""
import asyncio
import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from contracts import calls as calls_contract
from core import standing
from core.errors import ServiceError
from core.ids import new_id
from core.pagination import Page
from core.tenant import Tenant, acting_as
from providers.voice.port import CallRef, Ignored
from providers.voice.vapi import calls as vapi_calls
from providers.voice.vapi.client import VapiClient
from services.calls import domain
from services.calls import schema as calls_schema
from services.calls.domain import EVERY_CALL, CallFilter
from services.calls.inbound_service import HELD_MESSAGE, NOT_IN_SERVICE, Inbound
from services.calls.ports import CallingProfile, Lead, NumberRoute
from services.calls.repository import calls_units
from services.calls.schema import idempotency_keys
from services.calls.service import IDEMPOTENCY_WINDOW, NEVER_PLACED, Calls, NewCall
from switchboard.v1 import common_pb2
from tests.memory import MemoryDatabase, insert
from tests.memory.calls import MemoryCalls
from tests.service.fakes import CallsNeighbours, accounts_saying
from tests.unit.conftest import KEY, vapi_port

CALLEE, OTHER_CALLEE, CALLER = "+14155550123", "+14155550124", "+14155550199"
BASE_URL = "https://switchboard.example.com"


@pytest.fixture
async def profile(voice_client, business_id) -> CallingProfile:
    """An agent of the business with its assistant and number at the provider."""
    assistant = await voice_client.create_assistant({"name": "Closer"})
    number = await voice_client.import_phone_number({"provider": "vapi", "assistantId": assistant["id"]})
    return CallingProfile(new_id(), "Closer", business_id, assistant["id"], number["number"], number["id"],
                          "Answer the phone.", "Hello!", {})


@pytest.fixture
def lead(business_id) -> Lead:
    return Lead(new_id(), business_id, "Sam Lee", "Sam", 10, "new", None, 0, "api", datetime(2026, 11, 20, tzinfo=UTC))


@pytest.fixture
def others(profile, lead, business_id) -> CallsNeighbours:
    return CallsNeighbours(profiles=[profile], leads={(business_id, CALLEE): lead},
                           names={business_id: "Acme Plumbing"})


@pytest.fixture
def caller(business_id) -> Tenant:
    return Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "active"),))


@pytest.fixture
def calls(database, voice_port, others, caller):
    with acting_as(caller):
        yield Calls(calls_units(database, MemoryCalls), voice_port, others.ports, recording_secret="recording-secret", base_url=BASE_URL)


def call_to(profile: CallingProfile, to: str = CALLEE, **fields) -> NewCall:
    return NewCall(agent_id=profile.agent_id, to=to, **fields)


async def provider_calls(voice) -> list:
    status, placed = await voice.request("GET", "/call")
    assert status == 200
    return placed


async def stored(database: MemoryDatabase, business_id: str) -> list:
    """The calls the in-memory database holds for the business."""
    async with database.read() as conn:
        return (await MemoryCalls(conn).page((business_id,), EVERY_CALL, Page(limit=100))).rows


async def test_an_enforced_call_asks_compliance_about_its_lead_and_is_placed(calls, others, profile, lead, voice):
    placed = await calls.create(call_to(profile, compliance="enforce", name="Sam Lee", context="Quote follow-up"))
    assert placed.status == "queued" and placed.direction == "outbound" and placed.lead_id == lead.id
    assert placed.variables["business_name"] == "Acme Plumbing" and placed.variables["name"] == "Sam"
    [asked] = others.asked
    assert (asked.phone, asked.lead, asked.reference, asked.actor, asked.sender) == (
        CALLEE, lead, placed.id, "enforced_call", profile.phone_number)
    [sent] = await provider_calls(voice)
    assert placed.provider_call_id == sent["id"] and others.released == []
    overrides = sent["assistantOverrides"]
    assert overrides["metadata"] == {"switchboard_call_id": placed.id} and overrides["firstMessage"] == "Hello!"
    assert overrides["server"]["url"] == f"{BASE_URL}/api/v1/providers/voice/messages"
    assert overrides["variableValues"]["context"] == "Quote follow-up"
    assert overrides["voicemailDetection"] == {"provider": "vapi"}  # the provider's default is off
    assert (await calls.get(placed.id)) == placed


async def test_a_repeated_idempotency_key_answers_the_first_call_and_dials_once(calls, profile, voice):
    first = await calls.create(call_to(profile), "key-1")
    assert await calls.create(call_to(profile), "key-1") == first
    with pytest.raises(ServiceError) as reused:
        await calls.create(call_to(profile, OTHER_CALLEE), "key-1")
    assert reused.value.code == "conflict" and "another request" in reused.value.message
    assert len(await provider_calls(voice)) == 1
    with pytest.raises(ServiceError) as malformed:
        await calls.create(call_to(profile), " ")
    assert malformed.value.code == "invalid_request"


async def test_a_key_whose_first_request_is_still_placing_is_refused_for_now(calls, profile, voice, business_id):
    await voice.delay_next("POST", "/call", 0.2)
    first = asyncio.ensure_future(calls.create(call_to(profile), "key-1"))
    await asyncio.sleep(0.02)  # the first request has claimed the key (no I/O before) and waits on the provider
    with pytest.raises(ServiceError) as placing:
        await calls.create(call_to(profile), "key-1")
    assert placing.value.code == "conflict" and "still being placed" in placing.value.message
    placed = await first
    assert [row.id for row in await stored(calls.uow.connections, business_id)] == [placed.id]


async def test_a_key_is_forgotten_after_its_window(calls, database, profile, voice):
    first = await calls.create(call_to(profile), "key-1")
    async with database.transaction() as conn:  # as if the key had been claimed a day and a minute ago
        for claim in conn.rows(idempotency_keys).values():
            claim["created_at"] -= IDEMPOTENCY_WINDOW + timedelta(minutes=1)
    second = await calls.create(call_to(profile, OTHER_CALLEE), "key-1")
    assert second.id != first.id and second.to_number == OTHER_CALLEE and len(await provider_calls(voice)) == 2


async def lapsed_claim(database: MemoryDatabase, caller: Tenant, profile: CallingProfile,
                       call_id: str | None = None, lease_until: datetime | None = None) -> None:
    """The claim of key-1 as a process left it when it was killed placing `call_to(profile)` (nothing freed it): its
    lease lapsed (or runs until `lease_until`), naming `call_id` if it had recorded the call queued."""
    now = datetime.now(UTC)
    async with database.transaction() as conn:
        insert(conn.rows(idempotency_keys), idempotency_keys, {
            "account_id": caller.account_id, "key": "key-1", "call_id": call_id, "lease_token": new_id(),
            "request_hash": domain.request_hash(Calls._checked(call_to(profile))),
            "lease_until": lease_until or now - timedelta(seconds=1), "created_at": now - timedelta(minutes=3)})


async def test_a_claim_whose_process_was_killed_before_recording_the_call_is_taken_over(calls, database, caller,
                                                                                       profile, voice):
    """Issue 55: the key was blocked for 24 hours (409 still being placed). While the lease runs it still is."""
    await lapsed_claim(database, caller, profile, lease_until=datetime.now(UTC) + timedelta(minutes=1))
    with pytest.raises(ServiceError) as placing:
        await calls.create(call_to(profile), "key-1")
    assert placing.value.code == "conflict" and "still being placed" in placing.value.message
    async with database.transaction() as conn:
        conn.rows(idempotency_keys).clear()
    await lapsed_claim(database, caller, profile)
    placed = await calls.create(call_to(profile), "key-1")
    assert [sent["id"] for sent in await provider_calls(voice)] == [placed.provider_call_id]
    assert await calls.create(call_to(profile), "key-1") == placed


async def test_a_taken_over_claim_answers_the_call_its_killed_process_placed_at_the_provider(calls, database,
                                                                                           caller, profile, voice):
    """The process was killed after the provider created the call, before it recorded the provider's id: the
    retry finds the call at the provider by our id and answers it, dialing no second time."""
    placed = await calls.create(call_to(profile), "key-1")
    async with database.transaction() as conn:
        conn.rows(idempotency_keys).clear()
        conn.rows(calls_schema.calls)[(placed.id,)]["provider_call_id"] = None
    await lapsed_claim(database, caller, profile, placed.id)
    await voice.fail_next("GET", "/call", 500)
    with pytest.raises(ServiceError) as unknown:  # whether it was placed is unknown: the claim stays, its lease ended
        await calls.create(call_to(profile), "key-1")
    assert unknown.value.code == "unavailable" and "same Idempotency-Key" in unknown.value.message
    again = await calls.create(call_to(profile), "key-1")  # the next retry asks the provider at once
    assert (again.id, again.provider_call_id) == (placed.id, placed.provider_call_id)
    assert len(await provider_calls(voice)) == 1


@pytest.fixture
async def impatient(database, voice, others, caller):
    """The calls use cases over a provider client that gives up on an answer after 0.3 s."""
    client = VapiClient(voice.url, KEY, max_attempts=1, timeout=0.3)
    with acting_as(caller):
        yield Calls(calls_units(database, MemoryCalls), vapi_port(client), others.ports,
                    recording_secret="recording-secret", base_url=BASE_URL)
    await client.close()


async def test_a_create_whose_answer_was_lost_is_the_call_the_provider_placed(impatient, profile, voice):
    """The provider placed the call and its answer never came (issue 55): the call is found at the provider by our
    id and answered, not failed while the callee's phone rings, and a retry with the key dials no second time."""
    await voice.delay_next("POST", "/call", 1.0, hold="answer")
    placed = await impatient.create(call_to(profile), "key-1")
    [sent] = await provider_calls(voice)
    assert (placed.status, placed.provider_call_id) == ("queued", sent["id"])
    assert await impatient.create(call_to(profile), "key-1") == placed


async def test_a_create_whose_answer_was_lost_while_the_provider_cannot_say_is_settled_by_the_retry(
        impatient, profile, voice):
    await voice.delay_next("POST", "/call", 1.0, hold="answer")
    await voice.fail_next("GET", "/call", 503)
    with pytest.raises(ServiceError) as unknown:
        await impatient.create(call_to(profile), "key-1")
    assert unknown.value.code == "unavailable"
    [queued] = await stored(impatient.uow.connections, profile.business_id)
    assert (queued.status, queued.provider_call_id) == ("queued", None)
    again = await impatient.create(call_to(profile), "key-1")
    [sent] = await provider_calls(voice)
    assert (again.id, again.provider_call_id) == (queued.id, sent["id"])


async def test_a_create_the_provider_failed_without_placing_it_is_failed_and_frees_its_key(impatient, profile, voice):
    await voice.fail_next("POST", "/call", 500)
    with pytest.raises(ServiceError) as failed:
        await impatient.create(call_to(profile), "key-1")
    assert failed.value.code == "call_failed"
    [row] = await stored(impatient.uow.connections, profile.business_id)
    assert row.status == "failed" and await provider_calls(voice) == []
    placed = await impatient.create(call_to(profile), "key-1")
    assert placed.id != row.id and len(await provider_calls(voice)) == 1


async def test_a_taken_over_claim_whose_call_never_reached_the_provider_places_it_once(calls, database, caller,
                                                                                      profile, voice, business_id):
    """The process was killed after recording the call queued, before the provider had it: that call is closed
    failed as never placed, and the retry places the request."""
    other = await calls.create(call_to(profile))  # a call of the assistant the provider has: not the one sought
    unplaced = new_id()
    async with database.transaction() as conn:
        insert(conn.rows(calls_schema.calls), calls_schema.calls,
               {**dataclasses.asdict(other), "id": unplaced, "provider_call_id": None})
    await lapsed_claim(database, caller, profile, unplaced)
    placed = await calls.create(call_to(profile), "key-1")
    assert placed.id not in (other.id, unplaced) and len(await provider_calls(voice)) == 2
    never = await calls.get(unplaced)
    assert (never.status, never.ended_reason) == ("failed", NEVER_PLACED)
    assert await calls.create(call_to(profile), "key-1") == placed


async def test_a_deferred_call_places_nothing_and_frees_its_key(calls, others, profile, voice, business_id):
    others.decision = common_pb2.ComplianceDecision(id=new_id(), outcome="defer", code="tcpa_violation",
                                                    message="outside the callee's calling window")
    assert await calls.place(call_to(profile, compliance="enforce"), "key-1") is others.decision
    with pytest.raises(ServiceError) as refused:
        await calls.create(call_to(profile, compliance="enforce"), "key-1")
    assert refused.value.code == "tcpa_violation"
    assert await stored(calls.uow.connections, business_id) == [] and await provider_calls(voice) == []
    others.decision = None  # allowed now: the same key places the call
    placed = await calls.create(call_to(profile, compliance="enforce"), "key-1")
    assert placed.provider_call_id and others.released == []


async def test_a_compliance_refusal_is_its_code_and_places_nothing(calls, others, profile, voice, business_id):
    others.decision = common_pb2.ComplianceDecision(id=new_id(), outcome="refuse", code="number_on_dnc",
                                                    message="the callee is on the do-not-call list")
    with pytest.raises(ServiceError) as refused:
        await calls.create(call_to(profile, compliance="enforce"), "key-1")
    assert (refused.value.code, refused.value.message) == ("number_on_dnc", "the callee is on the do-not-call list")
    assert await stored(calls.uow.connections, business_id) == [] and await provider_calls(voice) == []


async def test_a_provider_refusal_fails_the_call_frees_its_key_and_its_frequency_slot(calls, others, profile, voice,
                                                                                      business_id):
    await voice.fail_next("POST", "/call", 400)
    with pytest.raises(ServiceError) as refused:
        await calls.create(call_to(profile, compliance="enforce"), "key-1")
    assert refused.value.code == "call_failed"
    [asked] = others.asked
    [row] = await stored(calls.uow.connections, business_id)
    assert row.status == "failed" and row.ended_reason.startswith("provider refused") and row.provider_call_id is None
    assert asked.reference == row.id and len(others.released) == 1
    retried = await calls.create(call_to(profile, compliance="enforce"), "key-1")
    assert retried.id != row.id and retried.provider_call_id


async def test_what_a_call_may_not_ask_for_is_refused_before_anything_is_placed(calls, others, profile, voice,
                                                                                business_id, caller):
    for new, message in [(call_to(profile, compliance="sometimes"), "compliance must be one of"),
                         (call_to(profile, actor="run"), "apply only to calls with compliance enforce"),
                         (call_to(profile, "555"), "to must be"),
                         (NewCall(agent_id="agent-1", to=CALLEE), "agent_id must be a UUID")]:
        with pytest.raises(ServiceError) as refused:
            await calls.create(new)
        assert refused.value.code == "invalid_request" and message in refused.value.message
    others.profiles[profile.agent_id] = dataclasses.replace(profile, provider_phone_number_id=None)
    with pytest.raises(ServiceError) as numberless:
        await calls.create(call_to(profile))
    assert "without a phone number" in numberless.value.message
    others.profiles[profile.agent_id] = profile
    foreign = Lead(new_id(), new_id(), None, None, 0, "new", None, 0, "api", datetime(2026, 1, 1, tzinfo=UTC))
    others.leads[(foreign.business_id, CALLEE)] = foreign
    with pytest.raises(ServiceError) as theirs:
        await calls.create(call_to(profile, lead_id=foreign.id))
    assert "lead of another business" in theirs.value.message
    held = Tenant(account_id=caller.account_id, business_ids=(business_id,), standings=((business_id, "paused"),))
    with acting_as(held), pytest.raises(ServiceError) as paused:
        await calls.create(call_to(profile))
    assert paused.value.code == "forbidden"
    assert await stored(calls.uow.connections, business_id) == [] and await provider_calls(voice) == []


async def test_a_call_is_read_in_the_callers_businesses_only(calls, profile):
    placed = await calls.create(call_to(profile))
    with pytest.raises(ServiceError) as malformed:
        await calls.get("call-1")
    assert malformed.value.code == "invalid_request"
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))), pytest.raises(ServiceError) as hidden:
        await calls.get(placed.id)
    assert hidden.value.code == "not_found"
    with pytest.raises(ServiceError) as missing:
        await calls.get(str(uuid.uuid4()))
    assert missing.value.code == "not_found"


async def test_calls_are_listed_newest_first_by_agent_and_status(calls, profile, business_id):
    placed = [await calls.create(call_to(profile, f"+1415555{line:04d}")) for line in range(130, 133)]
    listed = await calls.list(EVERY_CALL, Page(limit=2))
    rest = await calls.list(EVERY_CALL, Page(limit=2, cursor=listed.next_cursor))
    assert [r.id for r in listed.rows + rest.rows] == [p.id for p in reversed(placed)] and not rest.has_more
    assert (await calls.list(CallFilter(agent_id=new_id()), Page(limit=10))).rows == []
    assert len((await calls.list(CallFilter(agent_id=profile.agent_id, status="queued"), Page(limit=10))).rows) == 3
    assert len((await calls.list(CallFilter(direction="outbound"), Page(limit=10), business_id)).rows) == 3
    assert (await calls.list(CallFilter(direction="inbound"), Page(limit=10))).rows == []
    later = CallFilter(created_from=datetime.now(UTC) + timedelta(minutes=1))
    assert (await calls.list(later, Page(limit=10))).rows == []
    for refused, code in ((CallFilter(status="dialing"), "invalid_request"),
                          (CallFilter(direction="sideways"), "invalid_request")):
        with pytest.raises(ServiceError) as unknown:
            await calls.list(refused, Page(limit=10))
        assert unknown.value.code == code
    with pytest.raises(ServiceError) as elsewhere:
        await calls.list(EVERY_CALL, Page(limit=10), new_id())  # not one of the caller's businesses
    assert elsewhere.value.code == "not_found"
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        assert (await calls.list(EVERY_CALL, Page(limit=10))).rows == []


async def test_a_transcript_and_a_recording_come_with_the_report(calls, database, profile):
    placed = await calls.create(call_to(profile))
    with pytest.raises(ServiceError) as early:
        await calls.transcript(placed.id)
    assert early.value.code == "conflict" and "end-of-call report" in early.value.message
    assert (await calls.transcripts(None, None, Page(limit=10))).rows == []
    link = await calls.recording(placed.id)
    assert (link.url, link.recording_status, link.transcript_status) == (None, "pending", "pending")
    audio = "https://recordings.example.com/one.wav"
    async with database.transaction() as conn:  # what the end-of-call report brings (lifecycle_service.py)
        await MemoryCalls(conn).change(placed.id, {"status": "completed", "transcript": "AI: Hello!\nUser: Hi",
                                                   "recording_url": audio, "reported_at": datetime.now(UTC)})
    assert (await calls.transcript(placed.id)).transcript == "AI: Hello!\nUser: Hi"
    assert [r.id for r in (await calls.transcripts(profile.agent_id, 7, Page(limit=10))).rows] == [placed.id]
    link = await calls.recording(placed.id)
    assert link.recording_status == "available" and link.url.startswith(f"{BASE_URL}{calls_contract.AUDIO_PATH}?")
    expires = int(link.expires_at.timestamp())
    signature = domain.recording_signature("recording-secret", placed.id, expires)
    assert await calls.recording_source(placed.id, expires, signature) == audio
    with pytest.raises(ServiceError) as forged:
        await calls.recording_source(placed.id, expires, "0" * len(signature))
    assert forged.value.code == "unauthorized"
    other_id = new_id()
    with pytest.raises(ServiceError) as none:
        expires_later = int((datetime.now(UTC) + timedelta(minutes=5)).timestamp())
        await calls.recording_source(other_id, expires_later,
                                     domain.recording_signature("recording-secret", other_id, expires_later))
    assert none.value.code == "not_found"


# -- inbound -------------------------------------------------------------------------------------

NUMBER, IDLE_NUMBER = "+14155550170", "+14155550171"


@pytest.fixture
def inbound(database, business_id, lead):
    others = CallsNeighbours(routes={NUMBER: NumberRoute(business_id, new_id(), "Front desk", "assistant-1"),
                                     IDLE_NUMBER: NumberRoute(business_id, None, None, None)},
                             leads={(business_id, CALLER): lead}, names={business_id: "Acme Plumbing"})
    return Inbound(calls_units(database, MemoryCalls), others.ports, standings=accounts_saying({business_id: standing.TRIALING}))


def call_of(message: dict) -> CallRef:
    """The call a Vapi server message is about, as the adapter reads it."""
    read = vapi_calls.read_message({"message": message})
    assert not isinstance(read, Ignored)
    return read.call


def assistant_request(number: str, caller: str, provider_call_id: str) -> CallRef:
    return call_of({"type": "assistant-request", "call": {"id": provider_call_id, "customer": {"number": caller},
                                                          "phoneNumber": {"number": number}}})


async def answered(inbound: Inbound, voice_port, call: CallRef) -> dict:
    """What Vapi is answered with."""
    return await voice_port.answer(await inbound.assistant_request(call))


async def test_a_repeated_assistant_request_answers_alike_and_records_the_call_and_its_event_once(
        inbound, voice_port, database, business_id, lead):
    first = await answered(inbound, voice_port, assistant_request(NUMBER, CALLER, "pc-1"))
    again = await answered(inbound, voice_port, assistant_request(NUMBER, CALLER, "pc-1"))
    assert first == again and first["assistantId"] == "assistant-1"
    variables = first["assistantOverrides"]["variableValues"]
    assert (variables["business_name"], variables["name"], variables["lead_status"]) == ("Acme Plumbing", "Sam", "new")
    [row] = await stored(database, business_id)
    assert (row.direction, row.status, row.from_number, row.lead_id) == ("inbound", "ringing", CALLER, lead.id)
    assert first["assistantOverrides"]["metadata"] == {"switchboard_call_id": row.id}
    [event] = database.events
    assert (event["type"], event["business_id"]) == ("call.received", business_id)
    assert (event["data"]["call_id"], event["data"]["conversation_id"], event["data"]["from"]) == (row.id, "pc-1",
                                                                                                   CALLER)
    await inbound.record_first_heard(call_of({"type": "status-update", "call": {"id": "pc-1"}}))
    assert len(database.events) == 1


@pytest.mark.parametrize("held", [standing.PAUSED, None], ids=["paused", "no record"])
async def test_a_held_business_is_answered_by_the_recorded_message_and_records_nothing(inbound, voice_port, database,
                                                                                      business_id, held):
    inbound.standings = accounts_saying({business_id: held} if held else {})
    answer = await answered(inbound, voice_port, assistant_request(NUMBER, CALLER, "pc-held"))
    assert answer == {"error": HELD_MESSAGE}  # spoken by the provider, then it hangs up: no assistant
    await inbound.record_first_heard(call_of({"type": "status-update", "call": {"id": "pc-held", "phoneNumber": {
        "number": NUMBER}, "customer": {"number": CALLER}}}))
    assert await stored(database, business_id) == [] and database.events == []


async def test_numbers_nobody_answers_are_refused_and_record_nothing(inbound, voice_port, database, business_id):
    for number in ("+14155550100", IDLE_NUMBER, "not a number"):
        assert await answered(inbound, voice_port, assistant_request(number, CALLER, f"pc-{number}")) == {
            "error": NOT_IN_SERVICE}
    assert await stored(database, business_id) == [] and database.events == []
