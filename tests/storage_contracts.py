"""What the storage a use case reaches does, whichever keeps it: the same tests run on the fast tier's unit of
work and repositories in memory (tests/memory; tests/unit/test_storage_contracts.py, test_memory_database.py) and
on the production ones over the stack's PostgreSQL (tests/service/test_storage_contracts.py,
tests/integration/test_unit_of_work.py), so the two cannot drift apart.

A contract is a class of tests with no `Test` prefix (pytest collects it only where a module subclasses it); the
subclass gives the fixtures `database` (a core.uow.Connections) and the repository on its handle (`calls_in`,
...). Every test works in businesses and accounts of its own, as the SQL ones share the stack's database."""
from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from core import uow
from core.compliance.rules import hours
from core.events import Envelope
from core.ids import new_id, utcnow
from core.pagination import Page
from core.uow import ProviderCallInTransaction
from providers.voice.vapi.client import VapiClient
from services.accounts.records import Business, SagaBusiness, SagaRecord, UsageRecord
from services.agents.records import AgentSummary, NumberCount
from services.calls.domain import EVERY_CALL, CallFilter
from services.calls.records import KeyClaim
from services.messaging.domain import ConsentEvidence
from services.messaging.records import CalleeFacts
from services.messaging.store import Allowance
from services.sdr import schema as sdr_schema
from services.sdr.records import Attempt, ClaimedJob, Job, JobInRun, Run
from services.webhooks.domain import delivery_values
from services.webhooks.records import Failing


class UnitOfWorkContract:
    """core.uow.Connections: the provider-call guard while a transaction or a read is open."""

    async def test_a_provider_call_inside_a_unit_of_work_fails_loudly_and_outside_it_is_sent(self, database):
        voice = VapiClient("http://127.0.0.1:9", "key", max_attempts=1)  # nothing listens: a sent request fails
        try:
            for unit in (database.transaction, database.read):
                async with unit():
                    with pytest.raises(ProviderCallInTransaction, match="VapiClient was called while a database"):
                        await voice.get_call("call-1")
            with pytest.raises(Exception) as sent:  # outside: the request goes out (and finds nobody)
                await voice.get_call("call-1")
            assert not isinstance(sent.value, ProviderCallInTransaction)
        finally:
            await voice.close()

    async def test_a_task_started_inside_a_unit_may_call_providers_once_the_unit_ended(self, database):
        ended = asyncio.Event()

        async def later() -> tuple[str | None, str | None]:
            inside = uow.open_unit()
            await ended.wait()
            return inside, uow.open_unit()

        async with database.transaction():
            task = asyncio.create_task(later())
            await asyncio.sleep(0)
        ended.set()
        assert await task == ("transaction", None)

    async def test_production_logs_a_provider_call_in_a_unit_instead_of_failing_the_request(self, database, caplog):
        uow.configure_guard(strict=False)
        try:
            async with database.read():
                with caplog.at_level(logging.ERROR, logger="core.uow"):
                    uow.forbid_provider_call("the payments provider")
        finally:
            uow.configure_guard(strict=True)
        assert "the payments provider was called while a database read is open" in caplog.text


AT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
ROOMY = Allowance(AT.date(), 1000, None)  # a day's spend far from its limits


def call_values(business_id: str, **values) -> dict:
    """A call as the placing use case records it (store.calls' required columns), with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "agent_id": new_id(), "direction": "outbound",
            "status": "queued", "to_number": "+14155550123", "max_duration": 600, "compliance": "skip",
            "variables": {"name": "Sam"}, "created_at": AT, "updated_at": AT, **values}


async def pages(read, page_size: int) -> list:
    """Every row `read(page)` lists, page after page."""
    rows, page = [], Page(limit=page_size)
    while True:
        paged = await read(page)
        rows += paged.rows
        if not paged.has_more:
            return rows
        page = Page(limit=page_size, cursor=paged.next_cursor)

class CallsRepositoryContract:
    """services.calls.repository.CallsRepository."""

    async def test_a_recorded_call_is_found_in_its_businesses_only_with_its_defaults(self, database, calls_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = await calls_in(conn).add(**call_values(business_id))
        assert (added.duration, added.answered, added.cost_cents, added.provider_call_id) == (0, False, 0, None)
        async with database.read() as conn:
            found = await calls_in(conn).owned((new_id(), business_id), added.id)
            assert await calls_in(conn).owned((new_id(),), added.id) is None
            assert await calls_in(conn).owned((business_id,), new_id()) is None
        assert (found.id, found.status, found.variables, found.created_at) == (added.id, "queued", {"name": "Sam"}, AT)

    async def test_a_call_id_or_provider_call_is_recorded_once(self, database, calls_in):
        business_id, provider_call_id = new_id(), f"pc-{new_id()}"
        values = call_values(business_id, provider_call_id=provider_call_id, direction="inbound")
        async with database.transaction() as conn:
            first = await calls_in(conn).add_once(**values)
            assert await calls_in(conn).add_once(**{**values, "id": new_id()}) is None
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await calls_in(conn).add(**{**values, "provider_call_id": None})  # the same id
        async with database.read() as conn:
            assert (await calls_in(conn).by_provider_id(provider_call_id)).id == first.id
            assert await calls_in(conn).by_provider_id(f"pc-{new_id()}") is None

    async def test_the_recorded_provider_call_ids_are_found_among_those_asked_about(self, database, calls_in):
        ours, theirs = f"pc-{new_id()}", f"pc-{new_id()}"
        async with database.transaction() as conn:
            await calls_in(conn).add(**call_values(new_id(), provider_call_id=ours, direction="inbound"))
        async with database.read() as conn:
            assert await calls_in(conn).recorded_provider_ids([ours, theirs]) == {ours}
            assert await calls_in(conn).recorded_provider_ids([]) == set()

    async def test_a_round_is_taken_once_until_it_is_due_again(self, database, calls_in):
        name = f"job-{new_id()}"  # a job of its own: the stack's own rounds go on beside it
        taken = []
        for every in (timedelta(hours=1), timedelta(hours=1)):
            async with database.transaction() as conn:
                taken.append(await calls_in(conn).claim_round(name, every))
        assert taken == [True, False]  # a second replica finds it taken
        async with database.transaction() as conn:
            assert await calls_in(conn).claim_round(f"job-{new_id()}", timedelta(hours=1))  # each job its own
        short = f"job-{new_id()}"
        async with database.transaction() as conn:
            assert await calls_in(conn).claim_round(short, timedelta(milliseconds=1))
        await asyncio.sleep(0.05)
        async with database.transaction() as conn:
            assert await calls_in(conn).claim_round(short, timedelta(milliseconds=1))  # due again

    async def test_a_change_answers_the_call_after_it(self, database, calls_in):
        business_id, url = new_id(), f"https://recordings.example.com/{new_id()}.wav"
        async with database.transaction() as conn:
            added = await calls_in(conn).add(**call_values(business_id))
            changed = await calls_in(conn).change(added.id, {"status": "failed", "ended_reason": "provider refused",
                                                             "recording_url": url})
            assert await calls_in(conn).change(new_id(), {"status": "failed"}) is None
        assert (changed.id, changed.status, changed.ended_reason, changed.to_number) == (
            added.id, "failed", "provider refused", "+14155550123")
        async with database.read() as conn:
            assert await calls_in(conn).recording_url(added.id) == url
            assert await calls_in(conn).recording_url(new_id()) is None

    async def test_a_batch_of_messages_finds_its_calls_by_either_id_and_writes_each_change(self, database,
                                                                                           calls_in):
        business_id, provider_call_id = new_id(), f"pc-{new_id()}"
        async with database.transaction() as conn:
            ours = await calls_in(conn).add(**call_values(business_id))
            theirs = await calls_in(conn).add(**call_values(business_id, provider_call_id=provider_call_id))
            await calls_in(conn).add(**call_values(business_id))  # of no message
            found = await calls_in(conn).for_messages([ours.id], [provider_call_id, f"pc-{new_id()}"])
            assert sorted(row["id"] for row in found) == sorted([ours.id, theirs.id])
            assert all(isinstance(row, dict) and row["business_id"] == business_id for row in found)
            await calls_in(conn).change_many({ours.id: {"status": "ringing"},
                                              theirs.id: {"status": "completed", "duration": 42}})
        async with database.read() as conn:
            assert (await calls_in(conn).owned((business_id,), ours.id)).status == "ringing"
            after = await calls_in(conn).owned((business_id,), theirs.id)
        assert (after.status, after.duration) == ("completed", 42)

    async def test_a_tool_call_is_claimed_once_per_call_and_id_then_settled_and_listed_oldest_first(
            self, database, calls_in):
        business_id = new_id()
        async with database.transaction() as conn:
            call = await calls_in(conn).add(**call_values(business_id))
            other = await calls_in(conn).add(**call_values(business_id))
            claim = {"name": "lookup", "arguments": {"order": 7}, "outcome": "running"}
            first = await calls_in(conn).claim_tool_call(call_id=call.id, tool_call_id="tc-1", created_at=AT, **claim)
            assert (first.name, first.arguments, first.result, first.outcome) == ("lookup", {"order": 7}, None,
                                                                                  "running")
            assert await calls_in(conn).claim_tool_call(call_id=call.id, tool_call_id="tc-1", created_at=AT,
                                                        **claim) is None
            assert await calls_in(conn).claim_tool_call(call_id=other.id, tool_call_id="tc-1", created_at=AT,
                                                        **claim) is not None  # the same id in another call
            await calls_in(conn).claim_tool_call(call_id=call.id, tool_call_id="tc-0",
                                                 created_at=AT + timedelta(seconds=1), **claim)
            await calls_in(conn).settle_tool_call(call.id, "tc-1", {"result": "found", "outcome": "ok",
                                                                    "duration_ms": 12})
        async with database.read() as conn:
            settled = await calls_in(conn).tool_call(call.id, "tc-1")
            assert (settled.result, settled.outcome, settled.duration_ms) == ("found", "ok", 12)
            assert await calls_in(conn).tool_call(call.id, "tc-9") is None
            found, made = await calls_in(conn).with_tool_calls([business_id], call.id)
            assert (found, [t.tool_call_id for t in made]) == (call, ["tc-1", "tc-0"])
            found, made = await calls_in(conn).with_tool_calls([business_id], other.id)
            assert (found, [t.tool_call_id for t in made]) == (other, ["tc-1"])
            assert await calls_in(conn).with_tool_calls([new_id()], call.id) is None  # another business's
            assert await calls_in(conn).with_tool_calls([business_id], new_id()) is None

    async def test_a_persons_calls_are_found_by_the_other_partys_number_email_id_or_lead_until_erased(
            self, database, calls_in):
        business_id, person, lead_id = new_id(), "+14155550161", new_id()
        async with database.transaction() as conn:
            calls = calls_in(conn)
            called = await calls.add(**call_values(business_id, to_number=person))
            rang = await calls.add(**call_values(business_id, direction="inbound", to_number="+14155550100",
                                                 from_number=person))
            told = await calls.add(**call_values(business_id, structured_data={"email": "Sam@Example.com"}))
            named = await calls.add(**call_values(business_id))
            led = await calls.add(**call_values(business_id, lead_id=lead_id))
            # not theirs: the business's own number on an inbound call, and another business's call with them
            await calls.add(**call_values(business_id, direction="inbound", to_number=person,
                                          from_number="+14155550199"))
            elsewhere = await calls.add(**call_values(new_id(), to_number=person))
        async with database.read() as conn:
            found = await calls_in(conn).erasable(business_id, [person], ["sam@example.com"],
                                                  [named.id, elsewhere.id], [lead_id])
            assert await calls_in(conn).erasable(business_id, [], [], [], []) == []
        assert sorted(c.id for c in found) == sorted(c.id for c in (called, rang, told, named, led))
        async with database.transaction() as conn:
            await calls_in(conn).change(called.id, {"erased_at": AT})
            await calls_in(conn).claim_tool_call(call_id=rang.id, tool_call_id="tc-1", name="book",
                                                 arguments={"name": "Sam"}, result="Booked Sam", outcome="ok",
                                                 created_at=AT)
            await calls_in(conn).claim_tool_call(call_id=rang.id, tool_call_id="tc-2", name="book",
                                                 arguments={"name": "Sam"}, outcome="running", created_at=AT)
            assert await calls_in(conn).redact_tool_calls([rang.id, told.id], {}, "[erased]") == 2
        async with database.read() as conn:
            again = await calls_in(conn).erasable(business_id, [person], [], [], [])
            tools = [await calls_in(conn).tool_call(rang.id, i) for i in ("tc-1", "tc-2")]
        assert [c.id for c in again] == [rang.id]  # an erased call is found no more
        assert [(t.arguments, t.result) for t in tools] == [({}, "[erased]"), ({}, None)]  # a running one runs on

    async def test_stale_running_tool_calls_are_settled_failed_oldest_first_a_batch_at_a_time(self, database,
                                                                                             calls_in):
        # Claimed well before the other tests' tool calls, and swept in the transaction that claimed them (which
        # nothing else sees), so that these alone are stale.
        long_ago = AT - timedelta(days=200)
        async with database.transaction() as conn:
            call = await calls_in(conn).add(**call_values(new_id()))
            for i, outcome in enumerate(("running", "running", "ok", "running")):
                await calls_in(conn).claim_tool_call(call_id=call.id, tool_call_id=f"tc-{i}", name="lookup",
                                                     arguments={}, outcome=outcome,
                                                     created_at=long_ago + timedelta(minutes=i))
            await calls_in(conn).claim_tool_call(call_id=call.id, tool_call_id="tc-now", name="lookup", arguments={},
                                                 outcome="running", created_at=AT)
            before = long_ago + timedelta(days=1)
            assert await calls_in(conn).settle_stale_tool_calls(before, "gave up", 1) == 1
            assert (await calls_in(conn).tool_call(call.id, "tc-0")).outcome == "failed"  # the oldest first
            assert (await calls_in(conn).tool_call(call.id, "tc-1")).outcome == "running"
            assert await calls_in(conn).settle_stale_tool_calls(before, "gave up", 5) == 2
            assert await calls_in(conn).settle_stale_tool_calls(before, "gave up", 5) == 0
            rows = {i: await calls_in(conn).tool_call(call.id, f"tc-{i}") for i in (0, 1, 2, 3, "now")}
        assert {i: (r.outcome, r.result) for i, r in rows.items()} == {
            0: ("failed", "gave up"), 1: ("failed", "gave up"), 2: ("ok", None), 3: ("failed", "gave up"),
            "now": ("running", None)}
        assert rows[0].duration_ms == 2**31 - 1  # from its claim to its sweep, as long as the column holds

    async def test_silent_calls_are_those_in_progress_past_their_duration_and_margin(self, database, calls_in):
        # A year before the other tests' calls, so that no other call is silent by then.
        business_id, at = new_id(), AT - timedelta(days=365)
        now, made = at + timedelta(seconds=700), {"created_at": at, "updated_at": at}
        async with database.transaction() as conn:
            overdue = await calls_in(conn).add(**call_values(business_id, status="in-progress", **made))  # 600 s
            await calls_in(conn).add(**call_values(business_id, status="completed", **made))  # it has its outcome
            await calls_in(conn).add(**call_values(business_id, status="ringing", max_duration=3600, **made))
        async with database.read() as conn:
            assert [row.id for row in await calls_in(conn).silent(now, 60, 100)] == [overdue.id]
            assert await calls_in(conn).silent(now, 120, 100) == []
            assert (await calls_in(conn).count_silent(now, 60), await calls_in(conn).count_silent(now, 120)) == (1, 0)

    async def test_a_transaction_that_raises_keeps_nothing(self, database, calls_in):
        values = call_values(new_id())
        with pytest.raises(LookupError):
            async with database.transaction() as conn:
                await calls_in(conn).add(**values)
                raise LookupError("the use case refused")
        async with database.read() as conn:
            assert await calls_in(conn).owned((values["business_id"],), values["id"]) is None

    async def test_pages_list_newest_first_across_equal_times_with_their_filters(self, database, calls_in):
        business_id, agent_id = new_id(), new_id()
        at = [AT, AT, AT - timedelta(minutes=1), AT + timedelta(minutes=1), AT]
        async with database.transaction() as conn:
            added = [await calls_in(conn).add(**call_values(business_id, agent_id=agent_id if i % 2 else new_id(),
                                                            status="completed" if i < 3 else "queued",
                                                            direction="inbound" if i == 4 else "outbound",
                                                            created_at=created_at))
                     for i, created_at in enumerate(at)]
            await calls_in(conn).add(**call_values(new_id()))  # another business's
        newest = sorted(added, key=lambda row: (row.created_at, row.id), reverse=True)
        async with database.read() as conn:
            calls = calls_in(conn)
            assert [r.id for r in await pages(lambda p: calls.page((business_id,), EVERY_CALL, p), 2)] == \
                [r.id for r in newest]
            completed = CallFilter(agent_id=agent_id, status="completed")
            assert [r.id for r in await pages(lambda p: calls.page((business_id,), completed, p), 1)] \
                == [r.id for r in newest if r.agent_id == agent_id and r.status == "completed"]
            older = await calls.page((business_id,), EVERY_CALL, Page(limit=10, after=AT))
            inbound = await calls.page((business_id,), CallFilter(direction="inbound"), Page(limit=10))
            at_nine_thirty = await calls.page((business_id,), CallFilter(
                direction="outbound", created_from=AT, created_before=AT + timedelta(minutes=1)), Page(limit=10))
        assert [r.id for r in older.rows] == [added[2].id] and not older.has_more
        assert [r.id for r in inbound.rows] == [added[4].id]
        assert [r.id for r in at_nine_thirty.rows] == [r.id for r in newest if r.created_at == AT and r.id != added[4].id]

    async def test_transcripts_are_the_calls_with_one_since_a_time(self, database, calls_in):
        business_id, agent_id = new_id(), new_id()
        # Ended calls: the stack's reaper closes a call still queued past its max_duration (these are from AT), and
        # on the shared database it could close one of these between the two reads.
        ended = {"status": "completed"}
        async with database.transaction() as conn:
            said = await calls_in(conn).add(**call_values(business_id, agent_id=agent_id, transcript="AI: Hello",
                                                          **ended))
            await calls_in(conn).add(**call_values(business_id, agent_id=agent_id, **ended))  # nothing said
            await calls_in(conn).add(**call_values(business_id, agent_id=agent_id, transcript="AI: Hi",
                                                   created_at=AT - timedelta(days=2), **ended))
            other = await calls_in(conn).add(**call_values(business_id, transcript="AI: Hey", **ended))
        async with database.read() as conn:
            calls = calls_in(conn)
            since = AT - timedelta(days=1)
            mine = await calls.transcripts((business_id,), agent_id, since, Page(limit=10))
            every = await calls.transcripts((business_id,), None, since, Page(limit=10))
        assert [r.id for r in mine.rows] == [said.id]
        assert {r.id for r in every.rows} == {said.id, other.id}

    async def test_an_idempotency_key_is_claimed_settled_released_and_forgotten_once_expired(self, database,
                                                                                            calls_in):
        account_id, key, now = new_id(), f"key-{new_id()}", datetime.now(UTC)
        window, lease, token = now - timedelta(hours=24), timedelta(minutes=2), new_id()
        async with database.transaction() as conn:
            calls = calls_in(conn)
            assert await calls.claim_key(account_id, key, "hash-1", now, window, token, lease) is None
            pending = await calls.claim_key(account_id, key, "hash-2", now, window, new_id(), lease)
            assert await calls.claim_key(new_id(), key, "hash-2", now, window, new_id(), lease) is None  # another's
            assert not await calls.take_over_key(account_id, key, new_id(), lease)  # its lease runs
        assert pending == KeyClaim("hash-1", None, placing=True)
        call_id = new_id()
        async with database.transaction() as conn:
            assert await calls_in(conn).hold_key(account_id, key, token, call_id)
            await calls_in(conn).settle_key(account_id, key, token, call_id)
            settled = await calls_in(conn).claim_key(account_id, key, "hash-1", now, window, new_id(), lease)
            assert not await calls_in(conn).take_over_key(account_id, key, new_id(), lease)  # nobody is placing
        assert settled == KeyClaim("hash-1", call_id, placing=False)
        later = now + timedelta(hours=25)
        async with database.transaction() as conn:
            again_token = new_id()
            assert await calls_in(conn).claim_key(account_id, key, "hash-4", later, later - timedelta(hours=24),
                                                  again_token, lease) is None
            again = await calls_in(conn).claim_key(account_id, key, "hash-5", later, later - timedelta(hours=24),
                                                   new_id(), lease)
            await calls_in(conn).release_key(account_id, key, again_token)
            assert await calls_in(conn).claim_key(account_id, key, "hash-6", later, window, new_id(), lease) is None
        assert again.request_hash == "hash-4"

    async def test_a_lapsed_claim_is_taken_over_once_and_its_earlier_holder_changes_nothing(self, database,
                                                                                           calls_in):
        account_id, key, now = new_id(), f"key-{new_id()}", datetime.now(UTC)
        window, earlier, taker, lease = now - timedelta(hours=24), new_id(), new_id(), timedelta(minutes=2)
        async with database.transaction() as conn:  # a lease that lapses at once: its holder stopped
            assert await calls_in(conn).claim_key(account_id, key, "hash-1", now, window, earlier,
                                                  timedelta(microseconds=1)) is None
        await asyncio.sleep(0.01)
        async with database.transaction() as conn:
            calls = calls_in(conn)
            assert await calls.take_over_key(account_id, key, taker, lease)
            assert not await calls.take_over_key(account_id, key, new_id(), lease)  # one retry takes it over
            assert not await calls.hold_key(account_id, key, earlier, new_id())
            await calls.settle_key(account_id, key, earlier, new_id())
            await calls.release_key(account_id, key, earlier)
            held = await calls.claim_key(account_id, key, "hash-1", now, window, new_id(), lease)
        assert held == KeyClaim("hash-1", None, placing=True)

    async def test_a_claim_whose_lease_is_ended_keeps_its_call_and_is_taken_over_by_the_next_retry(self, database,
                                                                                                  calls_in):
        account_id, key, now = new_id(), f"key-{new_id()}", datetime.now(UTC)
        window, holder, lease, call_id = now - timedelta(hours=24), new_id(), timedelta(minutes=2), new_id()
        async with database.transaction() as conn:
            calls = calls_in(conn)
            assert await calls.claim_key(account_id, key, "hash-1", now, window, holder, lease) is None
            assert await calls.hold_key(account_id, key, holder, call_id)
            await calls.lapse_key(account_id, key, new_id())  # not the holder's token: changes nothing
            assert not await calls.take_over_key(account_id, key, new_id(), lease)
            await calls.lapse_key(account_id, key, holder)
        await asyncio.sleep(0.01)
        async with database.transaction() as conn:
            assert await calls_in(conn).take_over_key(account_id, key, new_id(), lease)
            held = await calls_in(conn).claim_key(account_id, key, "hash-1", now, window, new_id(), lease)
        assert held == KeyClaim("hash-1", call_id, placing=True)


def scenario_values(business_id: str, **values) -> dict:
    """A scenario as the create use case records it, with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "agent_id": new_id(), "provider_eval_id": f"eval-{new_id()}",
            "name": "Books a visit", "description": "", "messages": [{"role": "user", "content": "Hi"}],
            "created_at": AT, "updated_at": AT, **values}


