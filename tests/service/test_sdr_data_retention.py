"""sdr's ApplyRetention over real gRPC, called as the accounts service's retention job (the only process it answers,
core.registry.RPC_CALLERS), against the running stack: voicemails' transcripts and recording links past their
cutoffs are deleted (each kind by its own cutoff: an unset one keeps its kind), the words of text touches that ended
before the message-body cutoff too, while newer ones, a touch still waiting and another business's records stay; a
small batch says `more`; the same request again changes nothing."""
import uuid
from datetime import timedelta

import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import new_id, utcnow
from core.messages import set_timestamp
from core.tenant import acting_for
from services.sdr.schema import jobs, runs, voicemails
from switchboard.v1 import common_pb2, sdr_pb2_grpc
from tests.tenants import signed

# past the test's cutoff, not the default retention (365 days) the stack's own job applies to the business
OLD, CUTOFF = timedelta(days=60), timedelta(days=30)
TRANSCRIPT, RECORDING, BODY = "Hi, it's Ann, my gate code is 1234", "https://r.example/1", "Your quote is ready, Ann"


@pytest.fixture
async def sdr(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('sdr').port}") as channel:
        yield sdr_pb2_grpc.SdrStub(channel)


async def apply(sdr, stack, business_id: str, batch: int = 100, process: str = "accounts",
                acting_for_business: str | None = None, **cutoffs: timedelta) -> common_pb2.RetentionReport:
    request = common_pb2.RetentionRequest(business_id=business_id, run_id="rr_test", batch=batch)
    for name, age in cutoffs.items():
        set_timestamp(request, name, utcnow() - age)
    return await sdr.ApplyRetention(request, metadata=signed(
        stack, acting_for(acting_for_business or business_id, "retention"), process, to="sdr"), timeout=30)


def counts(report: common_pb2.RetentionReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


async def voicemail(engine, business_id: str, age: timedelta) -> str:
    voicemail_id = new_id()
    async with engine.begin() as conn:
        await conn.execute(voicemails.insert().values(
            id=voicemail_id, business_id=business_id, call_id=new_id(), from_number="+14155550177",
            transcript=TRANSCRIPT, recording_url=RECORDING, received_at=utcnow() - age))
    return voicemail_id


async def text_touches(engine, business_id: str, *ended: timedelta | None) -> list[str]:
    """A completed run's text touches, each ended that long ago (None: still waiting, its run paused): their ids."""
    run_id, now, ids = new_id(), utcnow(), []
    async with engine.begin() as conn:
        await conn.execute(runs.insert().values(
            id=run_id, business_id=business_id, account_id=new_id(), external_ref=new_id(), idempotency_key=new_id(),
            request_hash="h", status="paused" if None in ended else "completed", agent_id=new_id(), retry={},
            touches=len(ended), created_at=now - OLD, updated_at=now))
        for index, age in enumerate(ended):
            ids.append(new_id())
            await conn.execute(jobs.insert().values(
                id=ids[-1], run_id=run_id, business_id=business_id, touch_index=index, touch_id=f"t{index}",
                channel="sms", phone="+14155550177", agent_id=new_id(), context={"body": BODY, "lead_ref": "L-7"},
                scheduled_at=now - OLD, due_at=now + timedelta(days=10), status="paused" if age is None else
                "succeeded", created_at=now - OLD, updated_at=now, ended_at=None if age is None else now - age))
    return ids


async def rows(engine, table: sa.Table, ids: list[str]) -> dict[str, sa.Row]:
    async with engine.connect() as conn:
        return {str(r.id): r for r in await conn.execute(sa.select(table).where(table.c.id.in_(ids)))}


async def test_what_is_past_each_cutoff_is_deleted_and_nothing_else(sdr, stack, account, engine):
    business_id, elsewhere = account["business_id"], str(uuid.uuid4())
    old_mail, new_mail = await voicemail(engine, business_id, OLD), await voicemail(engine, business_id, timedelta())
    their_mail = await voicemail(engine, elsewhere, OLD)
    old_touch, new_touch = await text_touches(engine, business_id, OLD, timedelta(minutes=5))
    [waiting] = await text_touches(engine, business_id, None)
    [their_touch] = await text_touches(engine, elsewhere, OLD)

    transcripts_only = await apply(sdr, stack, business_id, transcripts_before=CUTOFF)
    assert counts(transcripts_only) == {("sdr.voicemail_transcript", "deleted"): 1,
                                        ("sdr.voicemail_recording_link", "deleted"): 0,
                                        ("sdr.run_touch_body", "deleted"): 0} and not transcripts_only.more
    mails = await rows(engine, voicemails, [old_mail, new_mail, their_mail])
    assert (mails[old_mail].transcript, mails[old_mail].recording_url) == (None, RECORDING)

    report = await apply(sdr, stack, business_id, transcripts_before=CUTOFF, recordings_before=CUTOFF,
                         message_bodies_before=CUTOFF)
    assert counts(report) == {("sdr.voicemail_transcript", "deleted"): 0,
                              ("sdr.voicemail_recording_link", "deleted"): 1,
                              ("sdr.run_touch_body", "deleted"): 1} and not report.more
    mails = await rows(engine, voicemails, [old_mail, new_mail, their_mail])
    assert (mails[old_mail].transcript, mails[old_mail].recording_url) == (None, None)
    assert mails[old_mail].from_number == "+14155550177"  # who called and when stay
    for kept in (new_mail, their_mail):
        assert (mails[kept].transcript, mails[kept].recording_url) == (TRANSCRIPT, RECORDING)
    touches = await rows(engine, jobs, [old_touch, new_touch, waiting, their_touch])
    assert touches[old_touch].context == {"lead_ref": "L-7"} and touches[old_touch].status == "succeeded"
    for kept in (new_touch, waiting, their_touch):
        assert touches[kept].context["body"] == BODY

    again = await apply(sdr, stack, business_id, transcripts_before=CUTOFF, recordings_before=CUTOFF,
                        message_bodies_before=CUTOFF)
    assert set(counts(again).values()) == {0} and not again.more


async def test_a_small_batch_says_more(sdr, stack, account, engine):
    business_id = account["business_id"]
    for n in range(3):
        await voicemail(engine, business_id, OLD + timedelta(minutes=n))
    first = await apply(sdr, stack, business_id, batch=2, transcripts_before=CUTOFF)
    second = await apply(sdr, stack, business_id, batch=2, transcripts_before=CUTOFF)
    assert (counts(first)[("sdr.voicemail_transcript", "deleted")], first.more) == (2, True)
    assert (counts(second)[("sdr.voicemail_transcript", "deleted")], second.more) == (1, False)


async def test_only_the_accounts_service_may_ask_and_only_for_the_business_it_acts_for(sdr, stack, account):
    business_id = account["business_id"]
    for process in ("gateway", "calls"):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await apply(sdr, stack, business_id, process=process, transcripts_before=CUTOFF)
        assert from_rpc_error(refused.value).code in ("unauthorized", "forbidden")
    with pytest.raises(grpc.aio.AioRpcError) as another:
        await apply(sdr, stack, business_id, acting_for_business=str(uuid.uuid4()), transcripts_before=CUTOFF)
    assert from_rpc_error(another.value).code == "forbidden"
