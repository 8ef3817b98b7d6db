"""The lead use cases (services/sdr/service.py: create, read, change, find by phone, contact upserts and
interactions) and creating communication runs (services/sdr/runs_service.py: the checks, the Idempotency-Key, the
decision each job is created with, as the preview's) in the fast tier, on the in-memory database (tests/memory) with
the agents and messaging services behind in-memory ports (tests/service/fakes.py); a run's touches, the scheduler
and the calls' outcomes are tests/unit/test_run_touches_use_cases.py's. The lead list and audit (prepared statements
on the raw pool, counting queries), the database's pipeline triggers and reading and changing runs stay with the
stack-backed tests (tests/service, tests/e2e)."""
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from contracts import runs as runs_contract
from core.compliance.decision import Policy, Standing
from core.errors import ServiceError
from core.ids import new_id
from core.tenant import Tenant, acting_as
from services.sdr.ports import Neighbours
from services.sdr.runs_service import Runs
from services.sdr.service import Contact, Leads
from tests.memory.sdr import in_memory
from tests.service.fakes import SdrAgents, SdrStandings
from tests.use_cases import refused

PHONE = "+14155550123"
NEW_YORK = ZoneInfo("America/New_York")
AGENT = new_id()


@pytest.fixture
def leads(database, business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,))):
        yield Leads(in_memory(database),
                    SdrAgents({(AGENT, business_id): "Closer"}))


def events(database, type_=None) -> list[dict]:
    return [e for e in database.events if type_ is None or e["type"] == type_]


async def test_a_created_lead_is_scored_named_after_its_agent_and_announced(leads, database, business_id):
    row = await leads.create(business_id, {"first_name": " Sam ", "last_name": "Lee", "phone": f" {PHONE} ",
                                           "agent_id": AGENT, "message": "I need a quote this week"})
    assert (row.business_id, row.name, row.phone, row.status, row.source, row.agent_name, row.interaction_count) == (
        business_id, "Sam Lee", PHONE, "new", "api", "Closer", 0)
    assert 0 <= row.score <= 100 and row.score_explanation and row.score_factors
    [created] = events(database, "lead.created")
    [scored] = events(database, "lead.scored")
    assert (created["business_id"], created["data"]["id"], created["data"]["phone"]) == (business_id, row.id, PHONE)
    assert (scored["data"]["lead_id"], scored["data"].get("score", 0)) == (row.id, row.score)
    assert await leads.get(row.id) == row


async def test_a_lead_is_refused_what_it_may_not_have_and_records_nothing(leads, database, business_id):
    await refused(leads.create(business_id, {"phone": "not a phone"}), "invalid_request", "phone")
    await refused(leads.create(business_id, {"status": "hot"}), "invalid_request", "status must be one of")
    await refused(leads.create(business_id, {"agent_id": new_id()}), "invalid_request", "not an agent of this")
    await refused(leads.create(new_id(), {"name": "Sam"}), "forbidden")
    assert database.events == [] and database.tables.get("sdr.leads", {}) == {}


async def test_a_change_rescores_the_lead_and_a_change_of_nothing_writes_nothing(leads, database, business_id):
    row = await leads.create(business_id, {"name": "Sam", "phone": PHONE})
    before = len(database.events)
    assert await leads.update(row.id, {"name": "Sam"}) == row and len(database.events) == before
    changed = await leads.update(row.id, {"status": "qualified", "email": "SAM@Example.com"})
    assert (changed.id, changed.status, changed.email, changed.name) == (row.id, "qualified", "sam@example.com", "Sam")
    assert changed.updated_at >= row.updated_at and (await leads.get(row.id)).status == "qualified"
    assert changed.score == row.score + 15 + 5  # qualified, and reachable by email
    assert (database.events[-1]["type"], database.events[-1]["data"]["score"]) == ("lead.scored", changed.score)
    await refused(leads.update(row.id, {"agent_id": AGENT}), "invalid_request", "cannot be changed with PATCH")
    await refused(leads.update(row.id, {"status": "spam"}), "invalid_request", "status must be one of")


async def test_a_lead_is_read_and_changed_in_its_businesses_only(leads, business_id):
    row = await leads.create(business_id, {"name": "Sam", "phone": PHONE})
    await refused(leads.get("not-a-uuid"), "invalid_request", "id")
    await refused(leads.get(new_id()), "not_found", "lead")
    with acting_as(Tenant(account_id=new_id(), business_ids=(new_id(),))):
        await refused(leads.get(row.id), "not_found", "lead")
        await refused(leads.update(row.id, {"status": "lost"}), "not_found", "lead")
        await refused(leads.find_by_phone(business_id, PHONE), "forbidden")
    assert (await leads.get(row.id)).status == "new"