class ScenariosRepositoryContract:
    """services.evals.repository.ScenariosRepository."""

    async def test_a_scenario_is_found_in_its_businesses_only_and_its_mirror_is_its_own(self, database,
                                                                                       scenarios_in):
        business_id = new_id()
        values = scenario_values(business_id)
        async with database.transaction() as conn:
            added = await scenarios_in(conn).add(**values)
        assert (added.messages, added.lease_token, added.lease_until) == (values["messages"], None, None)
        async with database.read() as conn:
            found = await scenarios_in(conn).owned((business_id,), added.id)
            assert await scenarios_in(conn).owned((new_id(),), added.id) is None
        assert (found.id, found.name, found.provider_eval_id) == (added.id, "Books a visit", values["provider_eval_id"])
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await scenarios_in(conn).add(**scenario_values(business_id, provider_eval_id=values["provider_eval_id"]))

    async def test_pages_list_newest_first_without_turns_or_lease(self, database, scenarios_in):
        business_id, agent_id = new_id(), new_id()
        async with database.transaction() as conn:
            added = [await scenarios_in(conn).add(**scenario_values(
                business_id, agent_id=agent_id if i else new_id(), created_at=AT + timedelta(seconds=i % 2)))
                for i in range(4)]
        newest = sorted(added, key=lambda row: (row.created_at, row.id), reverse=True)
        async with database.read() as conn:
            every = await pages(lambda p: scenarios_in(conn).page((business_id,), None, p), 3)
            agents = await scenarios_in(conn).page((business_id,), agent_id, Page(limit=10))
            assert (await scenarios_in(conn).page((new_id(),), None, Page(limit=10))).rows == []
        assert [r.id for r in every] == [r.id for r in newest]
        assert [r.id for r in agents.rows] == [r.id for r in newest if r.agent_id == agent_id]
        assert not any(hasattr(row, name) for row in every for name in ("messages", "lease_token", "lease_until"))
        assert every[0].name == "Books a visit"

    async def test_a_lease_has_one_holder_until_released_or_run_out(self, database, scenarios_in):
        async with database.transaction() as conn:
            row = await scenarios_in(conn).add(**scenario_values(new_id()))
        async with database.transaction() as conn:
            token = await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1))
            assert token is not None and await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1)) is None
            await scenarios_in(conn).release_lease(row.id, new_id())  # not the holder's: nothing changes
            assert await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1)) is None
            await scenarios_in(conn).release_lease(row.id, token)
            run_out = await scenarios_in(conn).take_lease(row.id, timedelta(seconds=-1))
            assert run_out is not None and run_out != token
            assert await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1)) is not None
            assert await scenarios_in(conn).take_lease(new_id(), timedelta(minutes=1)) is None

    async def test_only_the_lease_holder_changes_or_removes_a_scenario(self, database, scenarios_in):
        business_id = new_id()
        async with database.transaction() as conn:
            row = await scenarios_in(conn).add(**scenario_values(business_id))
            token = await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1))
        async with database.transaction() as conn:
            assert await scenarios_in(conn).change_leased(row.id, new_id(), {"name": "Stale"}) is None
            changed = await scenarios_in(conn).change_leased(row.id, token, {"name": "Renamed", "lease_token": None,
                                                                             "lease_until": None})
            await scenarios_in(conn).remove_leased(row.id, token)  # the change released the lease
        assert (changed.id, changed.name, changed.lease_token, changed.description) == (row.id, "Renamed", None, "")
        async with database.transaction() as conn:
            assert (await scenarios_in(conn).owned((business_id,), row.id)).name == "Renamed"
            token = await scenarios_in(conn).take_lease(row.id, timedelta(minutes=1))
            await scenarios_in(conn).remove_leased(row.id, token)
            assert await scenarios_in(conn).owned((business_id,), row.id) is None

def eval_run_values(scenario, **values) -> dict:
    """A run of `scenario` as a run request records it (queued), with `values` over it."""
    return {"id": new_id(), "business_id": scenario.business_id, "agent_id": scenario.agent_id,
            "eval_id": scenario.id, "eval_name": scenario.name, "batch_id": None, "trigger": "request",
            "channel": None, "status": "queued", "results": [], "created_at": AT, "updated_at": AT, "lease_token": None,
            "lease_until": None, "submitting_at": None, **values}  # one shape: rows are added in one executemany


class EvalRunsRepositoryContract:
    """services.evals.repository.RunsRepository (`eval_runs_in`), over the scenarios of `scenarios_in`."""

    async def scenario(self, database, scenarios_in, business_id: str, **values):
        async with database.transaction() as conn:
            return await scenarios_in(conn).add(**scenario_values(business_id, **values))

    async def test_runs_are_found_in_their_businesses_only_by_id_or_provider_run_id(self, database, scenarios_in,
                                                                                 eval_runs_in):
        business_id = new_id()
        scenario = await self.scenario(database, scenarios_in, business_id)
        rows = [eval_run_values(scenario, provider_run_id=f"run-{new_id()}" if i else None) for i in range(3)]
        async with database.transaction() as conn:
            await eval_runs_in(conn).add(rows)
        async with database.read() as conn:
            found = await eval_runs_in(conn).by_ids([rows[2]["id"], rows[0]["id"]])
            by_id = await eval_runs_in(conn).owned((business_id,), run_id=rows[1]["id"])
            by_provider = await eval_runs_in(conn).owned((business_id,), provider_run_id=rows[2]["provider_run_id"])
            assert await eval_runs_in(conn).owned((new_id(),), run_id=rows[1]["id"]) is None
            assert await eval_runs_in(conn).owned((new_id(),), provider_run_id=rows[2]["provider_run_id"]) is None
            assert await eval_runs_in(conn).owned((business_id,), run_id=new_id()) is None
        assert [r.id for r in found] == [rows[2]["id"], rows[0]["id"]]
        assert (by_id.id, by_provider.id) == (rows[1]["id"], rows[2]["id"])
        assert (found[1].eval_id, found[1].status, found[1].results, found[1].passed, found[1].stubbed_tool_calls,
                found[1].ended_at) == (scenario.id, "queued", [], None, [], None)

    async def test_an_agents_runs_list_newest_first_in_its_businesses(self, database, scenarios_in, eval_runs_in):
        business_id = new_id()
        scenario = await self.scenario(database, scenarios_in, business_id)
        rows = [eval_run_values(scenario, created_at=AT + timedelta(seconds=i % 2)) for i in range(4)]
        async with database.transaction() as conn:
            await eval_runs_in(conn).add(rows)
        newest = sorted(rows, key=lambda row: (row["created_at"], row["id"]), reverse=True)
        async with database.read() as conn:
            listed = await eval_runs_in(conn).of_agent((business_id,), scenario.agent_id, 3)
            assert await eval_runs_in(conn).of_agent((new_id(),), scenario.agent_id, 3) == []
            assert await eval_runs_in(conn).of_agent((business_id,), new_id(), 3) == []
        assert [r.id for r in listed] == [row["id"] for row in newest[:3]]

    async def test_a_run_records_its_progress_until_it_has_ended(self, database, scenarios_in, eval_runs_in):
        scenario = await self.scenario(database, scenarios_in, new_id())
        row = eval_run_values(scenario)
        async with database.transaction() as conn:
            await eval_runs_in(conn).add([row])
            running = await eval_runs_in(conn).record(row["id"], {"provider_run_id": f"run-{new_id()}",
                                                                  "status": "running"})
            ended = await eval_runs_in(conn).record(row["id"], {"status": "ended", "passed": True, "ended_at": AT,
                                                                "results": [{"status": "pass"}]})
            assert await eval_runs_in(conn).record(row["id"], {"status": "running", "passed": False}) is None
            assert await eval_runs_in(conn).record(new_id(), {"status": "running"}) is None
        assert (running.status, running.provider_run_id is not None) == ("running", True)
        async with database.read() as conn:
            [kept] = await eval_runs_in(conn).by_ids([row["id"]])
        assert kept == ended and (kept.status, kept.passed, kept.results) == ("ended", True, [{"status": "pass"}])

    async def test_unfinished_runs_nobody_holds_are_claimed_once_with_their_scenarios_mirror(self, database,
                                                                                             scenarios_in, eval_runs_in):
        """Other tests' free runs may be claimed too (one database): only this test's are looked at."""
        scenario = await self.scenario(database, scenarios_in, new_id())
        gone = await self.scenario(database, scenarios_in, scenario.business_id)
        other, lease = new_id(), timedelta(minutes=1)
        queued, running, ended, orphan, held, ran_out = (
            eval_run_values(scenario), eval_run_values(scenario, status="running", submitting_at=AT),
            eval_run_values(scenario, status="ended"), eval_run_values(gone),
            eval_run_values(scenario, lease_token=other, lease_until=utcnow() + lease),
            eval_run_values(scenario, lease_token=other, lease_until=utcnow() - lease))
        mine = {row["id"] for row in (queued, running, orphan, ran_out)}
        async with database.transaction() as conn:
            await eval_runs_in(conn).add([queued, running, ended, orphan, held, ran_out])
            token = await scenarios_in(conn).take_lease(gone.id, timedelta(minutes=1))
            await scenarios_in(conn).remove_leased(gone.id, token)
            holder = new_id()  # claimed as they are stored: no other claimer (the stack's evals) sees them free
            claimed = {r.id: r for r in await eval_runs_in(conn).claim(holder, lease, 10_000) if r.id in mine | {
                ended["id"], held["id"]}}
        async with database.transaction() as conn:
            assert [r for r in await eval_runs_in(conn).claim(new_id(), lease, 10_000) if r.id in claimed] == []
        assert set(claimed) == mine
        assert [claimed[row["id"]].provider_eval_id for row in (queued, running, orphan)] == \
            [scenario.provider_eval_id, scenario.provider_eval_id, None]
        assert (claimed[running["id"]].status, claimed[running["id"]].submitting_at, claimed[queued["id"]].submitting_at,
                claimed[orphan["id"]].eval_name) == ("running", AT, None, "Books a visit")
        async with database.transaction() as conn:  # only the holder writes, renews and releases
            assert await eval_runs_in(conn).record(queued["id"], {"status": "running"}, other) is None
            assert (await eval_runs_in(conn).record(queued["id"], {"status": "running"}, holder)).status == "running"
            await eval_runs_in(conn).renew(other, [queued["id"]], timedelta(0))
            await eval_runs_in(conn).release(other)
            assert [r.id for r in await eval_runs_in(conn).claim(new_id(), lease, 10_000) if r.id in mine] == []
            await eval_runs_in(conn).renew(holder, [queued["id"]], -lease)  # its lease has run out
            await eval_runs_in(conn).release(holder)  # the others' end
            assert {r.id for r in await eval_runs_in(conn).claim(other, lease, 10_000) if r.id in mine} == mine

    async def test_the_provider_runs_recorded_are_known(self, database, scenarios_in, eval_runs_in):
        scenario = await self.scenario(database, scenarios_in, new_id())
        row = eval_run_values(scenario, provider_run_id=f"run-{new_id()}")
        async with database.transaction() as conn:
            await eval_runs_in(conn).add([row])
            assert await eval_runs_in(conn).provider_runs_recorded([row["provider_run_id"], f"run-{new_id()}"]) == \
                {row["provider_run_id"]}

    async def test_the_scenarios_to_run_are_the_agents_oldest_first_with_their_turns(self, database, scenarios_in,
                                                                                    eval_runs_in):
        business_id, agent_id = new_id(), new_id()
        made = [await self.scenario(database, scenarios_in, business_id, agent_id=agent_id,
                                    created_at=AT - timedelta(seconds=i)) for i in range(3)]
        await self.scenario(database, scenarios_in, business_id)  # another agent's
        async with database.read() as conn:
            found = await eval_runs_in(conn).scenarios_to_run((business_id,), agent_id)
            assert await eval_runs_in(conn).scenarios_to_run((new_id(),), agent_id) == []
        assert found == list(reversed(made)) and found[0].messages == [{"role": "user", "content": "Hi"}]


def subscription_values(business_id: str, **values) -> dict:
    """A subscription as the save use case records it, with `values` over it."""
    return {"id": f"wh_{new_id().replace('-', '')[:24]}", "business_id": business_id,
            "url": "https://hooks.example.com/in", "events": ["lead.created"], "description": None, "is_active": True,
            "secret_sealed": "sealed-secret", "secret_tail": "abcd", "failure_count": 0, "created_at": AT,
            "updated_at": AT, **values}


