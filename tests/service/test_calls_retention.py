"""The retention a business set, applied to its calls (ApplyRetention, services/calls/data_retention.py, issue 56)
over real gRPC, as the accounts service's retention job asks it, against the running stack: calls placed through the
API and recorded at the voice simulator are made older in the database; past the recordings' cutoff a call's
recording is deleted at the provider (its call is 404 there, the recording's URL serves nothing) and its link cleared
here while its transcript stays; past the transcripts' cutoff its transcript, summary and extracted data are
redacted and the row kept; a recent call keeps everything; batches say `more`; the same request again changes
nothing; another business's call is untouched; no other process may ask."""
import uuid
from datetime import timedelta

import aiohttp
import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import utcnow
from core.messages import set_timestamp
from core.tenant import acting_for
from services.calls import schema, store
from switchboard.v1 import calls_pb2_grpc, common_pb2
from tests.calling import place, settled
from tests.tenants import signed


@pytest.fixture
async def calls_rpc(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('calls').port}") as channel:
        yield calls_pb2_grpc.CallsStub(channel)


def as_retention_job(stack, business_id: str, process: str = "accounts") -> tuple:
    return signed(stack, acting_for(business_id, "privacy-retention"), process, to="calls")


def request(business_id: str, batch: int = 50, **before) -> common_pb2.RetentionRequest:
    message = common_pb2.RetentionRequest(business_id=business_id, run_id=str(uuid.uuid4()), batch=batch)
    for field, at in before.items():
        set_timestamp(message, field, at)
    return message


def counts(report) -> dict[str, int]:
    return {item.what: item.count for item in report.items}


async def backdate(engine, call_id: str, days: float) -> None:
    async with engine.begin() as conn:
        await conn.execute(schema.calls.update().where(schema.calls.c.id == call_id)
                           .values(created_at=utcnow() - timedelta(days=days)))


async def row(engine, call_id: str) -> dict:
    async with engine.connect() as conn:
        return (await conn.execute(sa.select(schema.calls).where(schema.calls.c.id == call_id))).one()._asdict()


async def recorded_call(api, key, agent, to: str) -> dict:
    status, placed, _ = await place(api, key, agent_id=agent["id"], to=to)
    assert status == 201, placed
    call = await settled(api, key, placed["id"])
    assert call["recording_url"] and call["summary"], call
    return call


async def test_recordings_then_transcripts_past_retention_are_deleted_at_the_provider_and_cleared_here(
        api, stack, engine, voice, account, calling_agent, calls_rpc):
    key, business_id = account["key"], account["business_id"]
    old = await recorded_call(api, key, calling_agent, "+14155550181")
    recent = await recorded_call(api, key, calling_agent, "+14155550182")
    _, at_provider = await voice.request("GET", f"/call/{old['conversation_id']}")
    audio = at_provider["artifact"]["recording"]["mono"]["combinedUrl"]
    await backdate(engine, old["id"], 2)
    someone_elses = str(uuid.uuid4())
    async with engine.begin() as conn:
        await store.insert_call(conn, id=someone_elses, business_id=str(uuid.uuid4()), agent_id=str(uuid.uuid4()),
                                direction="outbound", status="completed", to_number="+14155550183", max_duration=600,
                                compliance="skip", variables={}, transcript="AI: Hello", recording_url="https://x/r.wav",
                                created_at=utcnow() - timedelta(days=30), updated_at=utcnow())

    day_ago, year_ago = utcnow() - timedelta(days=1), utcnow() - timedelta(days=365)
    recordings = request(business_id, recordings_before=day_ago, transcripts_before=year_ago)
    report = await calls_rpc.ApplyRetention(recordings, metadata=as_retention_job(stack, business_id))
    assert counts(report) == {"calls.recording": 1, "calls.transcript": 0, "provider.call": 1,
                              "calls.tool_call_arguments": 0, "calls.outbox": counts(report)["calls.outbox"]}
    assert not report.more
    assert (await voice.request("GET", f"/call/{old['conversation_id']}"))[0] == 404  # the provider's copy is gone
    async with aiohttp.ClientSession() as session, session.get(audio) as served:
        assert served.status == 404
    stored = await row(engine, old["id"])
    assert stored["recording_url"] is None and stored["transcript"] and stored["summary"]  # the text stays its time
    status, shown, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": old["id"]})
    assert status == 200 and shown["recording_url"] is None and shown["recording_status"] == "none", shown
    # The recent call keeps its recording, here and at the provider; another business's call is untouched.
    assert (await row(engine, recent["id"]))["recording_url"] == recent["recording_url"]
    assert (await voice.request("GET", f"/call/{recent['conversation_id']}"))[0] == 200
    assert (await row(engine, someone_elses))["recording_url"] == "https://x/r.wav"

    again = await calls_rpc.ApplyRetention(recordings, metadata=as_retention_job(stack, business_id))
    assert set(counts(again).values()) == {0} and not again.more

    # Past the transcripts' cutoff: the text goes, the call stays for counts and billing.
    transcripts = request(business_id, recordings_before=day_ago, transcripts_before=day_ago)
    report = await calls_rpc.ApplyRetention(transcripts, metadata=as_retention_job(stack, business_id))
    assert (counts(report)["calls.transcript"], counts(report)["provider.call"]) == (1, 1)  # (already gone there)
    stored = await row(engine, old["id"])
    assert (stored["transcript"], stored["summary"], stored["structured_data"]) == (None, None, None)
    assert stored["status"] == "completed" and stored["duration"] == old["duration"]
    status, shown, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": old["id"]})
    assert status == 200 and not shown.get("transcript") and not shown["summary"] and not shown["recording_url"]
    assert (await row(engine, recent["id"]))["transcript"]
    again = await calls_rpc.ApplyRetention(transcripts, metadata=as_retention_job(stack, business_id))
    assert set(counts(again).values()) == {0}


async def test_a_batch_takes_the_oldest_and_says_more_until_none_is_left(
        api, stack, engine, voice, account, calling_agent, calls_rpc):
    key, business_id = account["key"], account["business_id"]
    calls = [await recorded_call(api, key, calling_agent, f"+1415555019{i}") for i in range(3)]
    for i, call in enumerate(calls):
        await backdate(engine, call["id"], 10 - i)
    cutoff = utcnow() - timedelta(days=1)
    first = await calls_rpc.ApplyRetention(request(business_id, batch=2, recordings_before=cutoff),
                                           metadata=as_retention_job(stack, business_id))
    assert counts(first)["calls.recording"] == 2 and first.more
    assert [(await row(engine, c["id"]))["recording_url"] is None for c in calls] == [True, True, False]
    last = await calls_rpc.ApplyRetention(request(business_id, batch=2, recordings_before=cutoff),
                                          metadata=as_retention_job(stack, business_id))
    assert counts(last)["calls.recording"] == 1 and not last.more


async def test_only_the_accounts_service_may_apply_retention(stack, calls_rpc):
    business_id = str(uuid.uuid4())
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await calls_rpc.ApplyRetention(request(business_id, recordings_before=utcnow()),
                                       metadata=as_retention_job(stack, business_id, "sdr"))
    error = from_rpc_error(refused.value)
    assert error.code == "unauthorized" and "sdr may not call ApplyRetention" in error.message
