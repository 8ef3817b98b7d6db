"""Export jobs (services/accounts/privacy/exports.py) on the real database: the orchestration and the archive. The
services' ExportPage are the port here (a scripted `ExportSources` that records what each page is asked, answers
pages of its script, fails or hangs as the test says); the accounts service's own kinds (the workspace, the usage
log) are read from the database. The archive the parts make is read back with tarfile.

The stack's own accounts process claims due exports too (its export-runner): every job here is either held by one of
the test's replicas (a new job is leased to the replica that made it, a takeover is done by hand), or not due for a
minute (a failed page's retry), or claimed in a transaction nobody else sees."""
import asyncio
import hashlib
import io
import json
import tarfile
import time
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from contracts import exports as exports_contract
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_as
from services.accounts.exports_repository import SqlExports
from services.accounts.privacy import export_domain as rules
from services.accounts.privacy.export_sources import PageRequest, RecordsPage
from services.accounts.privacy.exports import Exports
from services.accounts.repository import accounts_units
from services.accounts.schema import export_parts, exports, usage_log
from services.accounts.secret_keys import EXPORT_LINK, SecretKeys
from services.accounts.servicer import PublicRecords
from tests.service.conftest import new_business
from tests.waiting import wait_until

RETRY_SECONDS = 60.0  # a failed page is not due again while a test runs: nobody else takes its job
LEASE = timedelta(seconds=30)
KINDS = tuple(exports_contract.BY_NAME[name] for name in ("workspace", "usage", "calls", "leads", "webhook_subscriptions"))
KEYS = SecretKeys("export-test-secret", 2, "export-test-previous")


def lines(kind: str, first: int, count: int) -> list[str]:
    return [json.dumps({"id": f"{kind}-{n}", "kind": kind}) for n in range(first, first + count)]


# Each kind's pages: calls in three (two full, one short), leads in one, webhook subscriptions none.
PAGES = {"calls": [lines("calls", 0, 2), lines("calls", 2, 2), lines("calls", 4, 1)], "leads": [lines("leads", 0, 3)],
         "webhook_subscriptions": []}


class ScriptedSources:
    """The services' ExportPage as a script: `pages[kind]` a list of pages (the cursor is the next page's index);
    `answers[(kind, after)]` an exception to raise or an asyncio.Event to wait for before answering. Every request
    is recorded."""

    def __init__(self, pages=None, **answers):
        self.pages = pages if pages is not None else PAGES
        self.answers = {tuple(k.split(":")): v for k, v in answers.items()}
        self.asked: list[tuple[str, PageRequest]] = []

    async def page(self, service: str, request: PageRequest) -> RecordsPage:
        self.asked.append((service, request))
        answer = self.answers.get((request.kind, request.after))
        if isinstance(answer, asyncio.Event):
            await answer.wait()
        elif isinstance(answer, Exception):
            raise answer
        pages = self.pages.get(request.kind, [])
        index = int(request.after or 0)
        found = pages[index] if index < len(pages) else []
        return RecordsPage(found, str(index + 1) if index + 1 < len(pages) else "")

    def of(self, export_id: str) -> list[tuple[str, str]]:
        return [(r.kind, r.after) for _, r in self.asked if r.export_id == export_id]


@pytest.fixture
async def business_id(database) -> str:
    async with database.transaction() as conn:
        business_id = await new_business(conn)
        now = utcnow()
        account_id = await conn.scalar(sa.text("SELECT account_id FROM accounts.businesses WHERE id = :id"),
                                       {"id": business_id})
        await conn.execute(usage_log.insert(), [
            {"id": new_id(), "account_id": account_id, "business_id": business_id, "api_key_id": None,
             "endpoint": f"/api/v1/calls/{n}", "method": "GET", "status_code": 200, "call_id": None, "cost_cents": 0,
             "created_at": now + timedelta(microseconds=n)} for n in range(3)])
        return business_id


@pytest.fixture
def business(business_id):
    """A business of its own, its owner the caller."""
    with acting_as(Tenant(account_id=str(uuid.uuid4()), business_ids=(business_id,))):
        yield business_id


