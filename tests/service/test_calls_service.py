"""Placing an outbound call as a use case, on the real database and the voice simulator, with the other services
behind the calls service's ports played in memory (services.calls.ports): what is asked of compliance, a deferral
that places nothing, and a provider refusal that frees the frequency slot."""
import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.tenant import Tenant, acting_as
from services.calls import schema
from services.calls.ports import CallingProfile, Lead
from services.calls.repository import calls_units
from services.calls.service import Calls, NewCall
from switchboard.v1 import common_pb2
from tests.service.conftest import vapi_port
from tests.service.fakes import CallsNeighbours

CALLEE = "+14155550123"


@pytest.fixture
def others(calling_agent, account) -> CallsNeighbours:
    business_id = account["business_id"]
    profile = CallingProfile(calling_agent["id"], "Closer", business_id, calling_agent["provider_assistant_id"],
                             calling_agent["phone_number"], calling_agent["provider_number"], "Answer the phone.",
                             "Hello!", {})
    lead = Lead(str(uuid.uuid4()), business_id, "Sam Lee", "Sam", 10, "new", None, 0, "api",
                datetime(2026, 11, 20, tzinfo=UTC))
    return CallsNeighbours(profiles=[profile], leads={(business_id, CALLEE): lead},
                           names={business_id: "Acme Plumbing"})


@pytest.fixture
async def calls(cfg, database, others, account):
    voice = vapi_port(cfg)
    caller = Tenant(account_id=str(uuid.uuid4()), business_ids=(account["business_id"],),
                    standings=((account["business_id"], "active"),))
    with acting_as(caller):
        yield Calls(calls_units(database), voice, others.ports, recording_secret="unused-here", base_url=cfg.public_base_url)
    await voice.close()


async def rows_to(engine, business_id: str, to: str) -> list:
    async with engine.connect() as conn:
        return (await conn.execute(sa.select(schema.calls).where(schema.calls.c.business_id == business_id,
                                                                 schema.calls.c.to_number == to))).all()


async def test_an_enforced_call_asks_compliance_about_its_lead_and_is_placed(calls, others, engine, account):
    placed = await calls.create(NewCall(agent_id=next(iter(others.profiles)), to=CALLEE,
                                        compliance="enforce"))
    assert placed.provider_call_id and placed.status == "queued" and placed.variables["business_name"] == \
        "Acme Plumbing" and placed.variables["name"] == "Sam"
    [asked] = others.asked
    lead = others.leads[(account["business_id"], CALLEE)]
    assert (asked.phone, asked.lead, asked.reference, asked.actor) == (CALLEE, lead, str(placed.id), "enforced_call")
    assert str(placed.lead_id) == lead.id and others.released == []


async def test_a_deferred_call_places_nothing(calls, others, engine, account):
    others.decision = common_pb2.ComplianceDecision(id=str(uuid.uuid4()), outcome="defer", code="tcpa_violation",
                                                    message="outside the callee's calling window")
    callee = "+14155550124"
    placed = await calls.place(NewCall(agent_id=next(iter(others.profiles)), to=callee, compliance="enforce"))
    assert placed is others.decision
    with pytest.raises(ServiceError) as refused:
        await calls.create(NewCall(agent_id=next(iter(others.profiles)), to=callee, compliance="enforce"))
    assert refused.value.code == "tcpa_violation"
    assert await rows_to(engine, account["business_id"], callee) == []


async def test_a_provider_refusal_fails_the_call_and_frees_its_frequency_slot(calls, others, voice, engine, account):
    await voice.fail_next("POST", "/call", 400)
    callee = "+14155550125"
    with pytest.raises(ServiceError) as refused:
        await calls.create(NewCall(agent_id=next(iter(others.profiles)), to=callee, compliance="enforce"))
    assert refused.value.code == "call_failed"
    [asked] = others.asked
    assert len(others.released) == 1
    [row] = await rows_to(engine, account["business_id"], callee)
    assert row.status == "failed" and row.ended_reason.startswith("provider refused")
    assert asked.reference == str(row.id)