async def test_the_newest_lead_with_a_phone_is_found(leads, business_id):
    await leads.create(business_id, {"name": "First", "phone": PHONE})
    newest = await leads.create(business_id, {"name": "Second", "phone": PHONE})
    assert (await leads.find_by_phone(business_id, PHONE)).id == newest.id
    assert await leads.find_by_phone(business_id, "+14155550100") is None
    await refused(leads.find_by_phone(business_id, "nope"), "invalid_request", "phone")


async def test_a_contact_makes_the_lead_once_and_then_fills_in_only_what_it_lacked(leads, database, business_id):
    made, created = await leads.upsert_contact(business_id, PHONE, {"name": "Sam"})
    assert created and (made.source, made.name, made.email) == ("inbound_call", "Sam", None)
    again, created = await leads.upsert_contact(business_id, PHONE, {"name": "Samuel", "email": "sam@example.com",
                                                                     "source": "inbound_sms"})
    assert not created and again.id == made.id
    assert (again.name, again.email, again.source) == ("Sam", "sam@example.com", "inbound_call")
    assert len(events(database, "lead.created")) == 1


async def test_an_interaction_is_counted_once_per_reference(leads, business_id):
    row = await leads.create(business_id, {"name": "Sam", "phone": PHONE})
    at = datetime(2030, 1, 2, 9, tzinfo=UTC)
    counted = await leads.record_interaction(row.id, "call", "inbound", "call-1", "booking", at)
    assert (counted.interaction_count, counted.intent, counted.last_activity_at) == (1, "booking", at)
    again = await leads.record_interaction(row.id, "call", "inbound", "call-1", "booking", at)
    assert again.interaction_count == 1
    assert (await leads.record_interaction(row.id, "sms", "outbound", "sms-1", None, None)).interaction_count == 2
    await refused(leads.record_interaction(row.id, "fax", "inbound", "fax-1", None, None), "invalid_request",
                  "channel")
    await refused(leads.record_interaction(new_id(), "call", "inbound", "call-2", None, None), "not_found", "lead")


async def test_a_batch_of_contacts_is_recorded_together_or_not_at_all(leads, database, business_id):
    known = await leads.create(business_id, {"name": "Sam", "phone": PHONE})
    at = datetime(2030, 1, 2, 9, tzinfo=UTC)

    def contact(phone, reference, lead_id=None, **collected) -> Contact:
        return Contact(business_id, phone, lead_id, "call", "inbound", reference, collected, None, at)

    before = len(database.events)
    await leads.record_contacts([contact(PHONE, "call-1", known.id), contact("+14155550177", "call-2", name="Ana"),
                                 contact("+14155550177", "call-3")], "calls-consumer")
    assert (await leads.get(known.id)).interaction_count == 1
    ana = await leads.find_by_phone(business_id, "+14155550177")
    assert (ana.name, ana.source, ana.interaction_count) == ("Ana", "inbound_call", 2)
    assert [e["type"] for e in database.events[before:]].count("lead.created") == 1
    after = len(database.events)
    with pytest.raises(ServiceError):
        await leads.record_contacts([contact("+14155550166", "call-4"), contact(PHONE, "call-5", new_id())],
                                    "calls-consumer")
    assert len(database.events) == after
    assert await leads.find_by_phone(business_id, "+14155550166") is None


# -- communication runs ------------------------------------------------------------------------------------------

NUMBER = "+14155550142"


NIGHT_OWL, NOON = "+12125550180", "+12125550181"  # New York callees who opted in
OPTED_IN = (Standing(consent="opted_in"), ())


@pytest.fixture
def runs(database, business_id):
    agents = SdrAgents({}, {business_id: {AGENT: NUMBER, new_id(): None}})
    standings = SdrStandings({NIGHT_OWL: OPTED_IN, NOON: OPTED_IN})
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "active"),))):
        yield Runs(in_memory(database),
                   Neighbours(agents, None, standings, None), Policy())


def run_body(*touch_ids: str, **extra) -> dict:
    when = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    return {"external_ref": "crm-run-1", "touches": [
        {"touch_id": t, "channel": "call", "target": {"phone": PHONE}, "scheduled_at": when} for t in touch_ids],
        **extra}


