"""The erasures' replay list (services/accounts/privacy/replay.py) on the real database: a completed erasure leaves
its entry, subject sealed, in the transaction that forgets the subject; an entry a restore asked to replay is queued
again as an erasure from its first step, or left when it cannot be (its business not in the database, its subject
sealed under a secret not held); and the retention rule deletes entries past BACKUP_RETENTION_DAYS, never one still
to replay. The whole restore is tests/integration/test_backup_restore.py.

The stack's accounts process replays requested entries too (its erasure runner), under the stack's server secret:
the entries here are sealed under that secret, so whichever runner takes one, the outcome is the same."""
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_as
from services.accounts.privacy import domain, replay
from services.accounts.privacy.service import Erasures
from services.accounts.privacy_repository import replay_retention
from services.accounts.records import ReplayEntryRecord
from services.accounts.repository import accounts_units
from services.accounts.schema import erasure_replay, erasures
from services.accounts.secret_keys import SecretKeys
from tests.service.conftest import new_business
from tests.service.test_erasure_jobs import PHONE, ScriptedPersonalData, replica, row
from tests.waiting import wait_until


@pytest.fixture
async def business(database) -> str:
    async with database.transaction() as conn:
        return await new_business(conn)


async def entry_of(database, erasure_id: str) -> ReplayEntryRecord | None:
    async with database.read() as conn:
        found = (await conn.execute(sa.select(erasure_replay).where(erasure_replay.c.erasure_id == erasure_id))).first()
    return None if found is None else ReplayEntryRecord(**{k: (str(v) if k.endswith("_id") else v)
                                                          for k, v in found._mapping.items()})


async def test_a_completed_erasure_leaves_its_replay_entry_with_the_subject_sealed(database, business):
    caller = Tenant(account_id=new_id(), business_ids=(business,))
    with acting_as(caller):
        job, _ = await replica(database, ScriptedPersonalData()).create(business, PHONE, "Dana@Example.com", False,
                                                                        None)
    done = await wait_until(lambda: row(database, job.id), "the job to complete",
                            lambda r: r.status == domain.COMPLETED)
    entry = await entry_of(database, job.id)
    assert entry is not None and (entry.business_id, entry.suppress, entry.replay_requested_at) == (
        business, False, None)
    assert entry.completed_at == done.completed_at and "0123" not in entry.subject and "dana" not in entry.subject
    subject = replay.open_subject(SecretKeys("test-secret"), entry)  # the replica's secret
    assert subject is not None and (subject.phones, subject.emails) == ((PHONE,), ("dana@example.com",))


async def request_replay(database, keys: SecretKeys, erasure_id: str, business_id: str, phone: str) -> None:
    now = utcnow()
    async with database.transaction() as conn:
        await conn.execute(erasure_replay.insert().values(
            erasure_id=erasure_id, business_id=business_id, suppress=True,
            subject=replay.seal_subject(keys, erasure_id, [phone], []), completed_at=now - timedelta(days=1),
            replay_requested_at=now))


async def served(database, erasure_id: str) -> ReplayEntryRecord:
    return await wait_until(lambda: entry_of(database, erasure_id), "the replay to be taken",
                            lambda e: e is not None and e.replay_requested_at is None, timeout=20)


async def test_a_requested_replay_queues_the_erasure_again_from_its_first_step(database, business, stack):
    keys = SecretKeys(stack.secret_key())
    ours = Erasures(accounts_units(database), ScriptedPersonalData(), keys, retry_seconds=60, max_attempts=3)
    erasure_id = new_id()
    await request_replay(database, keys, erasure_id, business, "+14155550177")
    await ours.replay_requested()
    await served(database, erasure_id)
    again = await row(database, erasure_id)  # queued by either runner (then run by the stack's: any status)
    assert again.business_id == business and again.suppress and again.phone_masked == "+*******0177"
    assert again.status in domain.STATUSES and again.idempotency_key is None


async def test_a_replay_that_cannot_run_is_taken_and_left(database, business, stack):
    keys = SecretKeys(stack.secret_key())
    ours = Erasures(accounts_units(database), ScriptedPersonalData(), keys, retry_seconds=60, max_attempts=3)
    absent, unopenable = new_id(), new_id()
    await request_replay(database, keys, absent, new_id(), "+14155550178")  # a business this database lacks
    await request_replay(database, SecretKeys("a secret nobody holds"), unopenable, business, "+14155550179")
    await ours.replay_requested()
    for erasure_id in (absent, unopenable):
        await served(database, erasure_id)
        async with database.read() as conn:
            assert await conn.scalar(sa.select(sa.func.count()).where(erasures.c.id == erasure_id)) == 0


async def test_entries_past_retention_go_and_one_still_to_replay_stays(database, business):
    now, old, requested, recent = utcnow(), new_id(), new_id(), new_id()
    async with database.transaction() as conn:  # unseen by the stack's own runner and sweep until the end
        for erasure_id, completed, asked in ((old, now - timedelta(hours=2), None),
                                             (requested, now - timedelta(hours=2), now),
                                             (recent, now, None)):
            await conn.execute(erasure_replay.insert().values(
                erasure_id=erasure_id, business_id=business, suppress=True, subject="v1:x", completed_at=completed,
                replay_requested_at=asked))
        rule = replay_retention(timedelta(hours=1))
        assert await rule.delete(conn, now - rule.keep, 100) >= 1  # ours, and any other test's past it
        left = set((await conn.execute(sa.select(erasure_replay.c.erasure_id).where(
            erasure_replay.c.erasure_id.in_([old, requested, recent])))).scalars())
        assert {str(e) for e in left} == {requested, recent}
        await conn.execute(erasure_replay.delete().where(erasure_replay.c.erasure_id.in_([requested, recent])))
