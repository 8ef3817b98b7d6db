"""ExportPage of each service that holds a business's records (core.export_page, services/*/export_pages.py, issue
56), over real gRPC as the accounts service's export job asks it, against the running stack: for every kind, the
records of two businesses are made (through the public API where practical); pages of a small limit walk every record
of the business once, newest first, and none of the other's; each record is what the public API shows for it; an
erased call shows as the API shows it; an unknown kind and a bad limit answer validation_error; no process but the
accounts service may ask; a subscription's signing secret never appears."""
import json
import uuid
from datetime import timedelta

import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import utcnow
from core.tenant import acting_for
from services.calls import schema as calls_schema
from services.calls import store as calls_store
from services.calls.erasure import ERASED_NUMBER
from switchboard.v1 import (
    agents_pb2_grpc,
    calls_pb2_grpc,
    common_pb2,
    evals_pb2_grpc,
    messaging_pb2_grpc,
    sdr_pb2_grpc,
    webhooks_pb2_grpc,
)
from tests.api import new_account
from tests.calling import place, settled
from tests.tenants import signed

STUBS = {"agents": agents_pb2_grpc.AgentsStub, "calls": calls_pb2_grpc.CallsStub, "sdr": sdr_pb2_grpc.SdrStub,
         "messaging": messaging_pb2_grpc.MessagingStub, "evals": evals_pb2_grpc.EvalsStub,
         "webhooks": webhooks_pb2_grpc.WebhooksStub}


@pytest.fixture
async def rpc(stack):
    """A stub of each service that answers ExportPage."""
    channels = {name: grpc.aio.insecure_channel(f"127.0.0.1:{stack.process(name).port}") for name in STUBS}
    yield {name: STUBS[name](channel) for name, channel in channels.items()}
    for channel in channels.values():
        await channel.close()


@pytest.fixture
async def other(api):
    made = await new_account(api)
    yield made
    await made["dashboard"].close()


def as_export_job(stack, business_id: str, to: str, process: str = "accounts") -> tuple:
    return signed(stack, acting_for(business_id, "export"), process, to=to)


def ask(business_id: str, kind: str, after: str = "", limit: int = 2) -> common_pb2.ExportPageRequest:
    return common_pb2.ExportPageRequest(business_id=business_id, export_id=str(uuid.uuid4()), kind=kind, after=after,
                                        limit=limit)


async def walk(rpc, stack, service: str, business_id: str, kind: str, limit: int = 2) -> list[dict]:
    """Every record of the kind, page after page of `limit`, as the export job reads them."""
    records: list[dict] = []
    after = ""
    while True:
        reply = await rpc[service].ExportPage(ask(business_id, kind, after, limit),
                                              metadata=as_export_job(stack, business_id, service))
        assert len(reply.lines) <= limit
        assert all("\n" not in line and ", " not in line[:2] for line in reply.lines)  # one compact document a line
        records += [json.loads(line) for line in reply.lines]
        if not reply.next_after:
            return records
        assert reply.next_after != after
        after = reply.next_after


async def refusal(rpc, stack, service: str, request: common_pb2.ExportPageRequest, process: str = "accounts"):
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await rpc[service].ExportPage(request, metadata=as_export_job(stack, request.business_id, service, process))
    return from_rpc_error(refused.value)


async def api_get(api, key: str, path: str, **params) -> dict:
    status, body, _ = await api.request("GET", path, key=key, params=params)
    assert status == 200, (path, body)
    return body


# -- calls ---------------------------------------------------------------------------------------------------------

async def insert_calls(engine, business_id: str, agent_id: str, count: int, *, same_time: bool = False,
                       erased: bool = False) -> list[str]:
    """Calls recorded as the calls service records them (several at one instant, to cross page breaks on ties)."""
    now, ids = utcnow(), []
    async with engine.begin() as conn:
        for n in range(count):
            at = now if same_time else now - timedelta(minutes=n + 1)
            call_id = str(uuid.uuid4())
            values = dict(id=call_id, business_id=business_id, agent_id=agent_id, direction="outbound",
                          status="completed", to_number=f"+1415555{n:04d}", from_number="+14155550100",
                          max_duration=600, compliance="skip", variables={"name": "Pat"},
                          transcript="AI: Hello\nUser: Hi", summary="Asked about prices", name="Pat Doe",
                          recording_url="https://recordings.example/one.wav", created_at=at, updated_at=at)
            if erased:
                values.update(to_number=ERASED_NUMBER, variables={}, transcript=None, summary=None, name=None,
                              recording_url=None, erased_at=at)
            await calls_store.insert_call(conn, **values)
            ids.append(call_id)
    return ids