async def test_a_run_is_created_with_its_jobs_for_the_business_s_one_agent_with_a_number(runs, database,
                                                                                        business_id):
    created = await runs.create(run_body("t1", "t2"), "key-1")
    assert not created.replayed and created.jobs == {runs_contract.PENDING: 2}
    assert (created.row.business_id, created.row.agent_id, created.row.status, created.row.touches,
            created.row.external_ref) == (business_id, AGENT, runs_contract.SCHEDULED, 2, "crm-run-1")
    jobs = sorted(database.tables["sdr.communication_jobs"].values(), key=lambda job: job["touch_index"])
    assert [(j["touch_id"], j["run_id"], j["agent_id"], j["phone"], j["status"]) for j in jobs] == [
        ("t1", created.row.id, AGENT, PHONE, runs_contract.PENDING), ("t2", created.row.id, AGENT, PHONE,
                                                                    runs_contract.PENDING)]


async def test_a_retried_run_is_answered_once_and_a_reused_key_or_ref_is_a_conflict(runs, database):
    body = run_body("t1")
    created = await runs.create(body, "key-1")
    again = await runs.create({**body, "touches": list(body["touches"])}, "key-1")
    assert again.replayed and again.row.id == created.row.id and again.jobs == {runs_contract.PENDING: 1}
    await refused(runs.create(run_body("t1", "t2"), "key-1"), "conflict", "used with another run body")
    await refused(runs.create(body, "key-2"), "conflict", "external_ref 'crm-run-1' names another run")
    assert len(database.tables["sdr.communication_runs"]) == 1 and len(database.tables["sdr.communication_jobs"]) == 1


async def test_a_run_is_refused_without_a_key_with_problems_or_for_a_held_business(runs, database, business_id):
    await refused(runs.create(run_body("t1"), None), "bad_request", "Idempotency-Key header is required")
    await refused(runs.create(run_body("t1"), "k" * 256), "invalid_request", "Idempotency-Key must be")
    await refused(runs.create(run_body("t1", "t1"), "key-1"), "invalid_request", "duplicate of touches[0]")
    await refused(runs.create(run_body("t1", agent_id=new_id()), "key-1"), "invalid_request", "agent_id")
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "paused"),))):
        await refused(runs.create(run_body("t1"), "key-1"), "forbidden", "scheduling outreach")
    assert database.tables.get("sdr.communication_runs", {}) == {}


def next_new_york(hour: int) -> datetime:
    """The next hour:00 on New York's wall clock at least an hour from now (whatever the hour the test runs at)."""
    local = (datetime.now(UTC) + timedelta(hours=1)).astimezone(NEW_YORK)
    at = local.replace(hour=hour, minute=0, second=0, microsecond=0)
    return (at if at >= local else (local + timedelta(days=1)).replace(hour=hour, minute=0, second=0,
                                                                        microsecond=0)).astimezone(UTC)


async def test_a_created_run_says_when_each_touch_will_really_go_out_and_why(runs, database):
    night, noon = next_new_york(3), next_new_york(12)
    morning = night.astimezone(NEW_YORK).replace(hour=8).astimezone(UTC)
    body = {"external_ref": "crm-run-2", "touches": [
        {"touch_id": "night", "channel": "call", "target": {"phone": NIGHT_OWL}, "scheduled_at": night.isoformat()},
        {"touch_id": "noon", "channel": "call", "target": {"phone": NOON}, "scheduled_at": noon.isoformat()},
        {"touch_id": "no-consent", "channel": "call", "target": {"phone": PHONE}, "scheduled_at": noon.isoformat()}]}
    preview = {p.touch.touch_id: p for p in await runs.preview(body)}
    created = await runs.create(body, "key-2")
    assert created.jobs == {runs_contract.DEFERRED: 1, runs_contract.PENDING: 2}
    jobs = {j["touch_id"]: j for j in database.tables["sdr.communication_jobs"].values()}
    assert (jobs["night"]["status"], jobs["night"]["scheduled_at"], jobs["night"]["due_at"], jobs["night"]["rule"]) == (
        runs_contract.DEFERRED, night, morning, "federal_hours")
    assert jobs["night"]["due_at"] == preview["night"].planned_at and jobs["night"]["code"] == "tcpa_violation"
    assert jobs["night"]["reason"].startswith("quiet hours: it is ") and "03:00 in America/New_York" in jobs["night"]["reason"]
    assert (jobs["noon"]["status"], jobs["noon"]["due_at"], jobs["noon"]["rule"], jobs["noon"]["reason"]) == (
        runs_contract.PENDING, noon, None, None)
    refused = jobs["no-consent"]
    assert (refused["status"], refused["due_at"], refused["code"]) == (runs_contract.PENDING, noon, "number_opted_out")
    assert refused["reason"].startswith("as things stood at the run's creation it would be refused: ")
