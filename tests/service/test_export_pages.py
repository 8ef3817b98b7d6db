"""ExportPage of each service that holds a business's records (core.export_page, services/*/export_pages.py, issue
56), over real gRPC as the accounts service's export job asks it, against the running stack: for every kind, the
records of two businesses are made (through the public API where practical); pages of a small limit walk every record
of the business once, newest first, and none of the other's; each record is what the public API shows for it; an
erased call shows as the API shows it; an unknown kind and a bad limit answer validation_error; no process but the
accounts service may ask; a subscription's signing secret never appears."""
import json
import uuid
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import grpc
import pytest
import sqlalchemy as sa

from core.grpc_errors import from_rpc_error
from core.ids import utcnow
from core.tenant import acting_for
from services.calls import schema as calls_schema
from services.calls import store as calls_store
from services.calls.erasure import ERASED_NUMBER
from services.messaging import schema as messaging_schema
from services.sdr.schema import activity as sdr_activity
from switchboard.v1 import (
    agents_pb2_grpc,
    calls_pb2_grpc,
    common_pb2,
    evals_pb2_grpc,
    messaging_pb2_grpc,
    sdr_pb2_grpc,
    webhooks_pb2_grpc,
)
from tests.agents import RULES, asked, create_agent, create_eval
from tests.api import new_account
from tests.calling import agent_with_number, place, settled
from tests.runs import create as create_run
from tests.runs import run_of, touch
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


# -- webhooks ------------------------------------------------------------------------------------------------------

async def subscribe(api, account, url: str) -> str:
    """A subscription made through the API; its signing secret (shown once)."""
    status, body, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                        json={"webhook_url": url, "events": ["lead.created"]})
    assert status == 201, body
    return body["webhook_secret"]


async def test_webhook_subscriptions_are_exported_without_their_secrets(api, stack, rpc, account, other):
    secrets = [await subscribe(api, account, f"http://127.0.0.1:9/hook/{n}") for n in range(3)]
    theirs = await subscribe(api, other, "http://127.0.0.1:9/theirs")
    exported = await walk(rpc, stack, "webhooks", account["business_id"], "webhook_subscriptions")
    shown = (await api_get(api, account["key"], "/api/v1/webhooks"))["webhooks"]
    assert sorted(exported, key=lambda s: s["id"]) == sorted(shown, key=lambda s: s["id"]) and len(exported) == 3
    assert [s["created_at"] for s in exported] == sorted((s["created_at"] for s in exported), reverse=True)
    assert not {s["url"] for s in exported} & {"http://127.0.0.1:9/theirs"}
    dumped = json.dumps(exported)
    for secret in (*secrets, theirs):
        assert secret and secret not in dumped and secret.removeprefix("whsec_")[:12] not in dumped
    assert all(s["webhook_secret_masked"].startswith("whsec_...") for s in exported)


# -- sdr -----------------------------------------------------------------------------------------------------------

ZONE = "America/Chicago"
EVERY_DAY = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}


async def made(api, account, method: str, path: str, **kwargs) -> dict:
    status, body, _ = await api.request(method, path, key=account["key"], **kwargs)
    assert status in (200, 201), (method, path, body)
    return body


async def sdr_records(api, account, agent, leads: int) -> list[str]:
    """Leads, runs of one touch each and bookings of the account's business, made through the API; the leads' ids."""
    business_id = account["business_id"]
    ids = [(await made(api, account, "POST", "/api/v1/leads",
                       json={"business_id": business_id, "name": f"Lead {n}", "phone": f"+1415555{n + 300:04d}"}))["id"]
           for n in range(leads)]
    for n in range(leads):
        status, run, _ = await create_run(api, account["key"], run_of(
            account, agent, touch(f"t{n}", f"+1415555{n + 400:04d}", seconds=86_400),
            touch(f"u{n}", f"+1415555{n + 500:04d}", seconds=86_400 + 60)))
        assert status == 201, run
    await made(api, account, "PATCH", "/api/v1/workspaces", json={"id": business_id, "timezone": ZONE})
    await made(api, account, "PUT", "/api/v1/availability", json={"weekly_hours": EVERY_DAY, "slot_minutes": 60})
    day = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=2)
    for n in range(leads):
        starts = datetime(day.year, day.month, day.day, 10 + n, tzinfo=ZoneInfo(ZONE)).isoformat()
        await made(api, account, "POST", "/api/v1/bookings",
                   json={"starts_at": starts, "name": f"Lead {n}", "phone_number": f"+1415555{n + 300:04d}"})
    return ids


async def activity_entries(engine, business_id: str, lead_ids: list[str]) -> None:
    """The pipeline's activity entries on the leads, as the pipeline writes them (two at one instant)."""
    now = utcnow()
    async with engine.begin() as conn:
        for n, lead_id in enumerate(lead_ids):
            for m, at in enumerate((now, now - timedelta(minutes=n + 1))):
                await conn.execute(sdr_activity.insert().values(
                    id=str(uuid.uuid4()), business_id=business_id, lead_id=lead_id, action="skip", status="done",
                    detail=f"skipped {m}", origin="api", created_at=at, updated_at=at))