def replica(database, sources, **options) -> Exports:
    return Exports(accounts_units(database), sources, PublicRecords(), KEYS, **{
        "retry_seconds": RETRY_SECONDS, "max_attempts": 3, "lease": LEASE, "kinds": KINDS,
        "retention": timedelta(hours=1), "link_seconds": 600, **options})


async def row(database, export_id: str):
    async with database.read() as conn:
        return (await conn.execute(sa.select(exports).where(exports.c.id == export_id))).one()


async def archive_of(database, export_id: str) -> bytes:
    async with database.read() as conn:
        found = await conn.scalars(sa.select(export_parts.c.data).where(export_parts.c.export_id == export_id)
                                   .order_by(export_parts.c.seq))
        return b"".join(found)


def members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def completed(r) -> bool:
    return r.status == rules.COMPLETED


async def test_a_job_writes_every_kind_page_by_page_into_one_archive_with_its_manifest(database, business):
    port = ScriptedSources()
    exports_ = replica(database, port)
    job = await exports_.create(None, None)
    assert job.status == rules.QUEUED and job.lease_token and [k["kind"] for k in job.kinds] == [k.name for k in KINDS]
    done = await wait_until(lambda: row(database, job.id), "the job to complete", completed)
    assert port.of(job.id) == [("calls", ""), ("calls", "1"), ("calls", "2"), ("leads", ""),
                               ("webhook_subscriptions", "")]
    asked = port.asked[0]
    assert asked[0] == "calls" and asked[1].business_id == business and asked[1].limit == exports_contract.BY_NAME["calls"].limit
    data = await archive_of(database, job.id)
    assert len(data) == done.bytes and done.sha256 == hashlib.sha256(data).hexdigest()
    found = members(data)
    assert list(found) == ["workspace/000001.jsonl", "usage/000001.jsonl", "calls/000001.jsonl",
                           "calls/000002.jsonl", "calls/000003.jsonl", "leads/000001.jsonl", "manifest.json"]
    workspace = json.loads(found["workspace/000001.jsonl"])
    assert workspace["id"] == business and workspace["name"] == "Acme Plumbing"
    usage = [json.loads(line) for line in found["usage/000001.jsonl"].splitlines()]
    assert [u["endpoint"] for u in usage] == ["/api/v1/calls/0", "/api/v1/calls/1", "/api/v1/calls/2"]
    calls = [json.loads(line)["id"] for name in found if name.startswith("calls/") for line in found[name].splitlines()]
    assert calls == [f"calls-{n}" for n in range(5)]
    manifest = json.loads(found["manifest.json"])
    assert manifest["business_id"] == business and manifest["export_id"] == job.id and manifest["records"] == 12
    assert {k["kind"]: k["records"] for k in manifest["kinds"]} == {
        "workspace": 1, "usage": 3, "calls": 5, "leads": 3, "webhook_subscriptions": 0}
    assert done.records == 12 and done.parts == 7 and done.lease_token is None and done.error is None
    assert done.expires_at - done.completed_at == timedelta(hours=1)
    assert all(k["done"] for k in done.kinds)


async def test_a_runner_that_lost_its_lease_stores_nothing_and_the_one_taking_over_resumes_at_the_next_page(
        database, business):
    hang = asyncio.Event()
    first_port = ScriptedSources(**{"calls:1": hang})
    first = replica(database, first_port)
    job = await first.create(business, None)
    await wait_until(lambda: first_port.of(job.id), "the first runner to ask for the second page of calls",
                     lambda asked: asked[-1:] == [("calls", "1")])
    stored = await row(database, job.id)
    assert stored.status == rules.RUNNING and stored.parts == 3  # workspace, usage, calls' first page
    # Its lease ran out and a second runner took the job (the claim's, done by hand so that nobody else runs it).
    token = new_id()
    async with database.transaction() as conn:
        await conn.execute(exports.update().where(exports.c.id == job.id).values(
            lease_token=token, lease_until=utcnow() + LEASE))
    second_port = ScriptedSources()
    second = replica(database, second_port)
    async with accounts_units(database).read() as work:
        claimed = await work.exports.get(job.id)
    done = await second.run(claimed, token)
    assert done is not None and done.status == rules.COMPLETED
    assert second_port.of(job.id) == [("calls", "1"), ("calls", "2"), ("leads", ""), ("webhook_subscriptions", "")]
    hang.set()  # the first runner's page comes at last: its lease is gone, so it stores nothing
    await wait_until(lambda: len(first.started), "the first runner to give up", lambda n: n == 0)
    after = await row(database, job.id)
    assert (after.parts, after.records, after.sha256) == (done.parts, done.records, done.sha256)
    found = members(await archive_of(database, job.id))
    calls = [line for name in found if name.startswith("calls/") for line in found[name].splitlines()]
    assert len(calls) == 5 and len(set(calls)) == 5