async def newest_first(engine, table: sa.Table, business_id: str) -> list[str]:
    async with engine.connect() as conn:
        found = await conn.execute(sa.select(table.c.id).where(table.c.business_id == business_id)
                                   .order_by(table.c.created_at.desc(), table.c.id.desc()))
        return [str(row.id) for row in found]


async def test_calls_are_exported_page_by_page_as_the_api_shows_them(api, stack, engine, rpc, account,
                                                                     calling_agent, other):
    key, business_id = account["key"], account["business_id"]
    status, placed, _ = await place(api, key, agent_id=calling_agent["id"], to="+14155550177", name="Sam Lee")
    assert status == 201, placed
    await settled(api, key, placed["id"])
    ours = [*await insert_calls(engine, business_id, calling_agent["id"], 3, same_time=True),
            *await insert_calls(engine, business_id, calling_agent["id"], 2),
            *await insert_calls(engine, business_id, calling_agent["id"], 1, erased=True), placed["id"]]
    theirs = await insert_calls(engine, other["business_id"], str(uuid.uuid4()), 3)

    exported = await walk(rpc, stack, "calls", business_id, "calls")
    assert [c["id"] for c in exported] == await newest_first(engine, calls_schema.calls, business_id)
    assert sorted(c["id"] for c in exported) == sorted(ours)
    shown = {t["call_id"]: t["transcript"] for t in
             (await api_get(api, key, "/api/v1/transcripts", limit="50"))["transcripts"]}
    for record in exported:  # each as GET /api/v1/calls?id= shows it, with its transcript as /transcripts shows it
        transcript = record.pop("transcript")
        assert record == await api_get(api, key, "/api/v1/calls", id=record["id"])
        if record["id"] != ours[5]:
            assert transcript == shown[record["id"]] and "Agent:" in transcript
        else:  # erased: as the API shows it, nothing of the person
            assert (transcript, record["summary"], record["recording_url"], record["name"]) == (None, None, None, None)
    live = next(c for c in exported if c["id"] == placed["id"])
    assert live["summary"] and live["recording_url"] and live["tool_calls"] is not None
    erased = next(c for c in exported if c["id"] == ours[5])
    assert "Pat" not in json.dumps(erased)
    assert [c["id"] for c in await walk(rpc, stack, "calls", other["business_id"], "calls", limit=5000)] == (
        await newest_first(engine, calls_schema.calls, other["business_id"]))
    assert not set(theirs) & {c["id"] for c in exported}


async def test_a_bad_request_answers_validation_error_and_only_the_accounts_service_may_ask(stack, rpc, account):
    business_id = account["business_id"]
    for service, kind in (("calls", "calls"), ("sdr", "leads"), ("agents", "agents"), ("messaging", "texts"),
                          ("evals", "evals"), ("webhooks", "webhook_subscriptions")):
        unknown = await refusal(rpc, stack, service, ask(business_id, "invoices"))
        assert unknown.code == "validation_error" and "kind must be one of" in unknown.message
        for limit in (0, -1, 5001):
            bad = await refusal(rpc, stack, service, ask(business_id, kind, limit=limit))
            assert bad.code == "validation_error" and "limit must be between 1 and 5000" in bad.message
        stranger = await refusal(rpc, stack, service, ask(business_id, kind), process="gateway")
        assert stranger.code == "unauthorized"
    someone_else = common_pb2.ExportPageRequest(business_id=str(uuid.uuid4()), kind="calls", limit=10)
    with pytest.raises(grpc.aio.AioRpcError) as refused:  # a job acting for one business asks about another
        await rpc["calls"].ExportPage(someone_else, metadata=as_export_job(stack, business_id, "calls"))
    assert from_rpc_error(refused.value).code == "not_found"