class SubscriptionsRepositoryContract:
    """services.webhooks.repository.SubscriptionsRepository."""

    async def test_a_subscription_is_found_in_its_business_by_id_and_by_url_once_per_url(self, database,
                                                                                         subscriptions_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = await subscriptions_in(conn).add_subscription(**subscription_values(business_id))
            await subscriptions_in(conn).add_subscription(**subscription_values(new_id()))  # the same URL elsewhere
        assert (added.events, added.previous_secret_sealed, added.disabled_reason) == (["lead.created"], None, None)
        async with database.read() as conn:
            subscriptions = subscriptions_in(conn)
            assert (await subscriptions.subscription(business_id, added.id, lock=False)).url == added.url
            assert await subscriptions.subscription(new_id(), added.id) is None
            assert (await subscriptions.subscription_by_url(business_id, added.url)).id == added.id
            assert await subscriptions.subscription_by_url(business_id, "https://hooks.example.com/other") is None
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await subscriptions_in(conn).add_subscription(**subscription_values(business_id))

    async def test_subscriptions_list_oldest_first_and_active_ones_alone(self, database, subscriptions_in):
        business_id = new_id()
        async with database.transaction() as conn:
            subscriptions = subscriptions_in(conn)
            newer = await subscriptions.add_subscription(**subscription_values(
                business_id, url="https://hooks.example.com/b", created_at=AT + timedelta(minutes=1)))
            older = await subscriptions.add_subscription(**subscription_values(
                business_id, url="https://hooks.example.com/a"))
            off = await subscriptions.add_subscription(**subscription_values(
                business_id, url="https://hooks.example.com/c", is_active=False, created_at=AT + timedelta(hours=1)))
        async with database.read() as conn:
            every = await subscriptions_in(conn).subscriptions(business_id)
            active = await subscriptions_in(conn).subscriptions(business_id, active_only=True)
            assert await subscriptions_in(conn).subscriptions(new_id()) == []
        assert [r.id for r in every] == [older.id, newer.id, off.id] and [r.id for r in active] == [older.id, newer.id]

    async def test_a_change_answers_the_subscription_after_it_and_a_removed_one_is_gone(self, database,
                                                                                       subscriptions_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = await subscriptions_in(conn).add_subscription(**subscription_values(business_id))
            changed = await subscriptions_in(conn).change_subscription(added.id, {
                "is_active": False, "disabled_reason": "failing", "events": ["call.completed", "lead.created"]})
            assert await subscriptions_in(conn).change_subscription("wh_none", {"is_active": False}) is None
        assert (changed.id, changed.is_active, changed.disabled_reason, changed.events, changed.url) == (
            added.id, False, "failing", ["call.completed", "lead.created"], added.url)
        async with database.transaction() as conn:
            await subscriptions_in(conn).remove_subscription(added.id)
        async with database.read() as conn:
            assert await subscriptions_in(conn).subscription(business_id, added.id) is None
            assert await subscriptions_in(conn).subscriptions(business_id) == []

    async def test_a_call_secret_is_made_then_replaced_keeping_the_previous_one(self, database, subscriptions_in):
        business_id, later = new_id(), AT + timedelta(days=1)
        async with database.transaction() as conn:
            assert await subscriptions_in(conn).call_secret(business_id, lock=True) is None
            made = await subscriptions_in(conn).put_call_secret(business_id, "sealed-1", "1111", AT)
            replaced = await subscriptions_in(conn).put_call_secret(business_id, "sealed-2", "2222", later,
                                                                    previous_sealed="sealed-1",
                                                                    previous_expires_at=later + timedelta(hours=24))
        assert (made.secret_sealed, made.previous_secret_sealed, made.created_at) == ("sealed-1", None, AT)
        assert (replaced.secret_sealed, replaced.secret_tail, replaced.previous_secret_sealed, replaced.created_at,
                replaced.updated_at) == ("sealed-2", "2222", "sealed-1", AT, later)
        async with database.read() as conn:
            assert (await subscriptions_in(conn).call_secret(business_id)).secret_sealed == "sealed-2"
            assert await subscriptions_in(conn).call_secret(new_id()) is None


    async def test_failure_streaks_are_counted_and_ended_and_a_subscription_turned_off(self, database,
                                                                                      subscriptions_in):
        business_id = new_id()
        async with database.transaction() as conn:
            subscriptions = subscriptions_in(conn)
            added = await subscriptions.add_subscription(**subscription_values(business_id))
            assert await subscriptions.failed(added.id, 2, AT) == Failing(AT, True)
            assert await subscriptions.failed(added.id, 1, AT + timedelta(hours=1)) == Failing(AT, True)
            assert await subscriptions.failed("wh_none", 1, AT) is None
            failing = await subscriptions.subscription(business_id, added.id)
            assert (failing.failure_count, failing.last_triggered_at) == (3, AT + timedelta(hours=1))
            assert [s.id for s in (await subscriptions.active_of({business_id, new_id()}))[business_id]] == [added.id]
            await subscriptions.succeeded(added.id, AT + timedelta(hours=2))
            ended = await subscriptions.subscription(business_id, added.id)
            assert (ended.failure_count, ended.failing_since, ended.last_triggered_at) == (
                0, None, AT + timedelta(hours=2))
            await subscriptions.disable(added.id, "failing for a day")
        async with database.read() as conn:
            assert await subscriptions_in(conn).active_of({business_id}) == {}
            found = await subscriptions_in(conn).by_ids({added.id, "wh_none"})
        assert list(found) == [added.id] and (found[added.id].is_active, found[added.id].disabled_reason) == (
            False, "failing for a day")

    async def test_a_call_secret_made_on_first_need_is_made_once(self, database, subscriptions_in):
        business_id = new_id()
        async with database.transaction() as conn:
            made = await subscriptions_in(conn).ensure_call_secret(business_id, "sealed-1", "1111", AT)
            kept = await subscriptions_in(conn).ensure_call_secret(business_id, "sealed-2", "2222", AT)
        assert (made.secret_sealed, kept.secret_sealed, kept.business_id) == ("sealed-1", "sealed-1", business_id)
        async with database.read() as conn:
            assert list(await subscriptions_in(conn).call_secrets({business_id, new_id()})) == [business_id]


class _Rollback(Exception):
    """Raised to leave nothing of a contract's transaction (its claims would take the stack's due deliveries)."""


class EventsRepositoryContract:
    """services.webhooks.repository.EventsRepository."""

    async def test_events_are_kept_once_and_a_consumer_sees_each_for_the_first_time_once(self, database, events_in):
        business_id = new_id()
        lead = Envelope(new_id(), "lead.created", AT, business_id, {"lead_id": "l-1"})
        failed = Envelope(new_id(), "call.failed", AT + timedelta(minutes=1), business_id, {"call_id": "c-1"})
        async with database.transaction() as conn:
            assert await events_in(conn).first_seen("contract-consumer", [lead.event_id]) == {lead.event_id}
            await events_in(conn).keep([lead, failed])
            await events_in(conn).keep([lead])
        async with database.transaction() as conn:
            assert await events_in(conn).first_seen("contract-consumer", [lead.event_id, failed.event_id]) == {
                failed.event_id}
        async with database.read() as conn:
            events = events_in(conn)
            assert await events.by_ids({lead.event_id, new_id()}) == {lead.event_id: lead}
            newest = await events.page([business_id], None, None, Page(limit=1))
            assert ([e.event_id for e in newest.rows], newest.has_more) == ([failed.event_id], True)
            assert [e.event_id for e in (await events.page([business_id], "lead.created", None,
                                                           Page(limit=5))).rows] == [lead.event_id]
            assert [e.event_id for e in (await events.page([business_id], None, AT + timedelta(seconds=30),
                                                           Page(limit=5))).rows] == [failed.event_id]
            both = ["lead.created", "call.failed"]
            assert await events.to_replay(business_id, [lead.event_id], None, None, [], 10) == [
                (lead.event_id, "lead.created")]
            assert await events.to_replay(business_id, [], AT, None, both, 10) == [
                (lead.event_id, "lead.created"), (failed.event_id, "call.failed")]
            assert await events.to_replay(business_id, [], AT, None, both, 1) == [(lead.event_id, "lead.created")]
            assert await events.to_replay(business_id, [], AT, AT + timedelta(seconds=30), ["call.failed"], 10) == []

    async def test_events_naming_a_person_are_found_in_their_business_by_any_value_and_rewritten(self, database,
                                                                                               events_in):
        business_id, other_business, call_id = new_id(), new_id(), new_id()
        made = [Envelope(event_id, kind, AT, business, data) for event_id, kind, business, data in [
            (new_id(), "sms.received", business_id, {"from": "+14155550142", "body": "it's me, Ann_Lee%"}),
            (new_id(), "dispatcher.briefing_created", business_id, {"needs_owner": [{"lead_id": "l-7"}]}),
            (new_id(), "call.completed", business_id, {"call_id": call_id, "summary": "ANN@EXAMPLE.COM wrote"}),
            (new_id(), "phone_number.assigned", business_id, {"phone_number": "+14155550142"}),  # skipped type
            (new_id(), "sms.received", business_id, {"from": "+14155550199", "body": "AnnXLee"}),  # _ is no wildcard
            (new_id(), "sms.received", other_business, {"from": "+14155550142"})]]
        needles = ["14155550142", "ann@example.com", "ann_lee%", "l-7", call_id]
        async with database.transaction() as conn:
            await events_in(conn).keep(made)
        mine = sorted(e.event_id for e in made[:3])
        async with database.transaction() as conn:
            events = events_in(conn)
            found = await events.naming(business_id, needles, ["phone_number.assigned"], None, 10)
            assert [e.event_id for e in found] == mine and found[0].data == {
                e.event_id: e.data for e in made}[mine[0]]
            first = await events.naming(business_id, needles, ["phone_number.assigned"], None, 2)
            rest = await events.naming(business_id, needles, ["phone_number.assigned"], first[-1].event_id, 2)
            assert [e.event_id for e in first + rest] == mine
            await events.rewrite({made[0].event_id: {"redacted": True}})
        async with database.read() as conn:
            after = await events_in(conn).by_ids([e.event_id for e in made])
        assert after[made[0].event_id].data == {"redacted": True}
        assert [after[e.event_id].data for e in made[1:]] == [e.data for e in made[1:]]


class DeliveriesRepositoryContract:
    """services.webhooks.repository.DeliveriesRepository (and the deliveries a removed subscription leaves)."""

    async def test_a_first_delivery_is_queued_once_and_replays_and_per_call_ones_always(self, database,
                                                                                        subscriptions_in,
                                                                                        deliveries_in):
        business_id, event_id = new_id(), new_id()
        later = AT + timedelta(days=3650)  # never due while the tests run: the stack's dispatcher leaves them
        async with database.transaction() as conn:
            sub = await subscriptions_in(conn).add_subscription(**subscription_values(business_id))
            deliveries = deliveries_in(conn)
            [first] = await deliveries.queue_once([delivery_values(sub.id, business_id, event_id, "lead.created", AT,
                                                                   next_attempt_at=later)])
            assert await deliveries.queue_once([delivery_values(sub.id, business_id, event_id, "lead.created",
                                                                AT, next_attempt_at=later)]) == []
            per_call = [delivery_values(None, business_id, event_id, "call.completed", AT, next_attempt_at=later,
                                        target_url="https://calls.example.com/1") for _ in range(2)]
            assert len(await deliveries.queue_once(per_call)) == 2
            [replay] = await deliveries.add([delivery_values(sub.id, business_id, event_id, "lead.created",
                                                             AT + timedelta(minutes=1), next_attempt_at=later,
                                                             replay=True)])
        assert (first.status, first.attempts, first.replay, first.next_attempt_at, first.last_status_code) == (
            "pending", 0, False, later, None)
        async with database.read() as conn:
            listed = await deliveries_in(conn).page([business_id], sub.id, None, None, Page(limit=10))
            assert [d.id for d in listed.rows] == [replay.id, first.id] and listed.rows[0].replay
            per_call_listed = await deliveries_in(conn).page([business_id], None, event_id, "pending", Page(limit=10))
            assert len(per_call_listed.rows) == 4
            assert (await deliveries_in(conn).page([new_id()], None, None, None, Page(limit=10))).rows == []

    async def test_due_deliveries_are_claimed_once_and_attempts_move_them_on(self, database, deliveries_in):
        business_id = new_id()
        with pytest.raises(_Rollback):
            async with database.transaction() as conn:
                deliveries = deliveries_in(conn)
                early, due, later = await deliveries.add([
                    delivery_values(None, business_id, new_id(), "call.completed", AT, target_url=url,
                                    next_attempt_at=at)
                    for url, at in [("https://a.example.com", AT - timedelta(days=400)),
                                    ("https://b.example.com", AT - timedelta(days=399)),
                                    ("https://c.example.com", datetime.now(UTC) + timedelta(hours=1))]])
                mine = {early.id, due.id, later.id}
                claimed = [d for d in await deliveries.claim_due(1000, timedelta(minutes=5)) if d.id in mine]
                assert sorted(d.id for d in claimed) == sorted([early.id, due.id])
                assert all(d.attempts == 1 and d.next_attempt_at > datetime.now(UTC) for d in claimed)
                assert not [d for d in await deliveries.claim_due(1000, timedelta(minutes=5)) if d.id in mine]
                moved_at = AT + timedelta(minutes=1)
                await deliveries.record_attempts([
                    {"delivery": early.id, "attempt": 1, "status": "delivered", "status_code": 200, "error": None,
                     "latency_ms": 5, "next_attempt_at": moved_at},
                    {"delivery": due.id, "attempt": 1, "status": "pending", "status_code": 500,
                     "error": "receiver answered 500", "latency_ms": 7, "next_attempt_at": AT + timedelta(hours=1)}],
                    moved_at)
                await deliveries.cancel([later.id])
                after = {d.id: d for d in (await deliveries.page([business_id], None, None, None,
                                                                 Page(limit=10))).rows}
                assert (after[early.id].status, after[early.id].delivered_at, after[early.id].last_status_code,
                        after[early.id].last_latency_ms) == ("delivered", moved_at, 200, 5)
                assert (after[due.id].status, after[due.id].next_attempt_at, after[due.id].last_error) == (
                    "pending", AT + timedelta(hours=1), "receiver answered 500")
                assert after[later.id].status == "canceled"
                raise _Rollback

    async def test_removing_a_subscription_cancels_its_pending_deliveries_only(self, database, subscriptions_in,
                                                                               deliveries_in):
        business_id = new_id()
        async with database.transaction() as conn:
            sub = await subscriptions_in(conn).add_subscription(**subscription_values(business_id))
            pending, delivered = await deliveries_in(conn).add([  # never due while the tests run
                delivery_values(sub.id, business_id, new_id(), "lead.created", AT,
                                next_attempt_at=AT + timedelta(days=3650)),
                {**delivery_values(sub.id, business_id, new_id(), "lead.created", AT), "status": "delivered"}])
            await subscriptions_in(conn).remove_subscription(sub.id)
        async with database.read() as conn:
            after = {d.id: d.status for d in (await deliveries_in(conn).page([business_id], None, None, None,
                                                                             Page(limit=10))).rows}
        assert after == {pending.id: "canceled", delivered.id: "delivered"}

    async def test_delivery_texts_naming_a_person_are_found_in_their_business_and_rewritten(self, database,
                                                                                            deliveries_in):
        business_id, later = new_id(), AT + timedelta(days=3650)  # never due while the tests run
        with pytest.raises(_Rollback):
            async with database.transaction() as conn:
                deliveries = deliveries_in(conn)
                named, plain, theirs = await deliveries.add([
                    delivery_values(None, business, new_id(), "call.completed", AT, next_attempt_at=later,
                                    target_url=url) for business, url in [
                        (business_id, "https://h.example.com/?caller=%2B14155550142"),
                        (business_id, "https://h.example.com/calls"),
                        (new_id(), "https://h.example.com/?caller=%2B14155550142")]])
                await deliveries.record_attempts([
                    {"delivery": d.id, "attempt": 1, "status": "pending", "status_code": None, "latency_ms": 3,
                     "error": f"could not connect for ANN@example.com ({d.target_url})", "next_attempt_at": later}
                    for d in (plain, theirs)], AT)
                needles = ["14155550142", "ann@example.com"]
                found = await deliveries.naming(business_id, needles)
                assert sorted(d.id for d in found) == sorted([named.id, plain.id])  # plain: by its last error
                attempts = await deliveries.attempts_naming(business_id, needles)
                assert [(delivery_id, error) for _, delivery_id, error in attempts] == [
                    (plain.id, "could not connect for ANN@example.com (https://h.example.com/calls)")]
                await deliveries.rewrite_texts({named.id: {"target_url": "https://h.example.com/?caller=x",
                                                           "last_error": None}}, {attempts[0][0]: "gone"})
                assert [d.id for d in await deliveries.naming(business_id, needles)] == [plain.id]
                assert await deliveries.attempts_naming(business_id, needles) == []
                listed = await deliveries.page([business_id], None, named.event_id, None, Page(limit=10))
                assert [d.target_url for d in listed.rows] == ["https://h.example.com/?caller=x"]
                raise _Rollback


def lead_values(**values) -> dict:
    """A lead as the create use case records it (schema.leads' required columns, scored), with `values` over it."""
    return {"name": "Sam Lee", "phone": "+14155550123", "status": "new", "source": "api", "score": 40,
            "score_confidence": "low", "score_explanation": "new lead", "score_factors": ["fresh"],
            "interaction_count": 0, "last_activity_at": AT, **values}


class LeadsRepositoryContract:
    """services.sdr.repository.LeadsRepository."""

    async def test_a_lead_is_found_in_its_businesses_only_with_its_defaults(self, database, leads_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = await leads_in(conn).add(business_id, lead_values(), AT)
        assert (added.business_id, added.created_at, added.updated_at, added.score_factors) == (
            business_id, AT, AT, ["fresh"])
        assert (added.touch_count, added.paused, added.intent, added.agent_id, added.pipeline_segment) == (
            0, False, None, None, None)
        async with database.transaction() as conn:
            found = await leads_in(conn).owned((new_id(), business_id), added.id, lock=True)
        async with database.read() as conn:
            assert await leads_in(conn).owned((new_id(),), added.id) is None
            assert await leads_in(conn).owned((business_id,), new_id()) is None
        assert (found.id, found.name, found.phone, found.score) == (added.id, "Sam Lee", "+14155550123", 40)

    async def test_a_change_answers_the_lead_after_it(self, database, leads_in):
        business_id, later = new_id(), AT + timedelta(hours=1)
        async with database.transaction() as conn:
            added = await leads_in(conn).add(business_id, lead_values(), AT)
            changed = await leads_in(conn).change(added.id, {"status": "qualified", "score": 70, "updated_at": later,
                                                             "score_factors": ["asked for a quote"]})
            assert await leads_in(conn).change(new_id(), {"status": "lost"}) is None
        assert (changed.id, changed.status, changed.score, changed.score_factors, changed.updated_at,
                changed.created_at, changed.name) == (added.id, "qualified", 70, ["asked for a quote"], later, AT,
                                                      "Sam Lee")
        async with database.read() as conn:
            assert (await leads_in(conn).owned((business_id,), added.id)).status == "qualified"

    async def test_the_newest_lead_with_a_phone_is_the_businesses_own(self, database, leads_in):
        business_id, phone = new_id(), "+14155550188"
        async with database.transaction() as conn:
            leads = leads_in(conn)
            await leads.lock_contact(business_id, phone)
            await leads.add(business_id, lead_values(phone=phone), AT - timedelta(days=1))
            newest = await leads.add(business_id, lead_values(phone=phone, name="Sam again"), AT)
            await leads.add(business_id, lead_values(phone="+14155550199"), AT + timedelta(days=1))
            await leads.add(new_id(), lead_values(phone=phone), AT + timedelta(days=1))  # another business's
            assert (await leads.newest_by_phone(business_id, phone, lock=True)).id == newest.id
        async with database.read() as conn:
            assert (await leads_in(conn).newest_by_phone(business_id, phone)).name == "Sam again"
            assert await leads_in(conn).newest_by_phone(business_id, "+14155550100") is None

    async def test_an_interaction_is_recorded_once_per_lead_and_reference(self, database, leads_in):
        business_id = new_id()
        async with database.transaction() as conn:
            lead = await leads_in(conn).add(business_id, lead_values(), AT)
            other = await leads_in(conn).add(business_id, lead_values(phone="+14155550177"), AT)
        async with database.transaction() as conn:
            leads = leads_in(conn)
            assert await leads.add_interaction(lead, "call", "inbound", "call-1", "booking", AT) is True
            assert await leads.add_interaction(lead, "sms", "outbound", "call-1", None, AT) is False
            assert await leads.add_interaction(lead, "sms", "outbound", "sms-1", None, AT) is True
            assert await leads.add_interaction(other, "call", "inbound", "call-1", None, AT) is True
        with pytest.raises(LookupError):
            async with database.transaction() as conn:
                assert await leads_in(conn).add_interaction(lead, "call", "inbound", "call-2", None, AT) is True
                raise LookupError("the use case refused")
        async with database.transaction() as conn:
            assert await leads_in(conn).add_interaction(lead, "call", "inbound", "call-2", None, AT) is True


async def new_account(conn, seed) -> str:
    """An account (a user row, written with the test module's `seed` fixture) of its own: its id."""
    from services.accounts.schema import users
    account_id = new_id()
    await seed(conn, users, id=account_id, email=f"{account_id}@example.com", created_at=AT)
    return account_id


def business_values(account_id: str, **values) -> dict:
    """A workspace as the create use case records it, with `values` over it."""
    return {"id": new_id(), "account_id": account_id, "name": "Acme Plumbing", "lifecycle_state": "active",
            "metadata": {"crm": "x1"}, "plan_id": "starter", "subscription_status": "trialing",
            "trial_ends_at": AT + timedelta(days=14), "created_at": AT, "updated_at": AT, **values}


def key_values(account_id: str, **values) -> dict:
    return {"id": new_id(), "account_id": account_id, "business_id": None, "name": "ci", "prefix": "sk_live_ab",
            "key_hash": f"hash-{new_id()}", "scopes": ["calls:read"], "created_at": AT, "expires_at": None, **values}


class AccountsRepositoryContract:
    """services.accounts.repository.AccountsRepository and HotPath (`workspaces`, its workspace read, on the committed
    rows); `seed(conn, table, **values)` writes a row of a table the repository does not keep."""

    async def test_a_workspace_is_recorded_changed_and_counted_in_its_accounts_standings(self, database, accounts_in,
                                                                                        seed):
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            added = await accounts_in(conn).add_business(**business_values(account_id))
            paused = await accounts_in(conn).add_business(**business_values(account_id, lifecycle_state="paused",
                                                                            subscription_status="active"))
        assert (added.timezone, added.paused_by_billing, added.external_ref, added.metadata) == (
            "UTC", False, None, {"crm": "x1"})
        async with database.transaction() as conn:
            accounts = accounts_in(conn)
            locked = await accounts.lock_business(added.id)
            changed = await accounts.change_business(added.id, {"name": "Acme North", "updated_at": AT + timedelta(1)})
            assert await accounts.lock_business(new_id()) is None
            assert await accounts.change_business(new_id(), {"name": "Nobody"}) is None
        assert (locked.id, locked.name, changed.id, changed.name, changed.plan_id) == (
            added.id, "Acme Plumbing", added.id, "Acme North", "starter")
        assert {type(added), type(locked), type(changed)} == {Business}  # records, never the driver's rows
        async with database.read() as conn:
            accounts = accounts_in(conn)
            assert await accounts.standings(account_id) == {added.id: "trialing", paused.id: "paused"}
            assert await accounts.standings(account_id, paused.id) == {paused.id: "paused"}
            assert await accounts.standings(other) == {}
            assert await accounts.business_of_account(account_id, added.id)
            assert not await accounts.business_of_account(other, added.id)

    async def test_keys_are_found_by_hash_listed_newest_first_and_changed_in_their_account_only(
            self, database, accounts_in, seed):
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            older = await accounts_in(conn).add_key(**key_values(account_id))
            newer = await accounts_in(conn).add_key(**key_values(account_id, created_at=AT + timedelta(minutes=1)))
        assert (older.scopes, older.revoked_at, older.last_used_at) == (["calls:read"], None, None)
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await accounts_in(conn).add_key(**key_values(other, key_hash=older.key_hash))
        async with database.transaction() as conn:
            accounts = accounts_in(conn)
            assert (await accounts.key_by_hash(["hash-none", older.key_hash])).id == older.id
            assert await accounts.key_by_hash(["hash-none"]) is None
            assert [k.id for k in await accounts.keys_of(account_id)] == [newer.id, older.id]
            assert await accounts.keys_of(other) == []
            assert (await accounts.change_key(older.id, account_id, {})).name == "ci"
            renamed = await accounts.change_key(older.id, account_id, {"name": "deploys", "scopes": ["leads:read"]})
            revoked = await accounts.change_key(older.id, account_id, {}, revoke_at=AT + timedelta(hours=1))
            again = await accounts.change_key(older.id, account_id, {"name": "old"}, revoke_at=AT + timedelta(hours=2))
            assert await accounts.change_key(older.id, other, {"name": "theirs"}) is None
            assert await accounts.change_key(new_id(), account_id, {}, revoke_at=AT) is None
        assert (renamed.name, renamed.scopes, renamed.revoked_at) == ("deploys", ["leads:read"], None)
        assert revoked.revoked_at == AT + timedelta(hours=1)
        assert (again.name, again.revoked_at) == ("old", AT + timedelta(hours=1))  # the first revocation stays

    async def test_a_session_is_found_by_its_hash(self, database, accounts_in, seed):
        from services.accounts.schema import sessions
        token_hash = f"session-{new_id()}"
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            await seed(conn, sessions, token_hash=token_hash, account_id=account_id, created_at=AT,
                       expires_at=AT + timedelta(days=30), last_used_at=AT)
        async with database.read() as conn:
            found = await accounts_in(conn).session(["session-none", token_hash])
            assert await accounts_in(conn).session(["session-none"]) is None
        assert (found.token_hash, str(found.account_id), found.expires_at, found.last_used_at) == (
            token_hash, account_id, AT + timedelta(days=30), AT)

    async def test_sessions_are_added_and_ended_one_or_all_of_an_account(self, database, accounts_in, seed):
        hashes = [f"session-{new_id()}" for _ in range(3)]
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            for token_hash in hashes:
                await accounts_in(conn).add_session(token_hash=token_hash, account_id=account_id, created_at=AT,
                                                    expires_at=AT + timedelta(days=30), last_used_at=AT)
        async with database.transaction() as conn:
            accounts = accounts_in(conn)
            assert await accounts.end_session(["session-none", hashes[0]]) == 1
            assert await accounts.end_session([hashes[0]]) == 0  # ended already
            assert await accounts.end_sessions_of(account_id) == 2
        async with database.read() as conn:
            assert await accounts_in(conn).session(hashes) is None

    async def test_a_workspace_is_read_with_its_signups_provisioning_when_it_has_one(self, database, accounts_in,
                                                                                    seed, workspaces):
        from services.accounts.schema import provisionings
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            plain = await accounts_in(conn).add_business(**business_values(account_id))
            signed_up = await accounts_in(conn).add_business(**business_values(account_id, external_ref="ext-1"))
            # Due only in a year: on the stack, the billing worker runs any due saga of the shared database.
            due = utcnow() + timedelta(days=365)
            await seed(conn, provisionings, id=new_id(), business_id=signed_up.id, status="retrying",
                       step="assign_number", forward_to="+14155550100", attempts=2, last_error="pool empty",
                       next_attempt_at=due, created_at=AT, updated_at=AT)
        found, saga = await workspaces.workspace(plain.id)
        assert (found.id, found.name, found.metadata, found.timezone, found.external_ref, saga) == (
            plain.id, "Acme Plumbing", {"crm": "x1"}, "UTC", None, None)
        found, saga = await workspaces.workspace(signed_up.id)
        assert found.external_ref == "ext-1"
        assert (saga.status, saga.step, saga.forward_to, saga.attempts, saga.last_error, saga.agent_id,
                saga.next_attempt_at) == ("retrying", "assign_number", "+14155550100", 2, "pool empty", None, due)
        assert await workspaces.workspace(new_id()) is None

    async def test_the_gateways_usage_is_appended_paged_newest_first_and_moves_its_keys_last_use_on(
            self, database, accounts_in, seed, workspaces):
        from services.accounts import store
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            one = await accounts_in(conn).add_business(**business_values(account_id))
            two = await accounts_in(conn).add_business(**business_values(account_id))
            key = await accounts_in(conn).add_key(**key_values(account_id))
        entries = [(new_id(), account_id, business.id, key.id, "/api/v1/agents", "GET", 200, None, 0,
                    AT + timedelta(minutes=n)) for n, business in ((0, one), (1, one), (2, two), (-1, one))]
        await workspaces.append_usage(entries[:2], {key.id: AT + timedelta(minutes=1)})
        await workspaces.append_usage(entries[2:3], {key.id: AT + timedelta(minutes=2)})
        await workspaces.append_usage(entries[3:], {key.id: AT - timedelta(minutes=1)})  # late: the last use stays
        async with database.read() as conn:
            accounts = accounts_in(conn)
            listed = await pages(lambda page: accounts.usage_page(account_id, None, None, None, page), 2)
            of_one = await pages(lambda page: accounts.usage_page(account_id, one.id, None, None, page), 10)
            within = await pages(lambda page: accounts.usage_page(
                account_id, None, AT + timedelta(minutes=1), AT + timedelta(minutes=2), page), 10)
            assert (await accounts.usage_page(other, None, None, None, Page(limit=10))).rows == []
            [used] = await accounts.keys_of(account_id)
        assert [tuple(getattr(u, c) for c in store.USAGE_COLUMNS) for u in listed] == [
            entries[2], entries[1], entries[0], entries[3]]
        assert [u.id for u in of_one] == [entries[1][0], entries[0][0], entries[3][0]]
        assert [u.id for u in within] == [entries[1][0]]
        assert {type(u) for u in listed} == {UsageRecord} and used.last_used_at == AT + timedelta(minutes=2)

    async def test_a_resent_usage_batch_adds_only_the_rows_not_there_yet(self, database, accounts_in, seed,
                                                                         workspaces):
        """A gateway resends a batch whose answer it lost with the same ids (issue 55's soak): no error, no row
        twice, and the key's last use still moves on."""
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            business = await accounts_in(conn).add_business(**business_values(account_id))
            key = await accounts_in(conn).add_key(**key_values(account_id))
        entries = [(new_id(), account_id, business.id, key.id, "/api/v1/calls", "POST", 201, None, 0,
                    AT + timedelta(minutes=n)) for n in range(3)]
        assert await workspaces.append_usage(entries[:2], {key.id: AT + timedelta(minutes=1)}) == 2
        assert await workspaces.append_usage(entries[:2], {key.id: AT + timedelta(minutes=1)}) == 0
        assert await workspaces.append_usage(entries, {key.id: AT + timedelta(minutes=2)}) == 1
        async with database.read() as conn:
            accounts = accounts_in(conn)
            listed = await pages(lambda page: accounts.usage_page(account_id, None, None, None, page), 10)
            [used] = await accounts.keys_of(account_id)
        assert [u.id for u in listed] == [e[0] for e in reversed(entries)]
        assert used.last_used_at == AT + timedelta(minutes=2)

    async def test_calls_are_billed_once_in_their_businesses_minutes_and_subscriptions_read_oldest_first(
            self, database, accounts_in, seed):
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            older = await accounts_in(conn).add_business(**business_values(account_id))
            newer = await accounts_in(conn).add_business(**business_values(
                account_id, subscription_status="active", created_at=AT + timedelta(days=1)))
        first, second = f"call-{new_id()}", f"call-{new_id()}"

        def call(business_id, call_id, minutes, at=AT):
            return {"id": new_id(), "account_id": account_id, "business_id": business_id, "call_id": call_id,
                    "minutes": minutes, "cost_cents": 12, "created_at": at}
        async with database.transaction() as conn:
            accounts = accounts_in(conn)
            assert await accounts.accounts_of({older.id, newer.id, new_id()}) == {older.id: account_id,
                                                                                 newer.id: account_id}
            assert await accounts.append_call_usage([call(older.id, first, 2), call(older.id, first, 5),
                                                     call(older.id, second, 1, AT + timedelta(minutes=1))]) == 2
            assert await accounts.append_call_usage([call(older.id, first, 9)]) == 0  # billed already
            assert await accounts.append_call_usage([]) == 0
        async with database.read() as conn:
            accounts = accounts_in(conn)
            assert await accounts.minutes_used([older.id, newer.id, new_id()]) == {older.id: 3}
            subscriptions = await accounts.subscriptions_of([newer.id, older.id])
            listed = (await accounts.usage_page(account_id, None, None, None, Page(limit=10))).rows
        assert [(s.id, s.subscription_status) for s in subscriptions] == [(older.id, "trialing"),
                                                                          (newer.id, "active")]
        assert [(u.call_id, u.method, u.endpoint, u.status_code, u.api_key_id, u.cost_cents) for u in listed] == [
            (second, "CALL", "/api/v1/calls", 200, None, 12), (first, "CALL", "/api/v1/calls", 200, None, 12)]


def saga_values(business_id: str, **values) -> dict:
    """A signup's saga as its start records it (waiting for the payment), with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "status": "waiting_payment", "step": "agent",
            "forward_to": "+14155550177", "next_attempt_at": AT, "created_at": AT, "updated_at": AT, **values}


async def new_businesses(database, accounts_in, seed, count: int = 1, **values) -> list[str]:
    """`count` workspaces (`business_values` with `values` over them) of an account of their own: their ids."""
    async with database.transaction() as conn:
        account_id = await new_account(conn, seed)
        return [(await accounts_in(conn).add_business(**business_values(account_id, **values))).id
                for _ in range(count)]


class ProvisioningRepositoryContract:
    """services.accounts.provisioning_repository.SqlProvisioning (`provisioning_in`); `accounts_in` records the
    businesses the sagas are of, `seed(conn, table, **values)` their accounts."""

    async def test_a_saga_is_one_of_its_business_and_moves_on_from_waiting_for_its_payment_only(
            self, database, provisioning_in, accounts_in, seed):
        [business_id] = await new_businesses(database, accounts_in, seed, business_type="plumber",
                                             website="https://acme.example")
        saga = saga_values(business_id)
        async with database.transaction() as conn:
            await provisioning_in(conn).add(**saga)
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await provisioning_in(conn).add(**saga_values(business_id))
        later = datetime.now(UTC) + timedelta(days=1)  # not due while the test runs (the stack's worker runs due ones)
        async with database.transaction() as conn:
            provisioning = provisioning_in(conn)
            waiting = await provisioning.of_business(business_id)
            await provisioning.update_waiting(business_id, {"status": "pending", "next_attempt_at": later})
            await provisioning.update_waiting(business_id, {"status": "canceled"})  # no longer waiting: no change
            await provisioning.update_waiting(new_id(), {"status": "canceled"})
        async with database.read() as conn:
            provisioning = provisioning_in(conn)
            due = await provisioning.of_business(business_id)
            business = await provisioning.business(business_id)
            assert await provisioning.of_business(new_id()) is None
            assert await provisioning.business(new_id()) is None
        assert waiting == SagaRecord(saga["id"], business_id, "waiting_payment", "agent", "+14155550177", None, None,
                                     0, None, AT, None)
        assert (due.status, due.next_attempt_at) == ("pending", later)
        assert business == SagaBusiness(business_id, "Acme Plumbing", "plumber", "https://acme.example", "active")

    async def test_due_sagas_are_claimed_oldest_first_each_once_under_a_lease(self, database, provisioning_in,
                                                                               accounts_in, seed):
        ids = await new_businesses(database, accounts_in, seed, count=7)
        now, long_ago = datetime.now(UTC), AT - timedelta(days=30)  # older than any other test's due saga
        sagas = [saga_values(ids[0], status="retrying", next_attempt_at=long_ago + timedelta(hours=2)),
                 saga_values(ids[1], status="pending", next_attempt_at=long_ago,  # its runner's lease ran out
                             lease_token=new_id(), lease_until=now - timedelta(minutes=5)),
                 saga_values(ids[2], status="pending", next_attempt_at=long_ago + timedelta(hours=1)),
                 saga_values(ids[3], next_attempt_at=long_ago),  # waiting for its payment
                 saga_values(ids[4], status="done", next_attempt_at=long_ago),
                 saga_values(ids[5], status="pending", next_attempt_at=now + timedelta(hours=1)),  # not yet
                 saga_values(ids[6], status="retrying", next_attempt_at=long_ago,  # another runner has it
                             lease_token=new_id(), lease_until=now + timedelta(minutes=5))]
        with pytest.raises(_Rollback):  # its claims would take the stack's due sagas: nothing of it stays
            async with database.transaction() as conn:
                provisioning = provisioning_in(conn)
                for saga in sagas:
                    await provisioning.add(**saga)
                first = await provisioning.claim_due(2, timedelta(minutes=2))
                rest = [s for s in await provisioning.claim_due(50, timedelta(minutes=2)) if s.business_id in ids]
                again = [s for s in await provisioning.claim_due(50, timedelta(minutes=2)) if s.business_id in ids]
                raise _Rollback
        assert {s.id for s in first} == {sagas[1]["id"], sagas[2]["id"]}  # the two due longest
        assert [s.id for s in rest] == [sagas[0]["id"]] and again == []
        tokens = {s.lease_token for s in first + rest}
        assert len(tokens) == 3 and None not in tokens and sagas[1]["lease_token"] not in tokens
        assert {type(s) for s in first + rest} == {SagaRecord}

    async def test_only_the_lease_holder_moves_a_saga_on(self, database, provisioning_in, accounts_in, seed):
        [business_id] = await new_businesses(database, accounts_in, seed)
        token, agent_id, now = new_id(), new_id(), datetime.now(UTC)
        saga = saga_values(business_id, status="pending", lease_token=token,
                           lease_until=now - timedelta(seconds=1))  # run out, and taken by nobody
        async with database.transaction() as conn:  # one transaction: the stack's worker never sees it due
            provisioning = provisioning_in(conn)
            await provisioning.add(**saga)
            assert await provisioning.leased_update(saga["id"], new_id(), {"step": "number"}) is None
            assert await provisioning.leased_update(new_id(), token, {"step": "number"}) is None
            moved = await provisioning.leased_update(saga["id"], token, {"step": "number", "agent_id": agent_id})
            released = await provisioning.leased_update(saga["id"], token, {
                "status": "retrying", "attempts": 1, "last_error": "no phone number is free",
                "next_attempt_at": now + timedelta(days=1), "lease_token": None, "lease_until": None})
            assert await provisioning.leased_update(saga["id"], token, {"status": "done"}) is None
        async with database.read() as conn:
            assert await provisioning_in(conn).of_business(business_id) == released
        assert (moved.step, moved.agent_id, moved.lease_token, moved.status) == ("number", agent_id, token, "pending")
        assert (released.status, released.step, released.attempts, released.last_error, released.lease_token) == (
            "retrying", "number", 1, "no phone number is free", None)


def client_values(**values) -> dict:
    """A client as registration records it, with `values` over it."""
    return {"client_id": f"sbc_{new_id()}", "source": "registration", "client_name": "Claude",
            "client_uri": None, "redirect_uris": ["https://claude.example/callback"],
            "grant_types": ["authorization_code", "refresh_token"], "created_at": AT, **values}


def grant_values(account_id: str, client_id: str, **values) -> dict:
    """A grant as the account user's approval records it, with `values` over it."""
    return {"id": new_id(), "account_id": account_id, "client_id": client_id, "scopes": ["calls:read"],
            "business_ids": [new_id()], "resource": "https://switchboard.example/api/mcp", "created_at": AT,
            **values}


class OAuthRepositoryContract:
    """services.accounts.oauth_repository.OAuthRepository (`oauth_in`); `accounts_in` records the businesses its
    consent reads, `seed(conn, table, **values)` the accounts."""

    async def test_a_client_is_registered_once_and_a_documents_client_is_saved_again_when_fetched_again(
            self, database, oauth_in):
        document = f"https://client-{new_id()}.example/oauth.json"
        async with database.transaction() as conn:
            registered = await oauth_in(conn).add_client(**client_values())
            first = await oauth_in(conn).save_client_document(**client_values(
                client_id=document, source="metadata_document", client_name="Old", fetched_at=AT))
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await oauth_in(conn).add_client(**client_values(client_id=registered.client_id))
        async with database.transaction() as conn:
            again = await oauth_in(conn).save_client_document(**client_values(
                client_id=document, source="metadata_document", client_name="New", client_uri="https://c.example",
                redirect_uris=["https://c.example/cb"], grant_types=["authorization_code"],
                created_at=AT + timedelta(hours=2), fetched_at=AT + timedelta(hours=2)))
        async with database.read() as conn:
            assert await oauth_in(conn).client(registered.client_id) == registered
            assert await oauth_in(conn).client(document) == again
            assert await oauth_in(conn).client("sbc_nobody") is None
        assert (registered.source, registered.client_name, registered.redirect_uris, registered.fetched_at) == (
            "registration", "Claude", ["https://claude.example/callback"], None)
        assert (first.client_name, first.fetched_at) == ("Old", AT)
        assert (again.source, again.client_name, again.client_uri, again.redirect_uris, again.grant_types,
                again.created_at, again.fetched_at) == (
            "metadata_document", "New", "https://c.example", ["https://c.example/cb"], ["authorization_code"], AT,
            AT + timedelta(hours=2))  # known since the first fetch

    async def test_grants_are_listed_touched_and_revoked_in_their_account_only(self, database, oauth_in, seed):
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            client = await oauth_in(conn).add_client(**client_values())
            business_id = new_id()
            older = grant_values(account_id, client.client_id, business_ids=[business_id])
            newer = grant_values(account_id, client.client_id, scopes=["calls:read", "leads:read"],
                                 created_at=AT + timedelta(minutes=1))
            for values in (older, newer, grant_values(other, client.client_id)):
                await oauth_in(conn).add_grant(**values)
        async with database.transaction() as conn:
            oauth = oauth_in(conn)
            assert [c.id for c in await oauth.connections_of(account_id)] == [newer["id"], older["id"]]
            await oauth.touch_grant(older["id"], AT + timedelta(hours=1))
            assert await oauth.revoke_grant(older["id"], AT + timedelta(hours=2), other) is None  # not theirs
            assert await oauth.revoke_grant(newer["id"], AT + timedelta(hours=2), account_id) == account_id
            assert await oauth.revoke_grant(newer["id"], AT + timedelta(hours=3)) == account_id
            assert await oauth.revoke_grant(new_id(), AT) is None
        async with database.read() as conn:
            oauth = oauth_in(conn)
            found, revoked = await oauth.grant(older["id"]), await oauth.grant(newer["id"])
            listed = await oauth.connections_of(account_id)
            assert await oauth.grant(new_id()) is None
            assert await oauth.has_grant(account_id, client.client_id)
            assert not await oauth.has_grant(account_id, "sbc_nobody")
        assert (found.account_id, found.client_id, found.scopes, found.business_ids, found.resource,
                found.last_used_at, found.revoked_at) == (
            account_id, client.client_id, ["calls:read"], [business_id], "https://switchboard.example/api/mcp",
            AT + timedelta(hours=1), None)
        assert (revoked.scopes, revoked.revoked_at) == (["calls:read", "leads:read"], AT + timedelta(hours=2))
        assert [(c.id, c.client_id, c.client_name, c.scopes, c.business_ids, c.last_used_at) for c in listed] == [
            (older["id"], client.client_id, "Claude", ["calls:read"], [business_id], AT + timedelta(hours=1))]
        async with database.transaction() as conn:
            await oauth_in(conn).revoke_grant(older["id"], AT)
        async with database.read() as conn:
            assert not await oauth_in(conn).has_grant(account_id, client.client_id)
            assert await oauth_in(conn).connections_of(account_id) == []
            assert await oauth_in(conn).has_grant(other, client.client_id)

    async def test_codes_and_refresh_tokens_are_taken_with_their_grant_and_marked_used(self, database, oauth_in,
                                                                                       seed):
        code_hash, token_hash = f"code-{new_id()}", f"refresh-{new_id()}"
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            client = await oauth_in(conn).add_client(**client_values())
            grant = grant_values(account_id, client.client_id)
            await oauth_in(conn).add_grant(**grant)
            await oauth_in(conn).add_code(code_hash=code_hash, grant_id=grant["id"],
                                          redirect_uri="https://claude.example/callback", code_challenge="challenge",
                                          expires_at=AT + timedelta(minutes=1))
            await oauth_in(conn).add_refresh_token(token_hash=token_hash, grant_id=grant["id"], created_at=AT,
                                                   expires_at=AT + timedelta(days=30))
        async with database.transaction() as conn:
            oauth = oauth_in(conn)
            code = await oauth.take_code(["code-none", code_hash])
            token = await oauth.take_refresh_token(["refresh-none", token_hash])
            assert await oauth.take_code(["code-none", token_hash]) is None
            assert await oauth.take_refresh_token([code_hash]) is None
            await oauth.use_code(code_hash, AT + timedelta(seconds=5))
            await oauth.use_refresh_token(token_hash, AT + timedelta(seconds=6))
        assert (code.code_hash, code.grant_id, code.redirect_uri, code.code_challenge, code.expires_at,
                code.used_at, code.account_id, code.client_id, code.scopes, code.resource, code.revoked_at) == (
            code_hash, grant["id"], "https://claude.example/callback", "challenge", AT + timedelta(minutes=1), None,
            account_id, client.client_id, ["calls:read"], grant["resource"], None)
        assert (token.token_hash, token.grant_id, token.created_at, token.expires_at, token.used_at,
                token.account_id, token.client_id, token.scopes, token.resource, token.revoked_at) == (
            token_hash, grant["id"], AT, AT + timedelta(days=30), None, account_id, client.client_id,
            ["calls:read"], grant["resource"], None)
        async with database.transaction() as conn:
            await oauth_in(conn).revoke_grant(grant["id"], AT + timedelta(hours=1))
            code = await oauth_in(conn).take_code([code_hash])
            token = await oauth_in(conn).take_refresh_token([token_hash])
        assert (code.used_at, code.revoked_at) == (AT + timedelta(seconds=5), AT + timedelta(hours=1))
        assert (token.used_at, token.revoked_at) == (AT + timedelta(seconds=6), AT + timedelta(hours=1))

    async def test_the_businesses_of_an_account_are_named_oldest_first(self, database, oauth_in, accounts_in, seed):
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            newer = await accounts_in(conn).add_business(**business_values(account_id, name="Newer",
                                                                            created_at=AT + timedelta(days=1)))
            older = await accounts_in(conn).add_business(**business_values(account_id, name="Older"))
            await accounts_in(conn).add_business(**business_values(other))
        async with database.read() as conn:
            named = await oauth_in(conn).businesses_named(account_id)
            ids = await oauth_in(conn).business_ids_of(account_id)
            assert await oauth_in(conn).businesses_named(new_id()) == []
        assert [(b.id, b.name) for b in named] == [(older.id, "Older"), (newer.id, "Newer")]
        assert sorted(ids) == sorted([older.id, newer.id])


class SignupRepositoryContract:
    """The signup part of services.accounts.repository.AccountsRepository (`accounts_in`): the address's attempts,
    the account and undoing it (with the x402 payment it takes along, read by `billing_in`), and what a new checkout
    reads; `seed(conn, table, **values)` writes the accounts."""

    async def test_an_addresss_attempts_are_counted_since_a_time_and_older_ones_forgotten(self, database,
                                                                                         accounts_in):
        address = f"test-{new_id()}"
        async with database.transaction() as conn:
            for minutes in (0, 50, 70):
                await accounts_in(conn).add_signup_attempt(address, AT + timedelta(minutes=minutes))
        async with database.transaction() as conn:
            assert await accounts_in(conn).count_signup_attempts(address, AT + timedelta(minutes=10)) == (
                2, AT + timedelta(minutes=50))
            assert await accounts_in(conn).count_signup_attempts(f"test-{new_id()}", AT) == (0, None)
        async with database.transaction() as conn:  # the one before the window is gone
            assert await accounts_in(conn).count_signup_attempts(address, AT - timedelta(minutes=10)) == (
                2, AT + timedelta(minutes=50))

    async def test_an_address_has_one_account_and_undoing_it_leaves_nothing(self, database, accounts_in,
                                                                            billing_in):
        account_id, email = new_id(), f"owner-{new_id()}@example.com"
        async with database.transaction() as conn:
            accounts = accounts_in(conn)
            assert not await accounts.email_taken(email)
            assert await accounts.add_user(id=account_id, email=email, email_confirmed_at=None, created_at=AT)
            assert not await accounts.add_user(id=new_id(), email=email, email_confirmed_at=None, created_at=AT)
            assert await accounts.email_taken(email)
            business = await accounts.add_business(**business_values(account_id))
            key = await accounts.add_key(**key_values(account_id))
            await accounts.add_magic_link(token_hash=f"link-{new_id()}", account_id=account_id,
                                          expires_at=AT + timedelta(minutes=15))
            await billing_in(conn).add_x402_payment(**payment_values(business.id))
        async with database.transaction() as conn:
            await accounts_in(conn).delete_account(account_id)
        async with database.read() as conn:
            assert not await accounts_in(conn).email_taken(email)
            assert await billing_in(conn).business(business.id) is None
            assert await accounts_in(conn).key_by_hash([key.key_hash]) is None
            assert not await billing_in(conn).has_pending_x402(business.id)

    async def test_a_new_checkout_reads_the_businesss_billing_and_its_owners_address(self, database, accounts_in,
                                                                                    seed):
        from services.accounts.records import CheckoutFacts
        async with database.transaction() as conn:
            account_id = await new_account(conn, seed)
            business = await accounts_in(conn).add_business(**business_values(
                account_id, subscription_status="past_due", subscription_id=f"sub_{new_id()}",
                customer_id=f"cus_{new_id()}", checkout_session_id=f"cs_{new_id()}"))
        async with database.read() as conn:
            facts = await accounts_in(conn).checkout_facts(business.id)
            assert await accounts_in(conn).checkout_facts(new_id()) is None
        assert facts == CheckoutFacts(business.id, "active", "past_due", business.subscription_id, "starter",
                                      business.customer_id, business.checkout_session_id, f"{account_id}@example.com")


def payment_values(business_id: str, **values) -> dict:
    """An x402 payment as x402_billing records it before settling it, with `values` over it; due (for the
    reconciler) in an hour."""
    return {"id": new_id(), "business_id": business_id, "purpose": "signup", "status": "pending",
            "payer": f"0x{uuid.uuid4().hex}", "nonce": f"0x{uuid.uuid4().hex}", "valid_before": None,
            "network": "eip155:84532", "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "amount": "49000000",
            "payload": {"x402Version": 2}, "requirements": {"scheme": "exact"},
            "next_attempt_at": utcnow() + timedelta(hours=1), "created_at": AT, **values}  # not due: see below


async def businesses_of(database, accounts_in, seed, *many: dict) -> list[str]:
    """Workspaces of an account of their own, each `business_values` with its dict over them: their ids."""
    async with database.transaction() as conn:
        account_id = await new_account(conn, seed)
        return [(await accounts_in(conn).add_business(**business_values(account_id, **values))).id
                for values in many]


class BillingRepositoryContract:
    """services.accounts.billing_repository.SqlBilling (`billing_in`); `accounts_in` records the businesses,
    `seed(conn, table, **values)` the accounts. Its searches are checked on the test's own businesses (the SQL ones
    share the stack's database), and what the stack's billing worker would move (a workspace due, a pending one
    whose lease ran out, a payment due) is made and checked in a transaction rolled back, which it cannot see."""

    async def test_a_provider_event_is_recorded_once_and_finds_its_business_by_id_subscription_or_customer(
            self, database, accounts_in, billing_in, seed):
        subscription, customer = f"sub_{new_id()}", f"cus_{new_id()}"
        [business_id] = await businesses_of(database, accounts_in, seed, {"subscription_id": subscription,
                                                                           "customer_id": customer})
        event_id = f"evt_{new_id()}"
        async with database.transaction() as conn:
            billing = billing_in(conn)
            found = [await billing.lock_business_by(*named) for named in (
                (business_id, None, None), (None, subscription, None), (None, None, customer),
                (new_id(), "sub_none", customer))]
            assert await billing.lock_business_by(new_id(), "sub_none", "cus_none") is None
            assert await billing.lock_business_by(None, None, None) is None
            assert await billing.record_payment_event(event_id, "invoice.paid", business_id, AT, AT)
            assert not await billing.record_payment_event(event_id, "invoice.paid", business_id, AT, AT)
            assert await billing.record_payment_event(f"evt_{new_id()}", "invoice.paid", None, AT, AT)
        async with database.read() as conn:
            read = await billing_in(conn).business(business_id)
            assert await billing_in(conn).business(new_id()) is None
        assert {type(b) for b in (*found, read)} == {Business}
        assert [b.id for b in found] == [business_id] * 4 and found[0] == read
        assert (read.subscription_id, read.customer_id) == (subscription, customer)

    async def test_billing_finds_the_workspaces_it_may_have_to_move_and_the_x402_periods_to_remind_of(
            self, database, accounts_in, billing_in, seed):
        now, grace = AT + timedelta(days=30), timedelta(hours=1)
        x402 = {"payment_capture": "x402", "subscription_status": "active"}
        cases = {
            "due": [
                {"subscription_status": "past_due", "past_due_since": now - 2 * grace},  # overdue past the grace
                {"subscription_status": "incomplete", "trial_ends_at": now},  # a trial ended without a checkout
                {"subscription_status": "active", "paid_through": now - grace},  # an x402 period run out
                {"lifecycle_state": "paused", "subscription_status": "canceled"},
                {"lifecycle_state": "paused", "paused_by_billing": True, "subscription_status": "active"}],  # paid
            "not due": [
                {"subscription_status": "past_due", "past_due_since": now - grace / 2},  # in its grace
                {"subscription_status": "incomplete", "trial_ends_at": now + grace},
                {"subscription_status": "active", "paid_through": now - grace / 2},
                {"lifecycle_state": "inactive", "subscription_status": "canceled"},
                {"lifecycle_state": "paused", "subscription_status": "active"},  # the owner's pause
                {"lifecycle_state": "paused", "paused_by_billing": True, "subscription_status": "active",
                 "past_due_since": now - grace},
                {"lifecycle_state": "paused", "paused_by_billing": True, "subscription_status": "active",
                 "paid_through": now},
                {"subscription_status": "trialing"}],
            "remind": [{**x402, "paid_through": now + timedelta(days=2)}],
            "no reminder": [
                {**x402, "paid_through": now + timedelta(days=2), "renewal_reminded_through": now + timedelta(days=2)},
                {**x402, "paid_through": now + timedelta(days=5)},
                {**x402, "paid_through": now},
                {**x402, "paid_through": now + timedelta(days=1), "lifecycle_state": "paused"},
                {"payment_capture": "stripe_checkout", "subscription_status": "active",
                 "paid_through": now + timedelta(days=1)}]}
        with pytest.raises(_Rollback):
            async with database.transaction() as conn:
                account_id = await new_account(conn, seed)
                made = {case: [(await accounts_in(conn).add_business(**business_values(account_id, **values))).id
                               for values in many] for case, many in cases.items()}
                moving = set(await billing_in(conn).billing_due(now, grace))
                reminding = set(await billing_in(conn).renewals_to_remind(now, timedelta(days=3)))
                raise _Rollback
        assert moving & {*made["due"], *made["not due"]} == set(made["due"])
        assert reminding & {*made["remind"], *made["no reminder"]} == set(made["remind"])

    async def test_the_payer_is_the_accounts_first_workspace_paying_for_itself_and_others_are_billed_on_it(
            self, database, accounts_in, billing_in, seed):
        from services.accounts.records import LiveWorkspace
        async with database.transaction() as conn:
            account_id, other = await new_account(conn, seed), await new_account(conn, seed)
            accounts = accounts_in(conn)
            payer = await accounts.add_business(**business_values(account_id))
            branch, torn_down = [await accounts.add_business(**business_values(
                account_id, billed_on=payer.id, created_at=AT + timedelta(minutes=n), lifecycle_state=state))
                for n, state in ((1, "active"), (2, "inactive"))]
            paid_by_x402 = await accounts.add_business(**business_values(
                account_id, payment_capture="x402", created_at=AT + timedelta(minutes=3)))
        async with database.transaction() as conn:
            locked = await billing_in(conn).payer(account_id)
        async with database.read() as conn:
            billing = billing_in(conn)
            read = await billing.payer(account_id, lock=False)
            live = await billing.live_workspaces(account_id)
            billed = await billing.billed_on(payer.id)
            assert await billing.payer(other, lock=False) is None
            assert await billing.live_workspaces(other) == []
            assert await billing.billed_on(branch.id) == []
        assert locked == read == payer
        assert sorted(live, key=lambda w: w.id) == sorted(
            (LiveWorkspace(b.id, b.billed_on, "trialing", None) for b in (payer, branch, paid_by_x402)),
            key=lambda w: w.id)
        assert billed == [branch] and torn_down.id not in {w.id for w in live}

    async def test_a_pending_workspace_is_taken_over_retried_and_undone_by_its_lease_only(
            self, database, accounts_in, billing_in, seed):
        from services.accounts.records import PendingWorkspace
        [payer] = await businesses_of(database, accounts_in, seed, {})
        pending = {"billed_on": payer, "subscription_status": "incomplete", "lease_token": new_id(),
                   "lease_until": AT}
        with pytest.raises(_Rollback):
            async with database.transaction() as conn:
                account_id = await new_account(conn, seed)
                billing = billing_in(conn)
                ran_out, held = [await accounts_in(conn).add_business(**business_values(account_id, **values))
                                 for values in (pending, {**pending, "lease_until": utcnow() + timedelta(hours=1)})]
                found = await billing.pending_workspaces(utcnow())
                token = await billing.take_lease(ran_out.id, timedelta(minutes=1))
                assert await billing.take_lease(ran_out.id, timedelta(minutes=1)) is None  # taken now
                assert await billing.take_lease(held.id, timedelta(minutes=1)) is None
                assert await billing.take_lease(new_id(), timedelta(minutes=1)) is None
                await billing.retry_pending_workspace(ran_out.id, ran_out.lease_token, AT)  # not its lease any more
                await billing.retry_pending_workspace(held.id, held.lease_token, AT + timedelta(days=1))
                await billing.delete_pending_workspace(ran_out.id, ran_out.lease_token)
                taken = await billing.business(ran_out.id)
                retried = await billing.business(held.id)
                await billing.delete_pending_workspace(ran_out.id, token)
                await accounts_in(conn).change_business(held.id, {"subscription_status": "trialing"})
                await billing.delete_pending_workspace(held.id, held.lease_token)  # billed meanwhile: kept
                gone, kept = await billing.business(ran_out.id), await billing.business(held.id)
                raise _Rollback
        assert PendingWorkspace(ran_out.id, account_id) in found and held.id not in {w.id for w in found}
        assert token is not None and (taken.lease_token, taken.billed_on) == (token, payer)
        assert taken.lease_until > utcnow() and retried.lease_until == AT + timedelta(days=1)
        assert gone is None and kept is not None

    async def test_an_x402_payment_is_recorded_once_per_authorization_claimed_when_due_and_goes_with_its_business(
            self, database, accounts_in, billing_in, seed):
        from services.accounts.records import X402Payment
        [business_id] = await businesses_of(database, accounts_in, seed, {"payment_capture": "x402"})
        first, later, due = (payment_values(business_id, **values) for values in ({}, {}, {"next_attempt_at": AT}))
        async with database.transaction() as conn:
            billing = billing_in(conn)
            assert await billing.add_x402_payment(**first)
            assert not await billing.add_x402_payment(**{**first, "id": new_id()})  # the same authorization
            assert await billing.add_x402_payment(**later)
            by_id = await billing.x402_payment(id=first["id"], lock=True)
            by_authorization = await billing.x402_payment(payer=first["payer"], nonce=first["nonce"])
            assert await billing.x402_payment(payer=first["payer"], nonce="0xnone") is None
            assert await billing.x402_payment(id=new_id()) is None
            owner = await billing.business_of_x402_payment(first["id"])
            assert await billing.business_of_x402_payment(new_id()) is None
        assert type(by_id) is X402Payment and by_id == by_authorization
        assert (by_id.status, by_id.attempts, by_id.payload, by_id.transaction, by_id.settled_at) == (
            "pending", 0, {"x402Version": 2}, None, None)
        assert type(owner) is Business and owner.id == business_id
        with pytest.raises(_Rollback):  # the claim would take the stack's due payments too
            async with database.transaction() as conn:
                await billing_in(conn).add_x402_payment(**due)
                claimed = await billing_in(conn).claim_due_x402_payments(1000, timedelta(minutes=5))
                raise _Rollback
        [mine] = [p for p in claimed if p.business_id == business_id]
        assert (mine.id, mine.attempts) == (due["id"], 1) and mine.next_attempt_at > utcnow()
        async with database.transaction() as conn:
            billing = billing_in(conn)
            assert await billing.has_pending_x402(business_id)
            await billing.change_x402_payment(first["id"], {"status": "settled", "next_attempt_at": None})
            await billing.change_x402_payment(later["id"], {"status": "unresolved"})
            assert await billing.has_pending_x402(business_id)  # an unresolved one is checked by an operator
            await billing.change_x402_payment(later["id"], {"status": "failed", "last_error": "refused"})
            assert not await billing.has_pending_x402(business_id)
            settled = await billing.x402_payment(id=first["id"])
            await billing.delete_business(business_id)
        assert (settled.status, settled.next_attempt_at) == ("settled", None)
        async with database.read() as conn:
            assert await billing_in(conn).x402_payment(id=first["id"]) is None
            assert await billing_in(conn).business(business_id) is None


def run_values(business_id: str, **values) -> dict:
    """A communication run as the create use case records it, with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "account_id": new_id(), "external_ref": f"crm-{new_id()}",
            "idempotency_key": f"key-{new_id()}", "request_hash": "hash-1", "status": "scheduled",
            "agent_id": new_id(), "retry": {"max_attempts": 1}, "touches": 2, "created_at": AT, "updated_at": AT,
            **values}


def job_values(run, touch_id: str, **values) -> dict:
    return {"id": new_id(), "run_id": run.id, "business_id": run.business_id, "touch_index": 0, "touch_id": touch_id,
            "channel": "call", "phone": "+14155550123", "timezone": None, "agent_id": run.agent_id,
            "context": {"name": "Sam"}, "scheduled_at": AT, "due_at": AT, "status": "pending", "created_at": AT,
            "updated_at": AT, **values}


def booking_values(business_id: str, starts_at: datetime, **values) -> dict:
    return {"id": new_id(), "business_id": business_id, "starts_at": starts_at,
            "ends_at": starts_at + timedelta(minutes=30), "status": "confirmed", "name": "Ann Lee",
            "phone_number": "+14155550123", "email": None, "notes": None, "lead_id": None, "call_id": None,
            "created_at": AT, "updated_at": AT, **values}


class BookingsRepositoryContract:
    """services.sdr.repository.BookingsRepository."""

    async def test_an_availability_is_saved_then_replaced(self, database, bookings_in):
        business_id = new_id()
        hours_ = {"mon": [["09:00", "12:00"]]}
        async with database.read() as conn:
            assert await bookings_in(conn).availability(business_id) is None
        async with database.transaction() as conn:
            first = await bookings_in(conn).save_availability(business_id, {
                "weekly_hours": hours_, "slot_minutes": 30, "buffer_minutes": 0, "blackout_dates": ["2026-03-10"],
                "horizon_days": 60}, AT)
            again = await bookings_in(conn).save_availability(business_id, {
                "weekly_hours": {}, "slot_minutes": 45, "buffer_minutes": 5, "blackout_dates": [],
                "horizon_days": 7}, AT + timedelta(hours=1))
        assert (first.weekly_hours, first.blackout_dates, first.updated_at) == (hours_, ["2026-03-10"], AT)
        async with database.read() as conn:
            found = await bookings_in(conn).availability(business_id)
            assert await bookings_in(conn).availability(new_id()) is None
        assert found == again and (found.slot_minutes, found.horizon_days) == (45, 7)

    async def test_bookings_are_found_in_their_business_and_the_confirmed_ones_by_time(self, database, bookings_in):
        business_id = new_id()
        async with database.transaction() as conn:
            bookings = bookings_in(conn)
            await bookings.lock(business_id)
            early = await bookings.add(booking_values(business_id, AT))
            late = await bookings.add(booking_values(business_id, AT + timedelta(hours=2)))
            gone = await bookings.add(booking_values(business_id, AT + timedelta(hours=1), status="canceled"))
            await bookings.add(booking_values(new_id(), AT))  # another business's
            moved = await bookings.change(early.id, {"starts_at": AT + timedelta(hours=3),
                                                     "ends_at": AT + timedelta(hours=3, minutes=30)})
        assert (moved.id, moved.starts_at, moved.name, moved.status) == (early.id, AT + timedelta(hours=3), "Ann Lee",
                                                                         "confirmed")
        async with database.read() as conn:
            bookings = bookings_in(conn)
            assert (await bookings.owned((new_id(), business_id), gone.id)).status == "canceled"
            assert await bookings.owned((new_id(),), gone.id) is None
            window = await bookings.confirmed_between(business_id, AT, AT + timedelta(hours=4))
            assert [b.id for b in window] == [late.id, early.id]  # soonest first; the canceled one left out
            assert [b.id for b in await bookings.confirmed_between(business_id, AT, AT + timedelta(hours=4),
                                                                   but=late.id)] == [early.id]
            # touching is not overlapping: a booking ending at `since` or starting at `until` is outside
            assert await bookings.confirmed_between(business_id, AT + timedelta(hours=2, minutes=30),
                                                    AT + timedelta(hours=3)) == []
            listed = await bookings.page([business_id], None, None, None, Page(limit=2))
            rest = await bookings.page([business_id], None, None, None, Page(limit=2, cursor=listed.next_cursor))
            assert [b.id for b in listed.rows + rest.rows] == [early.id, late.id, gone.id]  # latest start first
            assert [b.id for b in (await bookings.page([business_id], AT + timedelta(hours=1),
                                                       AT + timedelta(hours=3), "confirmed", Page(limit=9))).rows] == [
                late.id]


class RunsRepositoryContract:
    """services.sdr.repository.RunsRepository."""

    async def test_a_run_is_recorded_once_per_idempotency_key_and_found_by_it(self, database, runs_in):
        business_id = new_id()
        values = run_values(business_id)
        async with database.transaction() as conn:
            added = await runs_in(conn).add_run(**values)
            assert await runs_in(conn).add_run(**run_values(business_id, idempotency_key=values["idempotency_key"],
                                                            request_hash="hash-2")) is None
            elsewhere = await runs_in(conn).add_run(**run_values(new_id(), idempotency_key=values["idempotency_key"],
                                                                 external_ref=values["external_ref"]))
        assert (added.id, added.retry, added.started_at, added.ended_at) == (values["id"], {"max_attempts": 1}, None,
                                                                             None)
        assert elsewhere is not None and elsewhere.id != added.id
        async with database.read() as conn:
            found = await runs_in(conn).run_by_key(business_id, values["idempotency_key"])
            assert await runs_in(conn).run_by_key(business_id, "key-none") is None
            assert await runs_in(conn).run_by_key(new_id(), values["idempotency_key"]) is None
        assert (found.id, found.request_hash) == (added.id, "hash-1")

    async def test_another_run_of_the_business_with_its_external_ref_is_refused_by_name(self, database, runs_in):
        values = run_values(new_id())
        async with database.transaction() as conn:
            await runs_in(conn).add_run(**values)
        with pytest.raises(sa.exc.IntegrityError) as refused:
            async with database.transaction() as conn:
                await runs_in(conn).add_run(**run_values(values["business_id"], external_ref=values["external_ref"]))
        assert "communication_runs_external_ref" in str(refused.value.orig)

    async def test_jobs_are_counted_per_run_by_status(self, database, runs_in):
        business_id = new_id()
        async with database.transaction() as conn:
            run = await runs_in(conn).add_run(**run_values(business_id))
            other = await runs_in(conn).add_run(**run_values(business_id))
            await runs_in(conn).add_jobs([job_values(run, "t1"), job_values(run, "t2", touch_index=1),
                                          job_values(run, "t3", status="canceled"), job_values(other, "t1")])
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await runs_in(conn).add_jobs([job_values(run, "t1")])  # a touch is one job of its run
        async with database.read() as conn:
            counts = await runs_in(conn).job_counts([run.id, other.id, new_id()])
        assert counts == {run.id: {"pending": 2, "canceled": 1}, other.id: {"pending": 1}}

    async def test_a_plan_reads_the_callees_newest_leads_and_the_business_hours(self, database, runs_in, seed):
        """`seed` writes the rows the repository reads and does not keep (schema.leads, schema.configs)."""
        business_id, ca, ny = new_id(), "+14155550123", "+12125550100"
        leads = {}
        async with database.transaction() as conn:
            for business, phone, status, state, minutes in ((business_id, ca, "new", "CA", 0),
                                                            (business_id, ca, "converted", "NV", 5),
                                                            (business_id, ny, "lost", None, 0),
                                                            (new_id(), ny, "converted", "NY", 9)):
                leads[(business, phone, status)] = lead_id = new_id()
                await seed(conn, sdr_schema.leads, id=lead_id, business_id=business, **lead_values(
                    phone=phone, status=status, state=state, created_at=AT + timedelta(minutes=minutes),
                    updated_at=AT, last_inbound_at=AT - timedelta(days=minutes),
                    converted_at=AT if status == "converted" else None))
            await seed(conn, sdr_schema.configs, business_id=business_id, enabled=False, min_touch_gap_hours=24,
                       max_touches=5, auto_call=False, auto_email=False, auto_sms=False, business_hours_start=10,
                       business_hours_end=16, updated_at=AT)
        async with database.read() as conn:
            runs = runs_in(conn)
            callees = await runs.callees(business_id, [ca, ny, "+13035550100"])
            assert (await runs.business_hours(business_id), await runs.business_hours(new_id())) == (
                hours(10, 16), None)
        assert callees == {ca: {"id": leads[(business_id, ca, "converted")], "state": "NV", "status": "converted",
                                "converted_at": AT, "last_inbound_at": AT - timedelta(days=5)},
                           ny: {"id": leads[(business_id, ny, "lost")], "state": None, "status": "lost",
                                "converted_at": None, "last_inbound_at": AT}}


async def held_business(conn, seed) -> str:
    """A business of its own held from outreach (a paused standing, written with the test module's `seed`
    fixture): the stack's scheduler claims every other business's due jobs, and leaves its jobs to the contract."""
    business_id = new_id()
    await seed(conn, sdr_schema.standings, business_id=business_id, standing="paused", changed_at=AT)
    return business_id


def attempt_values(job: dict, attempt: int, **values) -> dict:
    """A call attempt of a job (job_values') as the scheduler records it, with `values` over it."""
    return {"id": new_id(), "job_id": job["id"], "run_id": job["run_id"], "business_id": job["business_id"],
            "attempt": attempt, "phone": job["phone"], "call_id": new_id(), "status": "placed", "created_at": AT,
            **values}


LEASE = timedelta(minutes=5)


class TouchesRepositoryContract:
    """services.sdr.repository.TouchesRepository. A due job is of a held business (held_business) or of a
    transaction rolled back: the stack's scheduler would take it. The SQL claims' skipping of each other's locked
    jobs is PostgreSQL's alone (tests/service/test_storage_contracts.py's TestSqlTouches); the in-memory twin runs
    one transaction at a time."""

    async def test_a_claim_takes_the_earliest_due_jobs_of_one_business_and_channel_under_a_lease(
            self, database, runs_in, touches_in, seed):
        later = utcnow() + timedelta(days=1)
        async with database.transaction() as conn:
            business_id, elsewhere = await held_business(conn, seed), await held_business(conn, seed)
            await seed(conn, sdr_schema.configs, business_id=business_id, enabled=False, min_touch_gap_hours=24,
                       max_touches=5, auto_call=False, auto_email=False, auto_sms=False, business_hours_start=10,
                       business_hours_end=16, updated_at=AT)
            runs = runs_in(conn)
            run = await runs.add_run(**run_values(business_id, retry={"max_retries": 1}))
            paused = await runs.add_run(**run_values(business_id, status="paused"))
            other = await runs.add_run(**run_values(elsewhere))
            hours_before = {"first": (2, "pending"), "second": (1, "deferred"), "third": (0, "retrying"),
                            "ended": (4, "succeeded"), "paused": (4, "paused")}
            await runs.add_jobs([
                *(job_values(run, t, due_at=AT - timedelta(hours=h), status=s) for t, (h, s) in hours_before.items()),
                job_values(run, "text", channel="sms", due_at=AT - timedelta(hours=3)),
                job_values(run, "later", due_at=later), job_values(paused, "t1", due_at=AT - timedelta(hours=5)),
                job_values(other, "t1", due_at=AT - timedelta(hours=5))])
        token = new_id()
        async with database.transaction() as conn:
            touches = touches_in(conn)
            first = await touches.claim(business_id, "call", 2, token, LEASE)
            rest = await touches.claim(business_id, "call", 10, new_id(), LEASE)
            texts = await touches.claim(business_id, "sms", 10, new_id(), LEASE)
            assert await touches.claim(business_id, "call", 0, new_id(), LEASE) == []
            [theirs] = await touches.claim(elsewhere, "call", 10, new_id(), LEASE)
        assert sorted(j.touch_id for j in first) == ["first", "second"]
        assert [j.touch_id for j in rest] == ["third"] and [j.touch_id for j in texts] == ["text"]
        claimed = next(j for j in first if j.touch_id == "first")
        assert type(claimed) is ClaimedJob and (claimed.status, claimed.lease_token, claimed.run_id, claimed.phone) == (
            "executing", token, run.id, "+14155550123")
        assert claimed.lease_until > utcnow() + LEASE - timedelta(minutes=1)
        assert (claimed.account_id, claimed.external_ref, claimed.retry, claimed.run_status, claimed.context) == (
            run.account_id, run.external_ref, {"max_retries": 1}, "scheduled", {"name": "Sam"})
        assert (claimed.business_hours_start, claimed.business_hours_end) == (10, 16)
        assert (theirs.run_id, theirs.business_hours_start, theirs.business_hours_end) == (other.id, None, None)

    async def test_a_job_whose_lease_ran_out_is_claimed_again_and_settled_by_its_new_claim_alone(
            self, database, runs_in, touches_in, seed):
        async with database.transaction() as conn:
            business_id = await held_business(conn, seed)
            run = await runs_in(conn).add_run(**run_values(business_id))
            await runs_in(conn).add_jobs([job_values(run, "t1")])
        first, second = new_id(), new_id()
        async with database.transaction() as conn:
            [claimed] = await touches_in(conn).claim(business_id, "call", 5, first, timedelta(seconds=-1))
        async with database.transaction() as conn:
            [again] = await touches_in(conn).claim(business_id, "call", 5, second, LEASE)
            assert await touches_in(conn).claim(business_id, "call", 5, new_id(), LEASE) == []
        assert (again.id, again.lease_token) == (claimed.id, second)
        async with database.transaction() as conn:
            touches = touches_in(conn)
            assert await touches.settle(claimed.id, first, {"status": "failed"}) is None
            settled = await touches.settle(claimed.id, second, {"status": "succeeded", "attempts": 1,
                                                                "reason": "the text was accepted"})
            assert await touches.settle(claimed.id, second, {"status": "failed"}) is None
            assert await touches.settle(new_id(), second, {"status": "failed"}) is None
        assert type(settled) is Job and (settled.id, settled.status, settled.attempts, settled.reason) == (
            claimed.id, "succeeded", 1, "the text was accepted")
        assert (settled.lease_token, settled.lease_until) == (None, None)

    async def test_the_businesses_due_are_those_not_held_with_a_job_to_claim_the_longest_waiting_first(
            self, database, runs_in, touches_in, seed):
        long_ago = datetime(2000, 1, 1, tzinfo=UTC)
        first, second, ran_out, held, leased, later, paused = (new_id() for _ in range(7))
        due = {first: ("scheduled", {"due_at": long_ago}),
               second: ("running", {"due_at": long_ago + timedelta(days=1)}),
               ran_out: ("running", {"due_at": long_ago + timedelta(days=2), "status": "executing",
                                     "lease_until": long_ago}),
               held: ("scheduled", {"due_at": long_ago - timedelta(days=1)}),
               leased: ("running", {"due_at": long_ago - timedelta(days=1), "status": "executing",
                                    "lease_until": utcnow() + timedelta(hours=1)}),
               later: ("scheduled", {"due_at": utcnow() + timedelta(days=1)}),
               paused: ("paused", {"due_at": long_ago - timedelta(days=1)})}
        with pytest.raises(_Rollback):  # nothing of it is left for the stack's scheduler
            async with database.transaction() as conn:
                await seed(conn, sdr_schema.standings, business_id=held, standing="paused", changed_at=AT)
                runs = runs_in(conn)
                for business_id, (status, values) in due.items():
                    run = await runs.add_run(**run_values(business_id, status=status))
                    await runs.add_jobs([job_values(run, "t1", **values)])
                    if business_id == second:  # an ended job waits for nothing, however early it was due
                        await runs.add_jobs([job_values(run, "t2", status="failed", due_at=long_ago)])
                touches = touches_in(conn)
                assert await touches.due_businesses(3) == [first, second, ran_out]
                assert not {held, leased, later, paused} & set(await touches.due_businesses(10_000))
                raise _Rollback

    async def test_the_calls_in_flight_are_the_businesses_calls_being_placed_or_awaiting_their_outcome(
            self, database, runs_in, touches_in, seed):
        async with database.transaction() as conn:
            business_id = await held_business(conn, seed)
            run = await runs_in(conn).add_run(**run_values(business_id))
            other = await runs_in(conn).add_run(**run_values(new_id()))
            await runs_in(conn).add_jobs([
                job_values(run, "placing", status="executing"),
                job_values(run, "ringing", status="in_progress"),
                job_values(run, "text", channel="sms", status="in_progress"),
                job_values(run, "ended", status="succeeded"), job_values(other, "ringing", status="in_progress")])
        async with database.transaction() as conn:
            await touches_in(conn).lock_business(business_id)
            assert await touches_in(conn).calls_in_flight(business_id) == 2
            assert await touches_in(conn).calls_in_flight(new_id()) == 0

    async def test_starting_runs_moves_the_scheduled_ones_to_running(self, database, runs_in, touches_in):
        business_id = new_id()
        async with database.transaction() as conn:
            made = [await runs_in(conn).add_run(**run_values(business_id, status=status))
                    for status in ("scheduled", "running", "paused")]
            await touches_in(conn).start_runs({run.id for run in made} | {new_id()}, AT + timedelta(hours=1))
        async with database.read() as conn:
            found = [await runs_in(conn).run_by_key(business_id, run.idempotency_key) for run in made]
        assert [(run.status, run.started_at, run.updated_at) for run in found] == [
            ("running", AT + timedelta(hours=1), AT + timedelta(hours=1)), ("running", None, AT), ("paused", None, AT)]

    async def test_an_attempt_is_recorded_once_per_job_and_attempt_and_found_by_its_call(self, database, runs_in,
                                                                                          touches_in):
        async with database.transaction() as conn:
            run = await runs_in(conn).add_run(**run_values(new_id()))
            job = job_values(run, "t1", status="in_progress")
            await runs_in(conn).add_jobs([job])
            touches = touches_in(conn)
            placed, again = attempt_values(job, 1), attempt_values(job, 1)
            await touches.add_attempt(**placed)
            await touches.add_attempt(**again)  # attempt 1 of the job is recorded: nothing more
            await touches.add_attempt(**attempt_values(job, 2, call_id=None, status="failed"))  # the call refused
        async with database.transaction() as conn:
            touches = touches_in(conn)
            found = await touches.attempts_of_calls([placed["call_id"], again["call_id"], new_id()])
            await touches.end_attempt(placed["id"], {"status": "no-answer", "retry_eligible": True, "reason": "retry",
                                                     "next_attempt_at": AT + timedelta(hours=1), "ended_at": AT})
        assert list(found) == [placed["call_id"]] and type(found[placed["call_id"]]) is Attempt
        assert (found[placed["call_id"]].id, found[placed["call_id"]].status, found[placed["call_id"]].job_id,
                found[placed["call_id"]].retry_eligible) == (placed["id"], "placed", job["id"], False)
        async with database.read() as conn:
            ended = (await touches_in(conn).attempts_of_calls([placed["call_id"]]))[placed["call_id"]]
        assert (ended.status, ended.retry_eligible, ended.next_attempt_at, ended.ended_at, ended.attempt) == (
            "no-answer", True, AT + timedelta(hours=1), AT, 1)
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:  # a call is the attempt of one job
                await touches_in(conn).add_attempt(**attempt_values(job, 3, call_id=placed["call_id"]))

    async def test_the_jobs_of_touches_are_found_by_business_reference_and_touch_with_their_runs(
            self, database, runs_in, touches_in):
        business_id, retry = new_id(), {"max_retries": 2, "backoff_seconds": [60], "retry_on": ["busy"]}
        async with database.transaction() as conn:
            run = await runs_in(conn).add_run(**run_values(business_id, status="paused", retry=retry))
            other = await runs_in(conn).add_run(**run_values(new_id(), external_ref=run.external_ref))
            mine = [job_values(run, "t1", status="in_progress"), job_values(run, "t2", status="in_progress")]
            await runs_in(conn).add_jobs([*mine, job_values(other, "t1", status="in_progress")])
        async with database.transaction() as conn:
            touches = touches_in(conn)
            found = await touches.jobs_of_touches([(business_id, run.external_ref, "t2"),
                                                   (business_id, run.external_ref, "t1"),
                                                   (business_id, "crm-none", "t1")])
            changed = await touches.change_job(mine[0]["id"], {"status": "succeeded", "ended_at": AT,
                                                               "reason": "the call ended completed"})
            assert await touches.change_job(new_id(), {"status": "failed"}) is None
        assert [j.id for j in found] == sorted(j["id"] for j in mine) and {type(j) for j in found} == {JobInRun}
        assert sorted((j.touch_id, j.external_ref, j.run_status, j.run_id) for j in found) == [
            (t, run.external_ref, "paused", run.id) for t in ("t1", "t2")] and [j.retry for j in found] == [retry] * 2
        assert type(changed) is Job and (changed.id, changed.status, changed.ended_at, changed.reason,
                                         changed.touch_id) == (mine[0]["id"], "succeeded", AT,
                                                               "the call ended completed", "t1")

    async def test_a_run_completes_once_when_its_last_job_ended(self, database, runs_in, touches_in):
        business_id = new_id()
        async with database.transaction() as conn:
            run = await runs_in(conn).add_run(**run_values(business_id, status="running"))
            paused = await runs_in(conn).add_run(**run_values(business_id, status="paused"))
            jobs = [job_values(run, "t1", status="succeeded"), job_values(run, "t2", status="in_progress")]
            await runs_in(conn).add_jobs([*jobs, job_values(paused, "t1", status="refused")])
        async with database.transaction() as conn:
            touches = touches_in(conn)
            assert await touches.end_run_if_done(run.id, AT) is None
            await touches.change_job(jobs[1]["id"], {"status": "failed"})
            ended = await touches.end_run_if_done(run.id, AT + timedelta(hours=1))
            assert await touches.end_run_if_done(run.id, AT + timedelta(hours=2)) is None
            assert await touches.end_run_if_done(paused.id, AT) is None
            assert await touches.end_run_if_done(new_id(), AT) is None
        assert type(ended) is Run and (ended.id, ended.status, ended.ended_at, ended.updated_at) == (
            run.id, "completed", AT + timedelta(hours=1), AT + timedelta(hours=1))


def agent_values(business_id: str, **values) -> dict:
    """An agent as the create use case records it (store.agents' required columns), with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "name": "Front desk", "status": "active",
            "provider_assistant_id": f"asst-{new_id()}", "config": {"inbound_prompt": "Hi"}, "metadata": {},
            "version": 1, "inbound_prompt_source": "create", "created_at": AT, "updated_at": AT, **values}


def version_values(agent, version: int, **values) -> dict:
    return {"agent_id": agent.id, "version": version, "business_id": agent.business_id, "content_hash": "hash",
            "config_snapshot": {"inbound_prompt": "Hi"}, "source": "update", "changed_fields": ["inbound_prompt"],
            "created_at": AT + timedelta(minutes=version), **values}


class AgentsRepositoryContract:
    """services.agents.repository.AgentsRepository."""

    async def test_an_agent_is_found_in_its_businesses_only_once_per_request_with_its_defaults(self, database,
                                                                                               agents_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = await agents_in(conn).add(**agent_values(business_id, request_id="req-1"))
            await agents_in(conn).add(**agent_values(new_id(), request_id="req-1"))  # another business's
        assert (added.eval_gate, added.lease_token, added.config) == (False, None, {"inbound_prompt": "Hi"})
        async with database.read() as conn:
            agents = agents_in(conn)
            assert (await agents.owned((new_id(), business_id), added.id)).name == "Front desk"
            assert await agents.owned((new_id(),), added.id) is None
            assert (await agents.by_request(business_id, "req-1")).id == added.id
            assert await agents.by_request(business_id, "req-2") is None
        for repeated in ({"request_id": "req-1"}, {"provider_assistant_id": added.provider_assistant_id}):
            with pytest.raises(sa.exc.IntegrityError):
                async with database.transaction() as conn:
                    await agents_in(conn).add(**agent_values(business_id, **repeated))

    async def test_agents_list_newest_first_in_pages_and_oldest_first_in_the_directory(self, database, agents_in):
        business_id = new_id()
        async with database.transaction() as conn:
            added = [await agents_in(conn).add(**agent_values(business_id, created_at=AT + timedelta(seconds=i % 2)))
                     for i in range(4)]
            await agents_in(conn).add(**agent_values(new_id()))
        newest = sorted(added, key=lambda row: (row.created_at, row.id), reverse=True)
        async with database.read() as conn:
            agents = agents_in(conn)
            every = await pages(lambda p: agents.page((business_id,), p), 3)
            directory = await agents.directory((business_id,))
            some = await agents.by_ids([added[0].id, added[1].id, new_id()], (business_id,))
            assert await agents.by_ids([added[0].id], (new_id(),)) == []
            assert await agents.first_numbers([r.id for r in added]) == {} and await agents.first_numbers([]) == {}
        assert [r.id for r in every] == [r.id for r in newest] and every[0].config == {"inbound_prompt": "Hi"}
        assert [r.id for r in directory] == [r.id for r in reversed(newest)]
        assert {r.id for r in some} == {added[0].id, added[1].id}
        assert directory[-1] == AgentSummary(newest[0].id, "Front desk", business_id, "active", newest[0].created_at)

    async def test_only_the_lease_holder_writes_an_agent_and_the_write_ends_the_lease(self, database, agents_in):
        async with database.transaction() as conn:
            row = await agents_in(conn).add(**agent_values(new_id()))
        async with database.transaction() as conn:
            token = await agents_in(conn).take_lease(row.id, timedelta(minutes=1))
            assert token is not None and await agents_in(conn).take_lease(row.id, timedelta(minutes=1)) is None
            assert await agents_in(conn).change_leased(row.id, new_id(), {"version": 2}) is None
            changed = await agents_in(conn).change_leased(row.id, token, {"version": 2, "name": "Night desk"})
            assert await agents_in(conn).take_lease(new_id(), timedelta(minutes=1)) is None
        assert (changed.version, changed.name, changed.lease_token, changed.lease_until) == (2, "Night desk", None,
                                                                                             None)
        async with database.transaction() as conn:
            token = await agents_in(conn).take_lease(row.id, timedelta(minutes=1))
            await agents_in(conn).release_lease(row.id, new_id())  # not the holder's: nothing changes
            assert await agents_in(conn).take_lease(row.id, timedelta(minutes=1)) is None
            await agents_in(conn).release_lease(row.id, token)
            assert await agents_in(conn).take_lease(row.id, timedelta(minutes=1)) is not None

    async def test_versions_are_kept_once_per_number_and_listed_newest_first(self, database, agents_in):
        business_id = new_id()
        async with database.transaction() as conn:
            agent = await agents_in(conn).add(**agent_values(business_id))
            for version in (1, 2, 3):
                await agents_in(conn).add_version(**version_values(agent, version, eval_gate={"status": "forced"}))
            await agents_in(conn).add_prompt_change(agent_id=agent.id, business_id=business_id,
                                                    field="inbound_prompt", previous=None, current="Hi",
                                                    source="create", version=1, created_at=AT)
        async with database.read() as conn:
            agents = agents_in(conn)
            every = await pages(lambda p: agents.versions(agent.id, p), 2)
            kept = await agents.version(agent.id, 2)
            assert await agents.version(agent.id, 4) is None
        assert [v.version for v in every] == [3, 2, 1]
        assert (kept.changed_fields, kept.eval_gate, kept.parent_version) == (["inbound_prompt"], {"status": "forced"},
                                                                             None)
        with pytest.raises(sa.exc.IntegrityError):
            async with database.transaction() as conn:
                await agents_in(conn).add_version(**version_values(agent, 2))


def text_values(business_id: str, **values) -> dict:
    """An outbound text as the send use case writes it (store.messages' required columns), with `values` over
    it."""
    return {"id": new_id(), "business_id": business_id, "direction": "outbound", "from_number": "+14155550100",
            "to_number": "+14155550123", "body": "Your quote is ready.", "status": "pending", "agent_id": new_id(),
            "created_at": AT, "updated_at": AT, **values}


class MessagingRepositoryContract:
    """The messages, compliance and consent repositories of services.messaging.repositories, on the
    `MessagingUnit` that `messaging_in` builds on a handle."""

    async def test_texts_share_their_thread_which_keeps_its_first_agent_and_lead_and_moves_on(self, database,
                                                                                            messaging_in):
        business_id, lead_id = new_id(), new_id()
        first = text_values(business_id, lead_id=lead_id)
        async with database.transaction() as conn:
            messaging = messaging_in(conn)
            messages = messaging.messages
            added = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550123",
                                                 **first)
            later = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550123",
                                                 **text_values(business_id, created_at=AT + timedelta(minutes=1)))
            inbound = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550123",
                                                   **text_values(business_id, direction="inbound",
                                                                 created_at=AT + timedelta(minutes=2)))
            elsewhere = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550124",
                                                     **text_values(business_id))
        assert (added.status, added.lead_id, added.provider_sid, added.body) == ("pending", lead_id, None,
                                                                                 "Your quote is ready.")
        assert later.conversation_id == added.conversation_id == inbound.conversation_id
        assert later.lead_id == lead_id and elsewhere.conversation_id != added.conversation_id
        assert elsewhere.lead_id is None
        async with database.read() as conn:
            assert (await messaging_in(conn).messages.message_for_callback(added.id, "")).id == added.id

    async def test_a_taken_idempotency_key_adds_no_message_and_is_found_in_its_business(self, database,
                                                                                       messaging_in):
        business_id, key = new_id(), f"key-{new_id()}"
        async with database.transaction() as conn:
            added = await messaging_in(conn).messages.add_to_thread(business_number="+14155550100",
                                                                    contact_number="+14155550123",
                                                                    **text_values(business_id, idempotency_key=key))
            again = await messaging_in(conn).messages.add_to_thread(business_number="+14155550100",
                                                                    contact_number="+14155550123",
                                                                    **text_values(business_id, idempotency_key=key))
            other = await messaging_in(conn).messages.add_to_thread(business_number="+14155550100",
                                                                    contact_number="+14155550123",
                                                                    **text_values(new_id(), idempotency_key=key))
        assert again is None and other is not None
        async with database.read() as conn:
            assert (await messaging_in(conn).messages.message_by_key(business_id, key)).id == added.id
            assert await messaging_in(conn).messages.message_by_key(business_id, f"key-{new_id()}") is None

    async def test_a_message_is_changed_and_found_by_our_id_or_the_providers_sid(self, database, messaging_in):
        sid = f"SM{new_id().replace('-', '')}"
        async with database.transaction() as conn:
            added = await messaging_in(conn).messages.add_to_thread(business_number="+14155550100",
                                                                    contact_number="+14155550123",
                                                                    **text_values(new_id()))
            changed = await messaging_in(conn).messages.change_message(added.id, {"provider_sid": sid,
                                                                                  "status": "queued"})
            assert await messaging_in(conn).messages.change_message(new_id(), {"status": "failed"}) is None
        assert (changed.id, changed.provider_sid, changed.status, changed.body) == (added.id, sid, "queued",
                                                                                   added.body)
        async with database.read() as conn:
            messaging = messaging_in(conn)
            assert (await messaging.messages.message_for_callback(None, sid)).id == added.id
            assert (await messaging.messages.message_for_callback(new_id(), sid)).id == added.id
            assert await messaging.messages.message_for_callback(new_id(), "SMnone") is None

    async def test_consent_and_the_do_not_call_list_make_a_phones_standing(self, database, messaging_in):
        business_id, phone = new_id(), "+14155550123"
        async with database.transaction() as conn:
            messaging = messaging_in(conn)
            assert await messaging.compliance.standing(business_id, phone) == CalleeFacts(None, [], None)
            for kind, at in (("opt_in", AT), ("opt_out", AT + timedelta(minutes=1))):
                await messaging.consent.add_consent(business_id=business_id, phone=phone, kind=kind, source="api",
                                                    created_at=at)
            await messaging.consent.add_consent(business_id=new_id(), phone=phone, kind="opt_in", source="api",
                                                created_at=AT)
            entry = await messaging.consent.add_dnc(id=new_id(), business_id=business_id, phone=phone, reason="asked",
                                                    created_at=AT)
            assert (await messaging.consent.add_dnc(id=new_id(), business_id=business_id, phone=phone,
                                                    created_at=AT)).id == entry.id
            facts = await messaging.compliance.standing(business_id, phone)
        assert facts == CalleeFacts(AT, [ConsentEvidence("opt_in", AT),
                                         ConsentEvidence("opt_out", AT + timedelta(minutes=1))], None)
        async with database.transaction() as conn:
            messaging = messaging_in(conn)
            assert [r.kind for r in await messaging.consent.consent_history(business_id, phone)] == [
                "opt_in", "opt_out"]
            assert (await messaging.consent.listed(business_id, phone)).reason == "asked"
            assert [r.id for r in (await messaging.consent.dnc_page(business_id, Page(limit=10))).rows] == [entry.id]
            removed = await messaging.consent.remove_dnc(business_id, phone, removed_at=AT, removed_reason="opted in",
                                                         removed_by="key")
            assert await messaging.consent.remove_dnc(business_id, phone, removed_at=AT) is None
            assert await messaging.consent.listed(business_id, phone) is None
            assert (await messaging.consent.dnc_page(business_id, Page(limit=10))).rows == []
            relisted = await messaging.consent.add_dnc(id=new_id(), business_id=business_id, phone=phone,
                                                       created_at=AT)
        assert (removed.id, removed.removed_reason) == (entry.id, "opted in") and relisted.id != entry.id

    async def test_the_touch_ledger_counts_what_was_placed_by_channel_until_released(self, database, messaging_in):
        business_id, phone = new_id(), "+13055550123"
        placed = [(new_id(), channel, AT + timedelta(hours=h)) for h, channel in ((2, "sms"), (1, "call"), (3, "call"))]
        async with database.transaction() as conn:
            ledger = messaging_in(conn).compliance
            await ledger.lock_callee(business_id, phone)
            for decision_id, channel, at in placed:
                assert await ledger.count_touch(decision_id=decision_id, business_id=business_id, phone=phone,
                                                channel=channel, placed_at=at, within=ROOMY)
            assert await ledger.count_touch(decision_id=new_id(), business_id=new_id(), phone=phone,
                                            channel="call", placed_at=AT, within=ROOMY)  # another business's
        async with database.transaction() as conn:
            ledger = messaging_in(conn).compliance
            assert await ledger.recent_touches(business_id, phone, AT) == [
                ("call", AT + timedelta(hours=1)), ("sms", AT + timedelta(hours=2)), ("call", AT + timedelta(hours=3))]
            assert not await ledger.release_touch(placed[0][0], (new_id(),), AT)  # not the business's slot
            assert await ledger.release_touch(placed[0][0], (business_id,), AT)
            assert not await ledger.release_touch(placed[0][0], (business_id,), AT)  # already free
            assert await ledger.recent_touches(business_id, phone, AT + timedelta(hours=1)) == [
                ("call", AT + timedelta(hours=3))]  # after `since` only, the released text left out

    async def test_a_day_s_spend_stops_at_its_limit_and_a_released_touch_gives_its_count_back(self, database,
                                                                                             messaging_in):
        business_id, other = new_id(), new_id()
        calls = Allowance(AT.date(), 2, 60)

        async def count(business: str, channel: str = "call", within: Allowance = calls) -> bool:
            async with database.transaction() as conn:
                return await messaging_in(conn).compliance.count_touch(decision_id=new_id(), business_id=business,
                                                                       phone="+13055550124", channel=channel,
                                                                       placed_at=AT, within=within)
        decision_id = new_id()
        async with database.transaction() as conn:
            assert await messaging_in(conn).compliance.count_touch(decision_id=decision_id, business_id=business_id,
                                                                   phone="+13055550124", channel="call", placed_at=AT,
                                                                   within=calls)
        assert await count(business_id) and not await count(business_id)  # the limit: two calls
        assert await count(other)  # another business's day is its own
        assert await count(business_id, "sms", Allowance(AT.date(), 1))  # texts have their own limit
        assert not await count(business_id, "call", Allowance(AT.date() + timedelta(days=1), 0, 60))  # a zero limit
        async with database.transaction() as conn:
            messaging = messaging_in(conn)
            assert await messaging.spend.spent_on([business_id, other], AT.date()) == {
                business_id: {"call": 2, "sms": 1}, other: {"call": 1}}
            assert await messaging.compliance.release_touch(decision_id, (business_id,), AT)  # never placed: given back
            assert (await messaging.spend.spent_on([business_id], AT.date()))[business_id]["call"] == 1
        assert await count(business_id)

    async def test_a_logged_decision_is_its_row(self, database, messaging_in):
        values = {"id": new_id(), "business_id": new_id(), "channel": "sms", "phone": "+14155550123",
                  "outcome": "allow", "rule": "allowed", "source": "platform", "message": "allowed",
                  "actor": "sms", "inputs": {"consent": "none"}, "decided_at": AT}
        async with database.transaction() as conn:
            logged = await messaging_in(conn).compliance.add_decision(**values)
        assert (logged.id, logged.outcome, logged.inputs, logged.lead_id, logged.code) == (
            values["id"], "allow", {"consent": "none"}, None, None)
        async with database.read() as conn:
            compliance = messaging_in(conn).compliance
            [found] = (await compliance.decisions_page(values["business_id"], None, None, Page(limit=10))).rows
            assert found == logged
            assert (await compliance.decisions_page(values["business_id"], "+14155550124", None,
                                                    Page(limit=10))).rows == []
            assert (await compliance.decisions_page(values["business_id"], None, new_id(), Page(limit=10))).rows == []

    async def test_many_phones_standings_and_touches_are_each_phones_own(self, database, messaging_in):
        business_id, listed, touched, clean = new_id(), "+14155550131", "+14155550132", "+14155550133"
        async with database.transaction() as conn:
            messaging = messaging_in(conn)
            await messaging.consent.add_dnc(id=new_id(), business_id=business_id, phone=listed, created_at=AT)
            await messaging.consent.add_consent(business_id=business_id, phone=touched, kind="opt_in", source="api",
                                                created_at=AT)
            assert await messaging.compliance.count_touch(decision_id=new_id(), business_id=business_id,
                                                          phone=touched, channel="sms", placed_at=AT, within=ROOMY)
        async with database.read() as conn:
            compliance = messaging_in(conn).compliance
            found = await compliance.standings(business_id, [listed, touched, clean])
            recent = await compliance.recent_touches_of(business_id, [listed, touched, clean], AT - timedelta(hours=1))
        assert found == {listed: CalleeFacts(AT, [], None), clean: CalleeFacts(None, [], None),
                         touched: CalleeFacts(None, [ConsentEvidence("opt_in", AT)], None)}
        assert recent == {listed: [], touched: [("sms", AT)], clean: []}

    async def test_texts_are_found_by_sid_paged_and_their_thread_read(self, database, messaging_in):
        business_id, sid = new_id(), f"SM{new_id().replace('-', '')}"
        async with database.transaction() as conn:
            messages = messaging_in(conn).messages
            first = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550123",
                                                 **text_values(business_id, provider_sid=sid, status="sent"))
            reply = await messages.add_to_thread(business_number="+14155550100", contact_number="+14155550123",
                                                 **text_values(business_id, direction="inbound", body="Thanks",
                                                               status="received",
                                                               created_at=AT + timedelta(minutes=1)))
        async with database.transaction() as conn:
            messages = messaging_in(conn).messages
            assert (await messages.message_by_sid(sid)).id == first.id
            assert await messages.message_by_sid(f"SM{new_id().replace('-', '')}") is None
            assert await messages.known_sids([sid, "SMnone"], new_id()) == {sid}
            assert await messages.known_sids([sid], first.id) == set()
            [thread] = (await messages.conversations_page((business_id,), None, Page(limit=10))).rows
            assert (thread.id, thread.unread_count, thread.last_body, thread.last_direction, thread.last_status) == (
                first.conversation_id, 1, "Thanks", "inbound", "received")
            paged = await messages.messages_page((business_id,), first.conversation_id, None, Page(limit=10))
            assert paged.rows == [reply, first]
            assert (await messages.messages_page((business_id,), None, "outbound", Page(limit=10))).rows == [first]
            await messages.mark_read(first.conversation_id)
            [read] = (await messages.conversations_page((business_id,), first.conversation_id, Page(limit=10))).rows
            assert read.unread_count == 0
            assert (await messages.conversations_page((new_id(),), None, Page(limit=10))).rows == []

    async def test_texts_of_unknown_or_unsettled_outcome_are_found_when_due(self, database, messaging_in):
        """Asked in the transaction that writes them: a running stack's reconciliation never sees them."""
        business_id, after = new_id(), timedelta(minutes=1)

        def ids(found: list) -> set:
            return {message.id for message in found}

        async with database.transaction() as conn:
            messages = messaging_in(conn).messages
            unknown, taken, unsent = [await messages.add_to_thread(
                business_number="+14155550100", contact_number="+14155550123", **text_values(business_id, **values))
                for values in ({"status": "unknown"}, {"status": "sent", "provider_sid": f"SM{uuid.uuid4().hex}"},
                               {"status": "sent"})]
            assert unknown.id in ids(await messages.unknown_messages(AT + timedelta(seconds=1), 10_000))
            assert unknown.id not in ids(await messages.unknown_messages(AT, 10_000))
            due = ids(await messages.unsettled_messages(AT + after, after, AT, 10_000))
            assert taken.id in due and unsent.id not in due and unknown.id not in due
            assert taken.id not in ids(await messages.unsettled_messages(AT + after, after, AT + after, 10_000))
            assert taken.id not in ids(await messages.unsettled_messages(AT + after / 2, after, AT, 10_000))
            await messages.checked(taken.id, 1, AT + 2 * after)
            assert taken.id not in ids(await messages.unsettled_messages(AT + after, after, AT, 10_000))
            assert taken.id in ids(await messages.unsettled_messages(AT + 2 * after, after, AT, 10_000))
            assert (await messages.message_for_callback(taken.id, "")).status_checks == 1


class SpendRepositoryContract:
    """services.messaging.repositories.spend.SpendRepository."""

    async def test_an_ended_calls_seconds_count_once_on_its_day(self, database, spend_in):
        business_id, other, call_id = new_id(), new_id(), new_id()
        async with database.transaction() as conn:
            await spend_in(conn).add_call_seconds([(call_id, business_id, AT.date(), 61),
                                                   (new_id(), other, AT.date() + timedelta(days=1), 30)])
        async with database.transaction() as conn:
            await spend_in(conn).add_call_seconds([(call_id, business_id, AT.date(), 61)])  # delivered again
            await spend_in(conn).add_call_seconds([])
        async with database.read() as conn:
            spend = spend_in(conn)
            assert await spend.spent_on([business_id, other], AT.date()) == {business_id: {"call_seconds": 61}}
            assert await spend.spent_on([other], AT.date() + timedelta(days=1)) == {other: {"call_seconds": 30}}
            assert await spend.api_emails_since(business_id, AT - timedelta(days=1)) == 0


def email_values(business_id: str, **values) -> dict:
    """An API caller's email (schema.emails' columns) of the business, approved and due, with `values` over it."""
    return {"id": new_id(), "business_id": business_id, "kind": "api", "to_address": "lead@example.com",
            "subject": "Hello", "body": "Hi there", "status": "approved", "recipient": "known",
            "next_attempt_at": AT, "created_by": "key", "created_at": AT, "updated_at": AT, **values}


class EmailRepositoryContract:
    """services.messaging.repositories.email.EmailRepository."""

    async def test_an_email_is_queued_once_per_reference_found_paged_and_approved(self, database, emails_in):
        business_id, reference = new_id(), f"event-{new_id()}"
        async with database.transaction() as conn:
            repo = emails_in(conn)
            await repo.lock_quota(business_id)
            first = await repo.queue(**email_values(business_id, reference=reference, status="pending_approval"))
            assert await repo.queue(**email_values(business_id, reference=reference)) is None
            later = await repo.queue(**email_values(business_id, created_at=AT + timedelta(minutes=1)))
        assert (first.business_id, first.status, first.attempts) == (business_id, "pending_approval", 0)
        async with database.read() as conn:
            repo = emails_in(conn)
            assert await repo.email((business_id,), first.id) == first
            assert await repo.email((new_id(),), first.id) is None
            assert await repo.api_emails_since(business_id, AT - timedelta(days=1)) == (2, AT)
            assert [e.id for e in (await repo.page((business_id,), None, Page(10))).rows] == [later.id, first.id]
            assert [e.id for e in (await repo.page((business_id,), "approved", Page(10))).rows] == [later.id]
        async with database.transaction() as conn:
            repo = emails_in(conn)
            approved = await repo.approve(first.id, (business_id,), approved_by="owner", approved_at=AT,
                                          next_attempt_at=AT, updated_at=AT)
            assert (approved.status, approved.approved_by) == ("approved", "owner")
            assert await repo.approve(first.id, (business_id,), approved_by="owner") is None  # not pending

    async def test_an_approved_address_stays_the_first_approvals(self, database, emails_in):
        business_id = new_id()
        async with database.transaction() as conn:
            repo = emails_in(conn)
            assert not await repo.is_approved_recipient(business_id, "lead@example.com")
            await repo.approve_recipient(business_id, "lead@example.com", "owner", AT)
            await repo.approve_recipient(business_id, "lead@example.com", "someone", AT)
            assert await repo.is_approved_recipient(business_id, "lead@example.com")
            assert not await repo.is_approved_recipient(new_id(), "lead@example.com")

    async def test_a_due_email_is_claimed_under_a_lease_and_updated_by_its_holder(self, database, emails_in):
        business_id, long_ago = new_id(), AT - timedelta(days=400)  # due before any other test's email

        async def claim(conn) -> list:
            return [(e, token) for e, token in await emails_in(conn).claim_due(long_ago, timedelta(minutes=1), 1000)
                    if e.business_id == business_id]
        async with database.transaction() as conn:  # queued and claimed at once: the stack's delivery never sees it
            due = await emails_in(conn).queue(**email_values(business_id, next_attempt_at=long_ago))
            await emails_in(conn).queue(**email_values(business_id, next_attempt_at=AT))  # not due yet
            claimed = await claim(conn)
        assert [e.id for e, _ in claimed] == [due.id]
        async with database.transaction() as conn:
            assert await claim(conn) == []  # leased
            assert await emails_in(conn).leased_update(due.id, new_id(), {"status": "sent"}) is None
            sent = await emails_in(conn).leased_update(due.id, claimed[0][1], {"status": "sent", "attempts": 1})
        assert (sent.status, sent.attempts) == ("sent", 1)


def pool_values(block: str, line: int, **values) -> dict:
    """A pool number (store.add_to_pool's columns) of the test's own block of numbers, with `values` over it."""
    return {"phone_number": f"+1{block}{line}", "country": "US", "area_code": block[:3],
            "capabilities": {"voice_inbound": True, "sms_outbound": line % 2 == 0}, "a2p_status": "not_started",
            "emergency_status": "not_set", **values}


def fresh_block() -> str:
    """An area code no real number has (1xx) and six digits of a block no other test's numbers use (the SQL
    contracts share the stack's pool)."""
    return f"1{uuid.uuid4().int % 100:02d}{uuid.uuid4().int % 10**6:06d}"


async def withdraw(database, numbers_in, block: str, lines) -> None:
    """Block the test's numbers still free, so the stack's shared pool offers none of them to other tests."""
    async with database.transaction() as conn:
        for line in lines:
            row = await numbers_in(conn).pool_number(f"+1{block}{line}")
            await numbers_in(conn).change(row.id, {"blocked": True})


class NumbersRepositoryContract:
    """services.agents.repository.NumbersRepository."""

    @pytest.fixture
    def add_to_pool(self, numbers_in):
        async def add(conn, rows):
            for row in rows:  # one at a time: the rows of one call name the same columns
                assert await numbers_in(conn).add_to_pool([row], AT) == 1

        return add

    async def test_the_pool_takes_only_the_numbers_it_does_not_hold(self, database, numbers_in):
        block = fresh_block()
        async with database.transaction() as conn:
            assert await numbers_in(conn).add_to_pool([pool_values(block, 1), pool_values(block, 2)], AT) == 2
            assert await numbers_in(conn).add_to_pool([pool_values(block, 2), pool_values(block, 3)], AT) == 1
            assert await numbers_in(conn).add_to_pool([], AT) == 0
        async with database.read() as conn:
            assert [(await numbers_in(conn).pool_number(f"+1{block}{line}")) is not None for line in (1, 2, 3, 4)] == [
                True, True, True, False]
        await withdraw(database, numbers_in, block, (1, 2, 3))

    async def test_the_free_numbers_are_listed_in_pool_order_with_their_filters(self, database, numbers_in,
                                                                               add_to_pool):
        block = fresh_block()
        area = block[:3]

        def mine(rows) -> list[str]:
            """The last digits of this test's numbers among `rows`, in their order."""
            return [r.phone_number[-1] for r in rows if r.phone_number[2:-1] == block]

        async with database.transaction() as conn:
            await add_to_pool(conn, [pool_values(block, line) for line in (4, 1, 3, 2)]
                              + [pool_values(block, 5, blocked=True), pool_values(block, 6, business_id=new_id())])
            await add_to_pool(conn, [pool_values(block, 7)])
            held = await numbers_in(conn).pool_number(f"+1{block}7")
            assert await numbers_in(conn).take_lease(held.id, timedelta(minutes=1)) is not None
        async with database.read() as conn:
            numbers = numbers_in(conn)
            every = await numbers.available("US", area, (), None, 1000)
            texting = await numbers.available(None, area, ("sms_outbound",), None, 1000)
            after = await numbers.available("US", area, (), ("US", area, f"+1{block}2"), 1)
            assert mine(await numbers.available("CA", area, (), None, 1000)) == []
        assert mine(every) == ["1", "2", "3", "4"] and mine(texting) == ["2", "4"] and mine(after) == ["3"]
        await withdraw(database, numbers_in, block, (1, 2, 3, 4))

    async def test_a_businesss_numbers_are_found_counted_routed_and_changed(self, database, numbers_in, agents_in,
                                                                          add_to_pool):
        block, business_id = fresh_block(), new_id()
        async with database.transaction() as conn:
            agent = await agents_in(conn).add(**agent_values(business_id, name="Night desk"))
            await add_to_pool(conn, [pool_values(block, 1, business_id=business_id, agent_id=agent.id,
                                                 assigned_at=AT),
                                     pool_values(block, 2, business_id=business_id,
                                                 assigned_at=AT + timedelta(hours=1)),
                                     pool_values(block, 3)])
        first, second, free = (f"+1{block}{line}" for line in (1, 2, 3))
        async with database.transaction() as conn:
            numbers = numbers_in(conn)
            assert await numbers.count_held(business_id) == 2 and await numbers.count_held(new_id()) == 0
            assert sorted(await numbers.held_by(business_id)) == [first, second]
            assert await numbers.counts([business_id, new_id()]) == [NumberCount(business_id, 2)]
            assert [r.phone_number for r in (await numbers.page([business_id], None, Page(limit=10))).rows] == [
                second, first]
            assert [r.phone_number for r in (await numbers.page([business_id], first, Page(limit=10))).rows] == [first]
            row = await numbers.business_number(first, business_id, lock=True)
            assert await numbers.business_number(free, business_id) is None
            assert (await numbers.pool_number(free)).business_id is None
            assert (await numbers.agent([business_id], agent.id)).name == "Night desk"
            assert await numbers.agent([new_id()], agent.id) is None
            route = await numbers.route(first)
            assert await numbers.route(free) is None
            assert (await numbers.route(second)).agent_name is None
            changed = await numbers.change(row.id, {"agent_id": None})
            assert await numbers.change(new_id(), {"agent_id": None}) is None
        assert (route.business_id, route.agent_id, route.agent_name, route.provider_assistant_id) == (
            business_id, agent.id, "Night desk", agent.provider_assistant_id)
        assert (changed.id, changed.agent_id, changed.phone_number) == (row.id, None, first)
        await withdraw(database, numbers_in, block, (3,))

    async def test_only_the_lease_holder_writes_a_number_and_the_write_ends_the_lease(self, database, numbers_in,
                                                                                     add_to_pool):
        block = fresh_block()
        async with database.transaction() as conn:
            await add_to_pool(conn, [pool_values(block, 1)])
            row = await numbers_in(conn).pool_number(f"+1{block}1")
            token = await numbers_in(conn).take_lease(row.id, timedelta(minutes=1))
            assert await numbers_in(conn).take_lease(row.id, timedelta(minutes=1)) is None
            assert await numbers_in(conn).change_leased(row.id, new_id(), {"forward_to": None}) is None
            changed = await numbers_in(conn).change_leased(row.id, token, {"forward_to": "+14155550100",
                                                                           "ring_seconds": 20})
        assert (changed.forward_to, changed.ring_seconds, changed.lease_token) == ("+14155550100", 20, None)
        await withdraw(database, numbers_in, block, (1,))

    async def test_bought_numbers_free_too_long_where_nobody_asked_are_idle(self, database, numbers_in, stock_in,
                                                                          add_to_pool):
        # Times to come: the stack's own stock job (which looks at the last NUMBER_IDLE_RELEASE_DAYS) leaves them be.
        block, later = fresh_block(), utcnow() + timedelta(days=100)
        area, other = block[:3], fresh_block()
        while other[:3] == area:  # another area code: a demand noted in other's must not cover block's
            other = fresh_block()
        async with database.transaction() as conn:
            await add_to_pool(conn, [
                pool_values(block, 1, provider_ref="PN1", pooled_at=later),
                pool_values(block, 2, provider_ref="PN2", pooled_at=later + timedelta(days=2)),  # free since lately
                pool_values(block, 3, provider_ref="PN3", pooled_at=later, business_id=new_id()),  # held
                pool_values(block, 4, pooled_at=later),  # the pool file's: not bought
                pool_values(other, 5, provider_ref="PN5", pooled_at=later)])  # asked for in its area code
            await stock_in(conn).note_demand("US", other[:3], later + timedelta(days=5))
        cutoff = later + timedelta(days=1)
        async with database.transaction() as conn:
            numbers = numbers_in(conn)
            idle = [n for n in await numbers.idle(cutoff, 1000) if n.phone_number[2:5] in (area, other[:3])]
            assert [n.phone_number for n in idle] == [f"+1{block}1"] and idle[0].provider_ref == "PN1"
            assert await numbers.free_in_place("US", area, ("voice_inbound",)) == 3  # 1, 2, 4 (3 is held)
            assert await numbers.free_in_place("US", area, ("sms_outbound",)) == 2  # the even lines text
            assert await numbers.free_in_place("CA", area, ()) == 0
            # bought and pooled from a moment on: the held one too (bought all the same), not the pool file's
            assert await numbers.bought_since(later) == 4 and await numbers.bought_since(cutoff) == 1
            token = await numbers.take_lease(idle[0].id, timedelta(minutes=1))
            assert [n for n in await numbers.idle(cutoff, 1000) if n.phone_number[2:5] == area] == []  # leased
            held = await numbers.pool_number(f"+1{block}3")
            assert await numbers.remove_leased(idle[0].id, new_id()) is False
            assert await numbers.remove_leased(held.id, await numbers.take_lease(held.id, timedelta(minutes=1))) \
                is False  # a business holds it
            assert await numbers.remove_leased(idle[0].id, token) is True
            assert await numbers.pool_number(f"+1{block}1") is None
        await withdraw(database, numbers_in, block, (2, 4))
        await withdraw(database, numbers_in, other, (5,))

    async def test_a_stock_place_is_requested_once_leased_and_settled(self, database, stock_in):
        # Times long past: the stack's own stock job (which looks at recent demand) leaves these places be.
        area, t0 = fresh_block()[:3], AT - timedelta(days=400)
        t1, t2, t3 = (t0 + timedelta(hours=h) for h in (1, 2, 3))
        async with database.transaction() as conn:
            stock = stock_in(conn)
            first = await stock.request("US", area, t0)
            again = await stock.request("US", area, t1)
            country = await stock.request("US", "", t0)  # the whole country is a place of its own
        assert (first.state, first.requested_at, first.demand_at, first.message) == ("requested", t0, t0, None)
        assert (again.id, again.state, again.requested_at, again.demand_at) == (first.id, "requested", t0, t1)
        assert country.id != first.id

        def mine(places):
            return [p.id for p in places if p.id in (first.id, country.id)]

        async with database.transaction() as conn:
            stock = stock_in(conn)
            assert sorted(mine(await stock.wanted(t0))) == sorted([first.id, country.id])
            assert mine(await stock.wanted(t1)) == [first.id]  # the country was last asked for at t0
            token = await stock.take_lease(first.id, timedelta(minutes=1))
            assert await stock.take_lease(first.id, timedelta(minutes=1)) is None
            assert mine(await stock.wanted(t1)) == []  # leased: another replica refills it
            assert await stock.settle(first.id, new_id(), {"state": "stocked"}) is None
            settled = await stock.settle(first.id, token, {"state": "stocked", "checked_at": t1})
            assert (settled.state, settled.checked_at, settled.lease_token) == ("stocked", t1, None)
            asked = await stock.request("US", area, t2)  # stocked, and empty again: requested anew
            assert (asked.state, asked.requested_at) == ("requested", t2)
            token = await stock.take_lease(first.id, timedelta(minutes=1))
            await stock.settle(first.id, token, {"state": "unavailable", "message": "none for sale"})
            still = await stock.request("US", area, t3)  # unavailable until the job finds some
            assert (still.state, still.requested_at, still.demand_at, still.message) == (
                "unavailable", t2, t3, "none for sale")
            await stock.note_demand("US", area, t3 + timedelta(hours=1))
            await stock.note_demand("CA", area, t3)  # a number taken where nobody asked: kept stocked from now
        async with database.read() as conn:
            found = {(p.country, p.state, p.demand_at) for p in await stock_in(conn).wanted(t3)
                     if p.area_code == area}
        assert found == {("US", "unavailable", t3 + timedelta(hours=1)), ("CA", "stocked", t3)}
