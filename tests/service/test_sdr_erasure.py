"""sdr's ErasePerson over real gRPC, called as the accounts service's privacy job (the only process it answers,
core.registry.RPC_CALLERS), against the running stack: a person's leads (by phone, then by email), their
interactions, activity entries, voicemail and bookings are deleted, a touch planned to their number is canceled and
redacted, the outbox keeps nothing of them; the public routes show nothing of them, without errors; the same
request again erases nothing more; another business's lead with the same number is untouched."""
import json
import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.tenant import acting_for
from services.sdr.schema import attempts, jobs, outbox
from switchboard.v1 import common_pb2, sdr_pb2, sdr_pb2_grpc
from tests.api import new_account
from tests.nats_admin import admin_connection
from tests.runs import create, jobs_of, run_of, touch
from tests.tenants import as_business, signed
from tests.waiting import wait_until

PHONE = "+14155550181"  # the person's
SECOND_PHONE = "+14155550182"  # a number they booked with once, under their email
STRANGER = "+14155550183"
EMAIL = "ann.lee@example.com"
ZONE = "America/Chicago"
EVERY_DAY = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}


@pytest.fixture
async def sdr(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('sdr').port}") as channel:
        yield sdr_pb2_grpc.SdrStub(channel)


@pytest.fixture
async def other(api):
    made = await new_account(api)
    yield made
    await made["dashboard"].close()


async def call(api, account, method, path, status=200, **kwargs):
    got, body, _ = await api.request(method, path, key=account["key"], **kwargs)
    assert got == status, (method, path, body)
    return body


async def erase(sdr, stack, business_id, *, phones=(), emails=(), lead_ids=()) -> common_pb2.ErasureReport:
    """ErasePerson as the accounts service's privacy job acting for the business asks it."""
    md = signed(stack, acting_for(business_id, "accounts-privacy"), "accounts", to="sdr")
    return await sdr.ErasePerson(common_pb2.ErasureRequest(
        business_id=business_id, erasure_id=str(uuid.uuid4()), phones=list(phones), emails=list(emails),
        lead_ids=list(lead_ids), suppress=True), metadata=md)


def counts(report: common_pb2.ErasureReport) -> dict[tuple[str, str], int]:
    return {(item.what, item.action): item.count for item in report.items}


async def book(api, account, day, hour: int, phone: str, **extra) -> dict:
    starts = datetime(day.year, day.month, day.day, hour, tzinfo=ZoneInfo(ZONE)).isoformat()
    return await call(api, account, "POST", "/api/v1/bookings", status=201,
                      json={"starts_at": starts, "name": "Ann Lee", "phone_number": phone, **extra})


async def voicemail(stack, business_id: str, lead_id: str) -> None:
    event = {"event_id": str(uuid.uuid4()), "type": "voicemail.received", "business_id": business_id,
             "occurred_at": (datetime.now(UTC) - timedelta(minutes=5)).isoformat(),
             "data": {"call_id": str(uuid.uuid4()), "lead_id": lead_id, "from_number": PHONE,
                      "transcript": "Hi, it's Ann, my gate code is 1234", "recording_url": "https://r.example/1"}}
    nc = await admin_connection(stack)
    try:
        await nc.jetstream().publish("events.voicemail.received", json.dumps(event).encode(),
                                     headers={"Nats-Msg-Id": str(uuid.uuid4())})
    finally:
        await nc.close()


async def outbox_mentions(engine, business_id: str, *needles: str) -> int:
    async with engine.connect() as conn:
        return await conn.scalar(sa.select(sa.func.count()).select_from(outbox).where(
            outbox.c.business_id == business_id,
            sa.or_(*(sa.func.strpos(sa.cast(outbox.c.data, sa.Text), n) > 0 for n in needles)))) or 0


