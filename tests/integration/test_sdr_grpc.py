"""The lead API other services use over gRPC (find by phone, upsert a contact, record an interaction)
and the voicemail hook, against the running sdr service and NATS."""
import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from core.grpc_errors import from_rpc_error
from core.tenant import Tenant
from switchboard.v1 import sdr_pb2, sdr_pb2_grpc
from tests.nats_admin import admin_connection
from tests.tenants import as_business, signed
from tests.waiting import wait_until


@pytest.fixture
async def sdr(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('sdr').port}") as channel:
        yield sdr_pb2_grpc.SdrStub(channel)


async def test_upsert_is_idempotent_even_when_concurrent(sdr, account, stack):
    md = as_business(stack, account, "sdr")
    request = sdr_pb2.UpsertContactRequest(business_id=account["business_id"], phone="+14155550142",
                                           source="inbound_call", agent_name="Front desk")
    replies = await asyncio.gather(*(sdr.UpsertContact(request, metadata=md) for _ in range(4)))
    assert sorted(r.created for r in replies) == [False, False, False, True]
    assert len({r.lead.id for r in replies}) == 1
    again = await sdr.UpsertContact(sdr_pb2.UpsertContactRequest(
        business_id=account["business_id"], phone="+14155550142", source="sms", name="Dana", email="d@example.com"),
        metadata=md)
    assert again.created is False and again.lead.name == "Dana" and again.lead.email == "d@example.com"
    assert again.lead.source == "inbound_call" and again.lead.agent_name == "Front desk"  # first source kept
    found = await sdr.FindLeadByPhone(sdr_pb2.FindLeadByPhoneRequest(business_id=account["business_id"],
                                                                      phone="+14155550142"), metadata=md)
    assert found.lead.id == again.lead.id
    none = await sdr.FindLeadByPhone(sdr_pb2.FindLeadByPhoneRequest(business_id=account["business_id"],
                                                                    phone="+14155550143"), metadata=md)
    assert not none.HasField("lead")  # an ordinary answer, not a NOT_FOUND status


async def test_interactions_are_recorded_once_and_rescore_the_lead(sdr, account, stack):
    md = as_business(stack, account, "sdr")
    lead = (await sdr.UpsertContact(sdr_pb2.UpsertContactRequest(
        business_id=account["business_id"], phone="+14155550144", source="inbound_call"), metadata=md)).lead
    assert lead.score == 45  # inbound_call 25 + today 15 + phone 5
    call = sdr_pb2.RecordInteractionRequest(lead_id=lead.id, channel="call", direction="inbound",
                                            reference="call-1", intent="Wants a quote for a water heater")
    first = await sdr.RecordInteraction(call, metadata=md)
    assert first.score == 45 + 8 + 20
    repeat = await sdr.RecordInteraction(call, metadata=md)
    assert repeat.score == first.score and repeat.updated_at == first.updated_at
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await sdr.RecordInteraction(sdr_pb2.RecordInteractionRequest(lead_id=lead.id, channel="fax",
                                                                     direction="inbound", reference="x"), metadata=md)
    assert from_rpc_error(err.value).code == "invalid_request"


async def test_another_business_cannot_use_the_internal_api(sdr, account, api, stack):
    other = await api.signup()
    md = signed(stack, Tenant(account_id="x", business_ids=(other["business_id"],)), "calls", to="sdr")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await sdr.UpsertContact(sdr_pb2.UpsertContactRequest(business_id=account["business_id"], phone="+14155550145",
                                                             source="sms"), metadata=md)
    assert from_rpc_error(err.value).code == "forbidden"
    lead = (await sdr.UpsertContact(sdr_pb2.UpsertContactRequest(
        business_id=account["business_id"], phone="+14155550145", source="sms"), metadata=as_business(stack, account, "sdr"))).lead
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await sdr.RecordInteraction(sdr_pb2.RecordInteractionRequest(lead_id=lead.id, channel="sms",
                                                                     direction="outbound", reference="m"), metadata=md)
    assert from_rpc_error(err.value).code == "not_found"


async def test_voicemails_are_unhandled_until_called_back(sdr, account, api, stack):
    md = as_business(stack, account, "sdr")
    lead = (await sdr.UpsertContact(sdr_pb2.UpsertContactRequest(
        business_id=account["business_id"], phone="+14155550146", source="inbound_call"), metadata=md)).lead
    received = datetime.now(UTC) - timedelta(minutes=5)
    event = {"event_id": str(uuid.uuid4()), "type": "voicemail.received", "business_id": account["business_id"],
             "occurred_at": received.isoformat(), "data": {"call_id": "call-vm", "from_number": "+14155550146",
                                                           "transcript": "Please call me back"}}
    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()
        for _ in range(2):  # a redelivered event is applied once
            await js.publish("events.voicemail.received", json.dumps(event).encode(),
                             headers={"Nats-Msg-Id": str(uuid.uuid4())})
    finally:
        await nc.close()

    async def unhandled():
        status, audit, _ = await api.request("GET", "/api/v1/leads/audit", key=account["key"])
        return audit["voicemails_unhandled"]

    await wait_until(unhandled, "the voicemail to reach the audit", lambda g: g["count"], timeout=5)
    group = await unhandled()
    assert group["count"] == 1 and group["voicemails"][0]["transcript"] == "Please call me back"
    assert group["voicemails"][0]["from_number"] == "+14155550146"
    await sdr.RecordInteraction(sdr_pb2.RecordInteractionRequest(lead_id=lead.id, channel="call",
                                                                 direction="outbound", reference="callback"),
                                metadata=md)
    assert (await unhandled())["count"] == 0
