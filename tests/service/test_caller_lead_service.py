"""What a caller said on a call written on their lead (sdr's Leads.record_caller, the agent's update_lead tool) on
the real database: the lead created when the business has none with the number, then updated (a status the lead
API may set, a note added to the notes), each write with an entry in the lead's activity log naming the call; bad
values write nothing."""
import uuid

import pytest

from core.tenant import acting_as, acting_for
from core.uow import Database, UnitOfWork
from services.sdr import schema as sdr_schema
from services.sdr.repository import sql_unit
from services.sdr.service import Leads
from tests.use_cases import refused

CALLER = "+14155550166"


@pytest.fixture
def leads(engine, pool) -> Leads:
    database = Database(engine, pool=pool)
    return Leads(UnitOfWork(database, sql_unit(database), events=sdr_schema.outbox), agents=None)


async def activity(leads: Leads, business_id: str, lead_id: str) -> list:
    async with leads.uow.read() as work:
        return await work.pipeline.activity(business_id, lead_id, 10)


async def test_a_callers_words_create_then_update_their_lead_with_the_call_on_its_log(leads):
    business_id, first_call, second_call = (str(uuid.uuid4()) for _ in range(3))
    with acting_as(acting_for(business_id, "calls-tools")):
        lead, created, changed = await leads.record_caller(
            business_id, CALLER, first_call, "inbound", None,
            {"name": "Ann Lee", "email": "Ann@Example.com"}, "a quote for a new roof")
        assert (created, changed) == (True, ("name", "email", "intent"))
        assert (lead.phone, lead.name, lead.email, lead.intent, lead.source, lead.status) == (
            CALLER, "Ann Lee", "ann@example.com", "a quote for a new roof", "inbound_call", "new")
        assert lead.email_known_at is not None  # the person's word, on an inbound call

        again, created, changed = await leads.record_caller(
            business_id, CALLER, second_call, "inbound", None,
            {"name": "Ann Lee", "status": "qualified", "notes": "prefers mornings"}, None)
        assert (again.id, created, changed) == (lead.id, False, ("status", "notes"))
        noted, _, changed = await leads.record_caller(business_id, CALLER, second_call, "inbound", lead.id,
                                                      {"notes": "has two dogs"}, None)
        assert (noted.status, noted.notes, changed) == ("qualified", "prefers mornings\nhas two dogs", ("notes",))
        _, _, changed = await leads.record_caller(business_id, CALLER, second_call, "inbound", None,
                                                  {"name": "Ann Lee"}, None)
        assert changed == ()  # nothing new: no entry

        log = await activity(leads, business_id, lead.id)
        assert [(e.action, e.status, e.reference, e.origin, e.detail) for e in log] == [
            ("update_lead", "done", second_call, "call", "updated on a call: notes"),
            ("update_lead", "done", second_call, "call", "updated on a call: status qualified, notes"),
            ("update_lead", "done", first_call, "call", "created on a call: name, email, intent")]

        for given, why in (({"email": "not-an-address"}, "email"), ({"status": "spam"}, "status must be one of"),
                           ({"phone": "+14155550000"}, "cannot be recorded from a call")):
            await refused(leads.record_caller(business_id, CALLER, second_call, "inbound", None, given, None),
                          "invalid_request", why)
        assert len(await activity(leads, business_id, lead.id)) == 3
    other = str(uuid.uuid4())
    with acting_as(acting_for(other, "calls-tools")):  # another business writes on neither this business nor its lead
        await refused(leads.record_caller(business_id, CALLER, first_call, "inbound", None, {"name": "Eve"}, None),
                      "forbidden")
        await refused(leads.record_caller(other, CALLER, first_call, "inbound", lead.id, {"name": "Eve"}, None),
                      "not_found", "lead")
