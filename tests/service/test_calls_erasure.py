"""A person's erasure from the calls service (ErasePerson, services/calls/erasure.py, issue 56) over real gRPC, as the
accounts service's privacy job asks it, against the running stack: the calls they had with a business (one placed
through the API, one they made to its number), recorded with their reports, are deleted at the voice simulator and
redacted here (the row, its events in the outbox); the public routes show nothing of them; the same request again
reports zeros; another business's call, even named by id, is untouched; no other process may ask."""
import json
import uuid

import aiohttp
import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import utcnow
from core.tenant import acting_for
from services.calls import schema, store
from services.calls.erasure import ERASED_NUMBER
from services.calls.service import ERASED_RECORDING
from switchboard.v1 import calls_pb2_grpc, common_pb2
from tests.calling import our_call, place, ring, settled
from tests.tenants import signed

PERSON = "+14155550191"
THEIR_OTHER_WAY = "+1 (415) 555-0191"  # the same number as a person may give it


@pytest.fixture
async def calls_rpc(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('calls').port}") as channel:
        yield calls_pb2_grpc.CallsStub(channel)


def as_privacy_job(stack, business_id: str, process: str = "accounts") -> tuple:
    return signed(stack, acting_for(business_id, "privacy"), process, to="calls")


async def rows(engine, call_ids: list[str]) -> dict[str, dict]:
    async with engine.connect() as conn:
        found = await conn.execute(sa.select(schema.calls).where(schema.calls.c.id.in_(call_ids)))
        return {str(r.id): r._asdict() for r in found}


async def outbox_of(engine, call_ids: list[str]) -> list[dict]:
    async with engine.connect() as conn:
        found = await conn.execute(sa.select(schema.outbox.c.type, schema.outbox.c.data)
                                   .where(schema.outbox.c.data["call_id"].astext.in_(call_ids)))
        return [{"type": r.type, "data": r.data} for r in found]


async def other_business_call(engine) -> str:
    """A call of another business with the same person, recorded as the calls service records one."""
    now, call_id = utcnow(), str(uuid.uuid4())
    async with engine.begin() as conn:
        await store.insert_call(conn, id=call_id, business_id=str(uuid.uuid4()), agent_id=str(uuid.uuid4()),
                                direction="outbound", status="completed", to_number=PERSON,
                                from_number="+14155550100", max_duration=600, compliance="skip", variables={},
                                transcript="AI: Hello\nUser: Hi", summary="Someone else's call", created_at=now,
                                updated_at=now)
    return call_id


def counts(report) -> dict[str, int]:
    return {item.what: item.count for item in report.items}


async def test_a_person_is_erased_from_the_calls_here_and_at_the_provider_and_nothing_shows_them(
        api, stack, engine, voice, account, calling_agent, calls_rpc):
    key, business_id = account["key"], account["business_id"]
    status, placed, _ = await place(api, key, agent_id=calling_agent["id"], to=PERSON, name="Sam Lee")
    assert status == 201, placed
    outbound = await settled(api, key, placed["id"])
    rang = await ring(voice, calling_agent["phone_number"], PERSON)
    inbound = await settled(api, key, (await our_call(api, key, calling_agent["id"], rang["id"]))["id"])
    assert outbound["summary"] and inbound["from"] == PERSON
    _, recording, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": outbound["id"]})
    at_provider = {c["id"]: c for c in [(await voice.request("GET", f"/call/{call['conversation_id']}"))[1]
                                        for call in (outbound, inbound)]}
    audio = at_provider[outbound["conversation_id"]]["artifact"]["recording"]["mono"]["combinedUrl"]
    assert recording["recording_status"] == "available"
    someone_elses = await other_business_call(engine)
    ours = [outbound["id"], inbound["id"]]

    request = common_pb2.ErasureRequest(business_id=business_id, erasure_id=str(uuid.uuid4()),
                                        phones=[THEIR_OTHER_WAY], call_ids=[someone_elses])
    report = await calls_rpc.ErasePerson(request, metadata=as_privacy_job(stack, business_id))
    assert sorted(report.call_ids) == sorted(ours)
    done = counts(report)
    assert (done["calls.call"], done["provider.call"], done["calls.transcript"]) == (2, 2, 2)
    assert done["calls.recording"] >= 1 and done["calls.outbox"] >= 2  # their events: received, completed, ...

    for call in (outbound, inbound):  # gone at the provider, its recording too
        assert (await voice.request("GET", f"/call/{call['conversation_id']}"))[0] == 404
    _, listed = await voice.request("GET", "/call")
    assert not {outbound["conversation_id"], inbound["conversation_id"]} & {c["id"] for c in listed}
    async with aiohttp.ClientSession() as session, session.get(audio) as served:
        assert served.status == 404

    stored = await rows(engine, [*ours, someone_elses])
    for call_id in ours:
        row = stored[call_id]
        assert row["erased_at"] is not None and ERASED_NUMBER in (row["to_number"], row["from_number"])
        assert (row["transcript"], row["summary"], row["recording_url"], row["structured_data"], row["name"]) == (
            None, None, None, None, None)
        assert row["status"] == "completed" and row["cost_cents"] >= 0  # what billing needs stays
    assert stored[someone_elses]["to_number"] == PERSON and stored[someone_elses]["erased_at"] is None
    assert PERSON not in json.dumps([e["data"] for e in await outbox_of(engine, ours)])

    for call in (outbound, inbound):  # the public reads
        status, shown, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
        assert status == 200 and PERSON not in json.dumps(shown) and "Sam" not in json.dumps(shown)
        assert not shown.get("transcript") and not shown.get("summary") and not shown.get("recording_url")
        status, gone, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": call["id"]})
        assert status == 404 and gone["error"]["message"] == ERASED_RECORDING
        status, html, _ = await account["dashboard"].request("GET", f"/dashboard/calls/{call['id']}")
        assert status == 200 and "0191" not in html and "No recording: erased" in html
    _, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": calling_agent["id"]})
    assert PERSON not in json.dumps(page)
    _, transcripts, _ = await api.request("GET", "/api/v1/transcripts", key=key)
    assert not set(ours) & {t["call_id"] for t in transcripts["transcripts"]}

    again = await calls_rpc.ErasePerson(request, metadata=as_privacy_job(stack, business_id))
    assert set(counts(again).values()) == {0} and list(again.call_ids) == []
    by_ids = common_pb2.ErasureRequest(business_id=business_id, erasure_id=request.erasure_id, call_ids=ours)
    assert set(counts(await calls_rpc.ErasePerson(by_ids, metadata=as_privacy_job(stack, business_id))).values()) == {0}


async def test_only_the_accounts_service_may_erase(stack, calls_rpc):
    business_id = str(uuid.uuid4())
    request = common_pb2.ErasureRequest(business_id=business_id, erasure_id=str(uuid.uuid4()), phones=[PERSON])
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await calls_rpc.ErasePerson(request, metadata=as_privacy_job(stack, business_id, "sdr"))
    error = from_rpc_error(refused.value)
    assert error.code == "unauthorized" and "sdr may not call ErasePerson" in error.message
