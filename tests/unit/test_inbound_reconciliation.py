"""The inbound calls' reconciliation (services/calls/inbound_reconciliation.py) in the fast tier: its rule (which of
the provider's calls are missing here), and the job on the in-memory database against the voice simulator served in
this process, whose inbound calls find our server unreachable (a closed port), as while a gateway is down."""
import asyncio
import socket
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import web

from core import standing
from core.ids import new_id
from providers.voice.port import CallRef, CallReport
from providers.voice.vapi import calls as vapi_calls
from services.calls.inbound_reconciliation import InboundReconciliation, unrecorded
from services.calls.inbound_service import HELD_MESSAGE, NOT_IN_SERVICE, Inbound
from services.calls.lifecycle_service import Lifecycle
from services.calls.ports import Lead, NumberRoute
from services.calls.repository import calls_units
from tests.integration.servers import serving
from tests.memory.calls import MemoryCalls
from tests.service.fakes import CallsNeighbours, accounts_saying

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
CALLER = "+14155550199"


def report(provider_call_id: str, *, inbound: bool = True, ended_at: datetime | None = NOW - timedelta(minutes=1),
           ours: str | None = None, ended_message: str | None = None) -> CallReport:
    return CallReport(CallRef(provider_call_id, ours, inbound, "+14155550170", CALLER), "customer-ended-call",
                      "completed", ended_at=ended_at, ended_message=ended_message)


def test_the_missing_calls_are_the_ended_inbound_ones_not_recorded_that_had_time_for_their_messages():
    listed = [report("pc-recorded"), report("pc-missing"), report("pc-outbound", inbound=False, ours=new_id()),
              report("pc-just-ended", ended_at=NOW - timedelta(seconds=1)), report("pc-no-end-time", ended_at=None),
              report("pc-missing"), report(""), report("pc-held", ended_message=HELD_MESSAGE),
              report("pc-not-ours", ended_message=NOT_IN_SERVICE),
              report("pc-unreachable", ended_message="server unreachable: ClientConnectorError")]
    missing = unrecorded(listed, {"pc-recorded"}, NOW, settle=timedelta(seconds=5))
    assert [r.call.provider_call_id for r in missing] == ["pc-missing", "pc-no-end-time", "pc-unreachable"]
    assert unrecorded(listed, {"pc-recorded", "pc-missing", "pc-no-end-time", "pc-unreachable"}, NOW) == []


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/api/v1/providers/voice/messages"


@pytest.fixture
async def number(voice_client) -> dict:
    """A number of ours at the provider whose server (our gateway) does not answer."""
    return await voice_client.import_phone_number({"provider": "vapi", "server": {"url": closed_port_url()}})


@pytest.fixture
def lead(business_id) -> Lead:
    return Lead(new_id(), business_id, "Sam Lee", "Sam", 10, "new", None, 0, "api", datetime(2026, 11, 20, tzinfo=UTC))


@pytest.fixture
def job(database, voice_port, number, business_id, lead):
    others = CallsNeighbours(routes={number["number"]: NumberRoute(business_id, new_id(), "Front desk", "asst-1")},
                             leads={(business_id, CALLER): lead}, names={business_id: "Acme Plumbing"})
    units = calls_units(database, MemoryCalls)
    inbound = Inbound(units, others.ports, standings=accounts_saying({business_id: standing.TRIALING}))
    return InboundReconciliation(units, voice_port, Lifecycle(units, voice_port, inbound), interval=60,
                                 lookback=timedelta(hours=1))


async def ring(voice, number: dict) -> dict:
    async with voice.session.post(f"{voice.url}/_simulator/inbound", json={"to": number["number"], "from": CALLER},
                                  ) as r:
        assert r.status == 201, await r.text()
        return await r.json()


async def stored(database) -> list[dict]:
    async with database.read() as conn:
        return list(MemoryCalls(conn).calls.values())


async def test_a_call_whose_messages_never_reached_us_is_recorded_once_with_its_lead_and_outcome(
        job, voice, voice_port, number, database, lead):
    taken = await ring(voice, number)
    assert (taken["status"], taken["endedReason"]) == ("ended", "assistant-request-returned-error")
    assert await stored(database) == []  # the lost call

    assert await job.round() is False and len(await stored(database)) == 1
    [row] = await stored(database)
    assert (row["provider_call_id"], row["direction"], row["status"], row["lead_id"], row["from_number"]) == (
        taken["id"], "inbound", "failed", lead.id, CALLER)
    assert [e["type"] for e in database.events] == ["call.received", "call.failed"]

    assert await job.reconcile() == 0  # a later round finds it recorded
    [late] = await voice_port.inbound_calls_since(NOW - timedelta(days=1))
    await job.lifecycle.apply([late])  # its end-of-call report, arriving late
    assert len(await stored(database)) == 1 and len(database.events) == 2


async def test_a_call_recorded_by_its_messages_is_not_recorded_again(job, voice, voice_port, number, database):
    taken = await ring(voice, number)
    [report_] = await voice_port.inbound_calls_since(NOW - timedelta(days=1))
    await job.lifecycle.apply([report_])  # as the gateway's stored report would, had it been up
    assert [r["provider_call_id"] for r in await stored(database)] == [taken["id"]]
    assert await job.reconcile() == 0
    assert len(await stored(database)) == 1 and len(database.events) == 2


async def test_a_round_is_claimed_so_only_one_replica_reconciles_it(job, voice, number, database):
    await ring(voice, number)
    other = InboundReconciliation(job.uow, job.voice, job.lifecycle, interval=60, lookback=timedelta(hours=1))
    await job.round()
    await ring(voice, number)
    await other.round()  # the round is not due again for a minute: this replica leaves it
    assert len(await stored(database)) == 1


async def test_the_provider_is_read_page_after_page_back_to_the_time_asked(voice, voice_port, number, monkeypatch):
    monkeypatch.setattr(vapi_calls, "RECENT_CALLS", 2)  # a page of two calls
    rung = []
    for _ in range(5):
        rung.append((await ring(voice, number))["id"])
        await asyncio.sleep(0.005)  # each its own createdAt millisecond
    listed = await voice_port.inbound_calls_since(NOW - timedelta(days=1))
    assert sorted(r.call.provider_call_id for r in listed) == sorted(rung)
    assert {(r.call.inbound, r.call.number, r.call.caller, r.outcome) for r in listed} == {
        (True, number["number"], CALLER, "failed")}
    assert await voice_port.inbound_calls_since(datetime.now(UTC) + timedelta(seconds=1)) == []



async def test_a_call_our_answer_refused_is_left_unrecorded_even_once_its_business_takes_calls_again(
        job, voice, voice_client, number, database):
    async def held(request: web.Request) -> web.Response:  # as the calls service answers for a held business
        return web.json_response({"error": HELD_MESSAGE})

    app = web.Application()
    app.router.add_post("/messages", held)
    async with serving(app) as server:
        await voice_client.update_phone_number(number["id"], {"server": {"url": str(server.make_url("/messages"))}})
        refused = await ring(voice, number)
    assert refused["endedMessage"] == HELD_MESSAGE
    assert await job.reconcile() == 0  # the business is in good standing now (the job's standings)
    assert await stored(database) == [] and database.events == []