async def test_a_failed_page_leaves_the_job_queued_and_it_resumes_at_that_page(database, business):
    port = ScriptedSources(**{"leads:": ServiceError("unavailable", "a backing service is unavailable; retry")})
    exports_ = replica(database, port)
    job = await exports_.create(business, None)
    waiting = await wait_until(lambda: row(database, job.id), "the page's failure to be stored",
                               lambda r: r.attempts == 1)
    assert waiting.status == rules.QUEUED and waiting.lease_token is None
    assert waiting.error == "a page of leads failed: unavailable: a backing service is unavailable; retry"
    delay = waiting.next_attempt_at - waiting.updated_at
    assert timedelta(seconds=RETRY_SECONDS - 1) < delay <= timedelta(seconds=RETRY_SECONDS)
    assert [k["done"] for k in waiting.kinds] == [True, True, True, False, False]
    token = new_id()
    async with database.transaction() as conn:
        await conn.execute(exports.update().where(exports.c.id == job.id).values(
            lease_token=token, lease_until=utcnow() + LEASE))
    del port.answers[("leads", "")]
    async with accounts_units(database).read() as work:
        claimed = await work.exports.get(job.id)
    done = await exports_.run(claimed, token)
    assert done.status == rules.COMPLETED and done.attempts == 1 and done.error is None and done.records == 12
    assert [kind for kind, _ in port.of(job.id)].count("calls") == 3  # calls were not asked again


async def test_after_the_last_attempt_the_job_is_failed_and_its_parts_deleted(database, business):
    port = ScriptedSources(**{"calls:": ServiceError("internal_error", "internal error")})
    job = await replica(database, port, max_attempts=1).create(business, None)
    failed = await wait_until(lambda: row(database, job.id), "the job to fail", lambda r: r.status == rules.FAILED)
    assert failed.error.startswith("a page of calls failed") and failed.completed_at is not None
    assert await archive_of(database, job.id) == b""


async def test_an_idempotency_key_answers_its_export_and_one_under_way_answers_any_other(database, business):
    held = asyncio.Event()
    exports_ = replica(database, ScriptedSources(**{"calls:": held}))
    try:
        first = await exports_.create(business, "key-1")
        again = await exports_.create(None, "key-1")
        other = await exports_.create(business, "key-2")
        unkeyed = await exports_.create(business, None)
        assert again.id == first.id and other.id == first.id and unkeyed.id == first.id  # one under way at a time
        held.set()
        await wait_until(lambda: row(database, first.id), "the first export to complete", completed)
        fresh = await exports_.create(business, "key-2")  # that one over, a request starts another
        assert fresh.id != first.id and fresh.status == rules.QUEUED
    finally:
        await exports_.started.stop()