async def test_sdr_records_are_exported_page_by_page_as_the_api_shows_them(api, stack, engine, rpc, account,
                                                                           calling_agent, other):
    theirs_agent = await agent_with_number(api, other)
    try:
        ours = await sdr_records(api, account, calling_agent, 3)
        theirs = await sdr_records(api, other, theirs_agent, 1)
    finally:
        await api.request("DELETE", "/api/v1/phone-numbers", key=other["key"],
                          params={"phone_number": theirs_agent["phone_number"]})
    await activity_entries(engine, account["business_id"], ours)
    await activity_entries(engine, other["business_id"], theirs)
    business_id = account["business_id"]
    shown = {
        "leads": (await made(api, account, "GET", "/api/v1/leads", params={"limit": "100"}))["leads"],
        "lead_audit": (await made(api, account, "GET", "/api/sdr/activity",
                                  params={"businessId": business_id, "limit": "50"}))["activity"],
        "runs": (await made(api, account, "GET", "/api/v1/communication-runs", params={"limit": "100"}))["runs"],
        "touches": (await made(api, account, "GET", "/api/v1/communication-jobs", params={"limit": "100"}))["jobs"],
        "bookings": (await made(api, account, "GET", "/api/v1/bookings", params={"limit": "100"}))["bookings"],
    }
    sizes = {"leads": 3, "lead_audit": 6, "runs": 3, "touches": 6, "bookings": 3}
    for kind, expected in shown.items():
        exported = await walk(rpc, stack, "sdr", business_id, kind)
        assert len(exported) == sizes[kind], kind
        assert exported == expected, kind  # every record once, in the API's order, as the API shows it
        assert len({r["id"] for r in exported}) == sizes[kind]
        their_records = await walk(rpc, stack, "sdr", other["business_id"], kind, limit=5000)
        assert len(their_records) == sizes[kind] // 3, kind
        assert not {r["id"] for r in their_records} & {r["id"] for r in exported}
    assert {a["lead_id"] for a in await walk(rpc, stack, "sdr", business_id, "lead_audit")} == set(ours)


# -- messaging -----------------------------------------------------------------------------------------------------

async def insert_texts(engine, business_id: str, count: int) -> list[str]:
    """Inbound texts of one thread, recorded as the provider's webhook records them (two at one instant)."""
    now, conversation_id, ids = utcnow(), str(uuid.uuid4()), []
    async with engine.begin() as conn:
        await conn.execute(messaging_schema.conversations.insert().values(
            id=conversation_id, business_id=business_id, business_number="+14155550100",
            contact_number="+14155550199", last_message_at=now, created_at=now))
        for n in range(count):
            at = now if n < 2 else now - timedelta(minutes=n)
            ids.append(str(uuid.uuid4()))
            await conn.execute(messaging_schema.messages.insert().values(
                id=ids[-1], conversation_id=conversation_id, business_id=business_id, direction="inbound",
                from_number="+14155550199", to_number="+14155550100", body=f"Text {n}", status="received",
                provider_sid=f"SM{uuid.uuid4().hex}", created_at=at, updated_at=at))
    return ids


async def test_texts_and_emails_are_exported_page_by_page_as_the_api_shows_them(api, stack, engine, rpc, account,
                                                                               other):
    business_id = account["business_id"]
    ours = await insert_texts(engine, business_id, 5)
    theirs = await insert_texts(engine, other["business_id"], 2)
    texts = await walk(rpc, stack, "messaging", business_id, "texts")
    shown = await made(api, account, "GET", "/api/v1/sms/messages", params={"limit": "100"})
    assert texts == shown["messages"] and sorted(t["id"] for t in texts) == sorted(ours)
    assert [t["id"] for t in await walk(rpc, stack, "messaging", other["business_id"], "texts")] == (
        [t["id"] for t in (await made(api, other, "GET", "/api/v1/sms/messages"))["messages"]])
    assert not set(theirs) & {t["id"] for t in texts}

    for n in range(3):
        await made(api, account, "POST", "/api/v1/emails",
                   json={"to": f"pat{n}@example.com", "subject": f"Quote {n}", "body": "Hello."})
    await made(api, other, "POST", "/api/v1/emails", json={"to": "sam@example.com", "subject": "Theirs", "body": "Hi."})
    emails = await walk(rpc, stack, "messaging", business_id, "emails")
    shown = (await made(api, account, "GET", "/api/v1/emails", params={"limit": "100"}))["emails"]
    assert [e["id"] for e in emails] == [e["id"] for e in shown] and len(emails) == 3
    moving = ("status", "attempts", "last_error", "message_id", "updated_at", "sent_at", "next_attempt_at")
    for exported, listed in zip(emails, shown, strict=True):  # delivery may move on between the two reads
        assert {k: v for k, v in exported.items() if k not in moving} == (
            {k: v for k, v in listed.items() if k not in moving})
    assert [e["subject"] for e in emails] == ["Quote 2", "Quote 1", "Quote 0"]
    assert [e["subject"] for e in await walk(rpc, stack, "messaging", other["business_id"], "emails")] == ["Theirs"]