async def test_a_person_is_erased_by_phone_then_by_email(sdr, stack, api, account, other, calling_agent, engine):
    business_id = account["business_id"]
    as_calls = as_business(stack, account, "sdr")
    lead = await call(api, account, "POST", "/api/v1/leads", status=201,
                      json={"business_id": business_id, "name": "Ann Lee", "phone": PHONE, "email": EMAIL,
                            "notes": "gate code 1234"})
    form = await call(api, account, "POST", "/api/v1/leads", status=201,  # a web form: her email alone
                      json={"business_id": business_id, "first_name": "Ann", "email": EMAIL.upper(),
                            "source": "web_form"})
    bystander = await call(api, account, "POST", "/api/v1/leads", status=201,
                           json={"business_id": business_id, "name": "Bo", "phone": STRANGER})
    theirs = await call(api, other, "POST", "/api/v1/leads", status=201, json={"business_id": other["business_id"], "name": "Ann L", "phone": PHONE})

    call_id = str(uuid.uuid4())
    await sdr.RecordInteraction(sdr_pb2.RecordInteractionRequest(
        lead_id=lead["id"], channel="call", direction="inbound", reference=call_id, intent="a quote"), metadata=as_calls)
    await sdr.RecordCallerLead(sdr_pb2.RecordCallerLeadRequest(
        business_id=business_id, phone=PHONE, call_id=call_id, direction="inbound", lead_id=lead["id"],
        fields=sdr_pb2.LeadFields(notes="prefers mornings")), metadata=as_calls)
    await voicemail(stack, business_id, lead["id"])

    async def unhandled() -> dict:
        return (await call(api, account, "GET", "/api/v1/leads/audit"))["voicemails_unhandled"]
    await wait_until(unhandled, "the voicemail to reach the audit", lambda g: g["count"] == 1, timeout=10)

    await call(api, account, "PATCH", "/api/v1/workspaces", json={"id": business_id, "timezone": ZONE})
    await call(api, account, "PUT", "/api/v1/availability", json={"weekly_hours": EVERY_DAY, "slot_minutes": 60})
    day = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=2)
    booked = await book(api, account, day, 10, PHONE)
    by_email = await book(api, account, day, 12, SECOND_PHONE, email=EMAIL)
    kept = await book(api, account, day, 14, STRANGER)
    assert booked["lead_id"] == lead["id"]

    status, run, _ = await create(api, account["key"], run_of(
        account, calling_agent, touch("ann", PHONE, seconds=86_400, context={"first_message": "Hi Ann, about gate code 1234"}),
        touch("bo", STRANGER, seconds=86_400)))
    assert status == 201, run
    status, alone, _ = await create(api, account["key"], run_of(account, calling_agent,
                                                                 touch("only", PHONE, seconds=86_400)))
    assert status == 201, alone
    assert await outbox_mentions(engine, business_id, PHONE, EMAIL) > 0

    # -- by phone: the lead with her number, and everything naming it or her number ----------------------------
    report = await erase(sdr, stack, business_id, phones=["+1 415-555-0181"])
    assert list(report.lead_ids) == [lead["id"]] and call_id in report.call_ids
    got = counts(report)
    assert got[("sdr.lead", "deleted")] == 1 and got[("sdr.interaction", "deleted")] == 1
    assert got[("sdr.pipeline_activity", "deleted")] == 1 and got[("sdr.voicemail", "deleted")] == 1
    assert got[("sdr.booking", "deleted")] == 1
    assert got[("sdr.run_touch", "canceled")] == 2 and got[("sdr.run_touch", "redacted")] == 2
    assert got[("sdr.outbox", "redacted")] >= 2  # lead.created, booking.created
    assert await outbox_mentions(engine, business_id, PHONE) == 0

    assert (await call(api, account, "GET", "/api/v1/leads", status=404, params={"id": lead["id"]}))["error"]["code"] == "not_found"
    listed = await call(api, account, "GET", "/api/v1/leads", params={"limit": "100"})
    assert {row["id"] for row in listed["leads"]} == {form["id"], bystander["id"]}
    assert (await call(api, account, "GET", "/api/v1/leads", params={"phone": PHONE}))["leads"] == []
    assert (await unhandled())["count"] == 0
    await call(api, account, "GET", "/api/v1/bookings", status=404, params={"id": booked["id"]})
    shown = await call(api, account, "GET", "/api/v1/bookings")
    assert {b["id"] for b in shown["bookings"]} == {by_email["id"], kept["id"]}
    activity = await call(api, account, "GET", "/api/sdr/activity",
                          params={"businessId": business_id, "leadId": lead["id"], "limit": "50"})
    assert activity["activity"] == []
    pipeline = await call(api, account, "GET", "/api/sdr/pipeline", params={"businessId": business_id})
    assert lead["id"] not in json.dumps(pipeline) and PHONE not in json.dumps(pipeline)
    touches = {j["touch_id"]: j for j in await jobs_of(api, account["key"], run["id"])}
    assert touches["ann"]["status"] == "canceled" and PHONE not in json.dumps(touches["ann"])
    assert "1234" not in json.dumps(touches["ann"])
    assert touches["bo"]["status"] != "canceled" and STRANGER in json.dumps(touches["bo"])
    async with engine.connect() as conn:  # no number left in the run's rows, the counts as they were
        assert await conn.scalar(sa.select(sa.func.count()).select_from(jobs).where(jobs.c.phone == PHONE)) == 0
        assert await conn.scalar(sa.select(sa.func.count()).select_from(attempts).where(
            attempts.c.phone == PHONE, attempts.c.business_id == business_id)) == 0
    runs = await call(api, account, "GET", "/api/v1/communication-runs", params={"id": run["id"]})
    assert runs["status"] in ("scheduled", "running") and runs["touches"] == 2 and runs["jobs"]["canceled"] == 1
    ended = await call(api, account, "GET", "/api/v1/communication-runs", params={"id": alone["id"]})
    assert ended["status"] == "completed" and ended["jobs"]["canceled"] == 1  # its last touch was hers

    # the other business's lead with her number, and the business's other people, are untouched
    assert (await call(api, other, "GET", "/api/v1/leads", params={"id": theirs["id"]}))["phone"] == PHONE
    assert (await call(api, account, "GET", "/api/v1/leads", params={"id": bystander["id"]}))["phone"] == STRANGER

    # -- the same request again: nothing more ------------------------------------------------------------------
    again = await erase(sdr, stack, business_id, phones=[PHONE])
    assert list(again.lead_ids) == [] and set(counts(again).values()) == {0}

    # -- by email (any case): the web form's lead and the booking under her email -----------------------------
    report = await erase(sdr, stack, business_id, emails=["Ann.Lee@Example.com"])
    assert list(report.lead_ids) == [form["id"]]
    got = counts(report)
    assert got[("sdr.lead", "deleted")] == 1 and got[("sdr.booking", "deleted")] == 1
    assert await outbox_mentions(engine, business_id, EMAIL) == 0
    await call(api, account, "GET", "/api/v1/leads", status=404, params={"id": form["id"]})
    shown = await call(api, account, "GET", "/api/v1/bookings")
    assert [b["id"] for b in shown["bookings"]] == [kept["id"]]
    assert set(counts(await erase(sdr, stack, business_id, emails=[EMAIL])).values()) == {0}

    # another business's lead ids name nothing here; its own erasure leaves this business alone
    foreign = await erase(sdr, stack, business_id, lead_ids=[theirs["id"]])
    assert list(foreign.lead_ids) == [] and set(counts(foreign).values()) == {0}
    assert (await call(api, other, "GET", "/api/v1/leads", params={"id": theirs["id"]}))["phone"] == PHONE
    report = await erase(sdr, stack, other["business_id"], phones=[PHONE])
    assert list(report.lead_ids) == [theirs["id"]]
    assert (await call(api, account, "GET", "/api/v1/bookings", params={"id": kept["id"]}))["id"] == kept["id"]


async def test_only_the_accounts_service_may_ask(sdr, stack, account):
    business_id = account["business_id"]
    request = common_pb2.ErasureRequest(business_id=business_id, erasure_id=str(uuid.uuid4()), phones=[PHONE])
    for process in ("calls", "gateway"):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await sdr.ErasePerson(request, metadata=signed(stack, acting_for(business_id, "x"), process, to="sdr"))
        assert err.value.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED), process
    md = signed(stack, acting_for(business_id, "accounts-privacy"), "accounts", to="sdr")
    with pytest.raises(grpc.aio.AioRpcError) as err:  # acting for one business, erasing in another
        await sdr.ErasePerson(common_pb2.ErasureRequest(business_id=str(uuid.uuid4()), phones=[PHONE]), metadata=md)
    assert from_rpc_error(err.value).code == "forbidden"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await sdr.ErasePerson(common_pb2.ErasureRequest(business_id=business_id, phones=["4155550181"]), metadata=md)
    assert from_rpc_error(err.value).code == "invalid_request"
    nobody = await sdr.ErasePerson(common_pb2.ErasureRequest(business_id=business_id, phones=[STRANGER]),
                                   metadata=md)
    assert list(nobody.lead_ids) == [] and set(counts(nobody).values()) == {0}