async def test_the_link_reads_the_parts_and_refuses_a_changed_or_expired_link_or_another_business(
        database, business):
    exports_ = replica(database, ScriptedSources())
    job = await exports_.create(business, None)
    done = await wait_until(lambda: row(database, job.id), "the job to complete", completed)
    async with accounts_units(database).read() as work:
        record = await work.exports.get(job.id)
    link = exports_.link(record)
    query = dict(pair.split("=") for pair in link.query.split("&"))
    expires, signature = int(query["expires"]), query["signature"]
    assert signature.startswith("v2.") and expires - time.time() <= 600
    with acting_as(Tenant()):  # the link alone (no key)
        parts = [(await exports_.read_part(job.id, expires, signature, n))[0] for n in range(done.parts)]
    assert b"".join(parts) == await archive_of(database, job.id)
    # a link signed under the previous secret still works during a rotation
    previous = KEYS.verifying_key(EXPORT_LINK, "v1")
    old = rules.link_signature("v1", previous, job.id, expires)
    assert (await exports_.read_part(job.id, expires, old, 0))[0] == parts[0]
    for bad in (signature[:-1] + ("0" if signature[-1] != "0" else "1"), "v9." + signature[3:], "nonsense"):
        with pytest.raises(ServiceError) as refused:
            await exports_.read_part(job.id, expires, bad, 0)
        assert refused.value.code == "not_found"
    with pytest.raises(ServiceError) as refused:  # the expiry changed: the signature no longer matches
        await exports_.read_part(job.id, expires + 3600, signature, 0)
    assert refused.value.code == "not_found"
    past = int(time.time()) - 1
    kid, key = KEYS.signing_key(EXPORT_LINK)
    with pytest.raises(ServiceError) as refused:
        await exports_.read_part(job.id, past, rules.link_signature(kid, key, job.id, past), 0)
    assert refused.value.code == "forbidden" and "GET /api/v1/exports/{id}" in refused.value.message
    with acting_as(Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),))):
        with pytest.raises(ServiceError) as refused:
            await exports_.read_part(job.id, expires, signature, 0)
        assert refused.value.code == "not_found"
        with pytest.raises(ServiceError) as refused:
            await exports_.get(job.id)
        assert refused.value.code == "not_found"


async def test_an_expired_archive_is_deleted_and_its_link_answers_so(database, business):
    exports_ = replica(database, ScriptedSources())
    job = await exports_.create(business, None)
    await wait_until(lambda: row(database, job.id), "the job to complete", completed)
    async with accounts_units(database).read() as work:
        link = exports_.link(await work.exports.get(job.id))
    async with database.transaction() as conn:
        await conn.execute(exports.update().where(exports.c.id == job.id).values(
            expires_at=utcnow() - timedelta(seconds=1)))
    await exports_.expire_due()  # (or the stack's runner, first)
    gone = await wait_until(lambda: row(database, job.id), "the archive to expire",
                            lambda r: r.status == rules.EXPIRED)
    assert gone.sha256 is not None and await archive_of(database, job.id) == b""
    query = dict(pair.split("=") for pair in link.query.split("&"))
    with pytest.raises(ServiceError) as refused:
        await exports_.read_part(job.id, int(query["expires"]), query["signature"], 0)
    assert refused.value.code == "not_found" and "expired" in refused.value.message
    assert exports_.link(gone) is None


async def test_the_claim_takes_due_free_jobs_only_and_the_expiry_completed_ones_past_it(database):
    now = utcnow()

    def job(**values):  # each of a business of its own (one export of a business is under way at a time)
        return {"id": new_id(), "status": rules.QUEUED, "kinds": rules.initial_progress(KINDS),
                "next_attempt_at": now - timedelta(seconds=1), "created_at": now, "updated_at": now, **values}

    rows = {"due": job(), "crashed": job(status=rules.RUNNING, lease_token=new_id(),
                                         lease_until=now - timedelta(seconds=1)),
            "held": job(status=rules.RUNNING, lease_token=new_id(), lease_until=now + timedelta(minutes=1)),
            "later": job(next_attempt_at=now + timedelta(minutes=1)),
            "over": job(status=rules.COMPLETED, expires_at=now + timedelta(hours=1)),
            "past": job(status=rules.COMPLETED, expires_at=now - timedelta(seconds=1)),
            "failed": job(status=rules.FAILED)}

    class Rollback(Exception):
        pass

    with pytest.raises(Rollback):  # claimed in a transaction no other runner sees, then undone
        async with database.transaction() as conn:
            repository = SqlExports(conn)
            for values in rows.values():
                assert await repository.add(business_id=await new_business(conn), **values) is not None
            await repository.add_part(rows["past"]["id"], 0, b"part")
            claimed = {j.id for j in await repository.claim_due(100, timedelta(minutes=5))}
            assert {name for name, values in rows.items() if values["id"] in claimed} == {"due", "crashed"}
            expired = set(await repository.expire_due(100, {"status": rules.EXPIRED}))
            assert {name for name, values in rows.items() if values["id"] in expired} == {"past"}
            assert await repository.part(rows["past"]["id"], 0) is None
            raise Rollback