# -- agents and evals ----------------------------------------------------------------------------------------------

async def test_agents_versions_and_numbers_are_exported_page_by_page_as_the_api_shows_them(api, stack, rpc, account,
                                                                                         calling_agent, other):
    business_id = account["business_id"]
    made_agents = [await create_agent(api, account, name=f"Desk {n}") for n in range(2)]
    for n in range(2):  # versions 2 and 3 of the first
        await made(api, account, "PATCH", "/api/v1/agents", json={"id": made_agents[0]["id"], "first_message": f"Hi {n}"})
    theirs = await create_agent(api, other)

    agents = await walk(rpc, stack, "agents", business_id, "agents")
    listed = (await made(api, account, "GET", "/api/v1/agents", params={"limit": "100"}))["agents"]
    assert agents == listed and len(agents) == 3
    assert any(a["phone_number"] == calling_agent["phone_number"] for a in agents)

    expected = []  # each agent's versions newest first, agent by agent (newest agent first), as the API shows one
    for agent in listed:
        versions = (await made(api, account, "GET", "/api/v1/agents/versions", params={"agent_id": agent["id"]}))
        for v in versions["versions"]:
            shown = await made(api, account, "GET", "/api/v1/agents/versions",
                               params={"agent_id": agent["id"], "version": str(v["version"])})
            expected.append({"agent_id": shown["agent_id"], **shown["version"]})
    versions = await walk(rpc, stack, "agents", business_id, "agent_versions")
    assert versions == expected and len(versions) == 5 and versions[0]["config_snapshot"]
    assert [v["version"] for v in versions if v["agent_id"] == made_agents[0]["id"]] == [3, 2, 1]

    numbers = await walk(rpc, stack, "agents", business_id, "phone_numbers", limit=1)
    shown = (await made(api, account, "GET", "/api/v1/phone-numbers"))["phone_numbers"]
    assert numbers == shown and [n["phone_number"] for n in numbers] == [calling_agent["phone_number"]]

    their_agents = await walk(rpc, stack, "agents", other["business_id"], "agents")
    assert [a["id"] for a in their_agents] == [theirs["id"]]
    assert {v["agent_id"] for v in await walk(rpc, stack, "agents", other["business_id"], "agent_versions")} == (
        {theirs["id"]})
    assert await walk(rpc, stack, "agents", other["business_id"], "phone_numbers") == []
    bad = await refusal(rpc, stack, "agents", ask(business_id, "agent_versions", after="not-a-cursor"))
    assert bad.code == "validation_error" and "next_after" in bad.message


async def test_evals_and_their_runs_are_exported_page_by_page_as_the_api_shows_them(api, stack, rpc, account, other):
    business_id = account["business_id"]
    agent = await create_agent(api, account, system_prompt=RULES)
    scenarios = []
    for n in range(3):
        status, scenario = await create_eval(api, account, agent["id"], name=f"hours.{n}",
                                             messages=asked({"type": "regex", "content": "(?i)saturday"}))
        assert status == 201, scenario
        scenarios.append(scenario)
    their_agent = await create_agent(api, other, system_prompt=RULES)
    status, theirs = await create_eval(api, other, their_agent["id"])
    assert status == 201, theirs
    runs = [await made(api, account, "POST", "/api/v1/evals/run", json={"eval_id": s["id"]}) for s in scenarios[:2]]
    await made(api, other, "POST", "/api/v1/evals/run", json={"eval_id": theirs["id"]})

    evals = await walk(rpc, stack, "evals", business_id, "evals")
    listed = (await made(api, account, "GET", "/api/v1/evals", params={"limit": "100"}))["evals"]
    assert [e["id"] for e in evals] == [e["id"] for e in listed] and len(evals) == 3
    for scenario in evals:  # with its turns, as GET /api/v1/evals?id= shows it
        assert scenario == await made(api, account, "GET", "/api/v1/evals", params={"id": scenario["id"]})
    assert [e["id"] for e in await walk(rpc, stack, "evals", other["business_id"], "evals")] == [theirs["id"]]

    exported = await walk(rpc, stack, "evals", business_id, "eval_runs", limit=1)
    assert sorted(r["run_id"] for r in exported) == sorted(r["run_id"] for r in runs)
    assert [r["created_at"] for r in exported] == sorted((r["created_at"] for r in exported), reverse=True)
    for run in exported:
        assert run == await made(api, account, "GET", "/api/v1/evals/run", params={"run_id": run["run_id"]})
    their_runs = await walk(rpc, stack, "evals", other["business_id"], "eval_runs")
    assert [r["eval_id"] for r in their_runs] == [theirs["id"]]
