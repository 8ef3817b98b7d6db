"""A torn-down business's data deletion (services/accounts/privacy/teardown_deletion.py) on the real database: the
orchestration alone. The services' whole-business ErasePerson are the port here (a scripted `PersonalData` that
records what each step is asked, answers `more` a number of times, fails or hangs as the test says), so the claim,
the order of the steps, their repetition while `more`, the resumption after a crash, the backoff and the closing of
the business's access are checked against PostgreSQL; the steps themselves, and the whole deletion, are
tests/e2e/test_teardown_deletion.py.

The stack's own accounts process claims due deletions too (its teardown-deletion-runner): every business here is
either leased to the test (its lease set by hand, as a claim does), or not due, or claimed in a transaction nobody
else sees."""
import asyncio
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from core.errors import ServiceError
from core.ids import new_id, utcnow
from services.accounts.privacy.domain import StepReport
from services.accounts.privacy.teardown_deletion import STEPS, TeardownDeletions, report_lines
from services.accounts.repository import accounts_units
from services.accounts.schema import api_keys, businesses, oauth_clients, oauth_grants, sessions
from services.accounts.teardown_repository import SqlDataDeletions
from tests.service.conftest import new_business

RETRY_SECONDS = 60.0  # a failed step is not due again while a test runs
LEASE = timedelta(seconds=30)


class ScriptedPersonalData:
    """The services' whole-business ErasePerson as a script: `more[service]` rounds answer `more` before the last;
    `answers[service]` is an exception to raise or an asyncio.Event to wait for (a step that hangs)."""

    def __init__(self, more=None, **answers):
        self.more = dict(more or {})
        self.answers = answers
        self.asked: list[tuple[str, str]] = []

    async def erase(self, service, request):
        raise AssertionError("a teardown deletion asks for the whole business only")

    async def erase_business(self, service: str, business_id: str) -> StepReport:
        self.asked.append((service, business_id))
        answer = self.answers.get(service)
        if isinstance(answer, asyncio.Event):
            await answer.wait()
        elif isinstance(answer, Exception):
            raise answer
        more = self.more.get(service, 0) > 0
        if more:
            self.more[service] -= 1
        return StepReport(({"what": f"{service}.records", "action": "deleted", "count": 2},), more=more)

    def services(self, business_id: str) -> list[str]:
        return [service for service, asked in self.asked if asked == business_id]


class Invalidations:
    def __init__(self):
        self.accounts: list[str] = []

    async def invalidate(self, account_id: str) -> None:
        self.accounts.append(account_id)


def replica(database, port, invalidations=None) -> TeardownDeletions:
    return TeardownDeletions(accounts_units(database), port, invalidations or Invalidations(),
                             retry_seconds=RETRY_SECONDS, lease=LEASE)


async def torn_down(database, *, due_in: timedelta = -timedelta(seconds=1), leased: bool = True,
                    account_id: str | None = None) -> tuple[str, str, str | None]:
    """A torn-down business (of a new account, or another of `account_id`'s) whose deletion is due in `due_in`,
    leased to the test when `leased` (the stack's runner leaves it alone): (business id, account id, token)."""
    now, token = utcnow(), new_id() if leased else None
    async with database.transaction() as conn:
        business_id = await new_business(conn)
        if account_id is not None:
            await conn.execute(businesses.update().where(businesses.c.id == business_id).values(account_id=account_id))
        await conn.execute(businesses.update().where(businesses.c.id == business_id).values(
            lifecycle_state="inactive", data_deletion_due_at=now + due_in, data_deletion_next_at=now + due_in,
            data_deletion_lease_token=token, data_deletion_lease_until=now + LEASE if leased else None))
        owner = await conn.scalar(sa.select(businesses.c.account_id).where(businesses.c.id == business_id))
    return business_id, str(owner), token


async def business_row(database, business_id: str):
    async with database.read() as conn:
        return (await conn.execute(sa.select(businesses).where(businesses.c.id == business_id))).one()


async def claimed(database, business_id: str, token: str):
    async with database.transaction() as conn:
        return await SqlDataDeletions(conn).leased_update(business_id, token,
                                                          {"data_deletion_lease_until": utcnow() + LEASE})


async def add_access(database, account_id: str, business_id: str, other_business: str | None = None) -> dict:
    """A key bound to the business, an account-wide key, a session, and OAuth grants for it alone and for it with
    another business: their ids."""
    now = utcnow()
    ids = {"bound": new_id(), "account_wide": new_id(), "alone": new_id(), "shared": new_id(), "session": new_id()}
    client_id = f"sbc_{uuid.uuid4().hex}"
    async with database.transaction() as conn:
        for name, bound in (("bound", business_id), ("account_wide", None)):
            await conn.execute(api_keys.insert().values(
                id=ids[name], account_id=account_id, business_id=bound, name=name, prefix="sk_live_x",
                key_hash=new_id(), scopes=["*"], created_at=now))
        await conn.execute(sessions.insert().values(token_hash=ids["session"], account_id=account_id, created_at=now,
                                                    expires_at=now + timedelta(days=1), last_used_at=now))
        await conn.execute(oauth_clients.insert().values(client_id=client_id, source="registration",
                                                         redirect_uris=["https://a.example/cb"],
                                                         grant_types=["authorization_code"], created_at=now))
        for name, reach in (("alone", [business_id]), ("shared", [business_id, other_business or new_id()])):
            await conn.execute(oauth_grants.insert().values(
                id=ids[name], account_id=account_id, client_id=client_id, scopes=["*"], business_ids=reach,
                resource="https://api.example", created_at=now))
    return ids


async def access_of(database, ids: dict):
    async with database.read() as conn:
        keys = dict((await conn.execute(sa.select(api_keys.c.id, api_keys.c.revoked_at).where(
            api_keys.c.id.in_([ids["bound"], ids["account_wide"]])))).all())
        grants = {str(r.id): r for r in (await conn.execute(sa.select(oauth_grants).where(
            oauth_grants.c.id.in_([ids["alone"], ids["shared"]])))).all()}
        session = await conn.scalar(sa.select(sa.func.count()).where(sessions.c.token_hash == ids["session"]))
    return {str(k): v for k, v in keys.items()}, grants, session


async def test_the_steps_run_in_order_each_again_while_more_then_the_access_closes(database):
    business_id, account_id, token = await torn_down(database)
    ids = await add_access(database, account_id, business_id)
    port, invalidations = ScriptedPersonalData(more={"agents": 1, "calls": 2}), Invalidations()
    done = await replica(database, port, invalidations).run(await claimed(database, business_id, token), token)
    assert port.services(business_id) == ["agents", "agents", "sdr", "calls", "calls", "calls", "messaging",
                                          "webhooks"]
    assert done is not None and done.data_deletion_lease_token is None
    stored = await business_row(database, business_id)
    assert stored.data_deleted_at is not None and stored.data_deletion_error is None
    lines = report_lines(stored.data_deletion_steps)
    assert [line["service"] for line in lines][:5] == ["agents", "sdr", "calls", "messaging", "webhooks"]
    assert {line["service"]: line["count"] for line in lines if line["what"].endswith(".records")} == {
        "agents": 4, "sdr": 2, "calls": 6, "messaging": 2, "webhooks": 2}  # each round's counts added
    assert all(step["done"] for step in stored.data_deletion_steps.values())
    assert set(stored.data_deletion_steps) == set(STEPS)
    keys, grants, session = await access_of(database, ids)
    # The account reaches nothing else: its keys, all of them, and its session end.
    assert keys[ids["bound"]] is not None and keys[ids["account_wide"]] is not None and session == 0
    assert grants[ids["alone"]].revoked_at is not None and grants[ids["alone"]].business_ids == []
    assert grants[ids["shared"]].revoked_at is None and business_id not in map(str, grants[ids["shared"]].business_ids)
    assert invalidations.accounts == [account_id]
    accounts = {line["what"] + " " + line["action"]: line["count"] for line in lines if line["service"] == "accounts"}
    assert accounts["accounts.api_key revoked"] == 1 and accounts["accounts.session ended"] == 1
    assert accounts["accounts.oauth_grant revoked"] == 1 and accounts["accounts.oauth_grant narrowed"] == 1
    # Done, it is never claimed again; run again, it asks nothing.
    again = ScriptedPersonalData()
    await replica(database, again).run_due(100)
    assert await replica(database, again).run(done, token) == done and again.services(business_id) == []


async def test_an_account_with_another_live_business_keeps_its_session_and_account_wide_keys(database):
    business_id, account_id, token = await torn_down(database)
    other, _, _ = await torn_down(database, due_in=timedelta(days=30), leased=False, account_id=account_id)
    ids = await add_access(database, account_id, business_id, other)
    await replica(database, ScriptedPersonalData()).run(await claimed(database, business_id, token), token)
    keys, grants, session = await access_of(database, ids)
    assert keys[ids["bound"]] is not None and keys[ids["account_wide"]] is None and session == 1
    assert [str(b) for b in grants[ids["shared"]].business_ids] == [other]
    assert (await business_row(database, other)).data_deleted_at is None


async def test_a_failed_step_is_retried_later_and_resumes_at_that_step(database):
    business_id, _, token = await torn_down(database)
    port = ScriptedPersonalData(calls=ServiceError("provider_error", "the voice provider could not delete a call"))
    deletions = replica(database, port)
    waiting = await deletions.run(await claimed(database, business_id, token), token)
    assert waiting is not None and waiting.data_deletion_lease_token is None and waiting.data_deletion_attempts == 1
    stored = await business_row(database, business_id)
    assert stored.data_deleted_at is None
    assert stored.data_deletion_error == "calls step failed: provider_error: the voice provider could not delete a call"
    assert timedelta(seconds=RETRY_SECONDS - 5) < stored.data_deletion_next_at - utcnow() <= timedelta(
        seconds=RETRY_SECONDS)
    assert {s for s, step in stored.data_deletion_steps.items() if step["done"]} == {"agents", "sdr"}
    # Its retry's time: a runner takes the lease (by hand here, so that nobody else runs it).
    token = new_id()
    async with database.transaction() as conn:
        await conn.execute(businesses.update().where(businesses.c.id == business_id).values(
            data_deletion_lease_token=token, data_deletion_lease_until=utcnow() + LEASE))
    del port.answers["calls"]
    done = await deletions.run(await claimed(database, business_id, token), token)
    assert done is not None and port.services(business_id) == ["agents", "sdr", "calls", "calls", "messaging",
                                                               "webhooks"]
    assert (await business_row(database, business_id)).data_deleted_at is not None


async def test_a_runner_that_died_mid_step_is_resumed_at_the_round_not_stored(database):
    business_id, _, token = await torn_down(database)
    hang = asyncio.Event()
    first_port = ScriptedPersonalData(more={"sdr": 1}, calls=hang)
    first = asyncio.create_task(replica(database, first_port).run(await claimed(database, business_id, token), token))
    for _ in range(200):
        if first_port.services(business_id)[-1:] == ["calls"]:
            break
        await asyncio.sleep(0.02)
    first.cancel()  # it dies in the calls step: its lease stays until it runs out
    with pytest.raises(asyncio.CancelledError):
        await first
    stored = await business_row(database, business_id)
    assert {s: step["done"] for s, step in stored.data_deletion_steps.items()} == {"agents": True, "sdr": True}
    assert stored.data_deletion_lease_token is not None and stored.data_deleted_at is None
    # While its lease holds, no runner claims it.
    other = ScriptedPersonalData()
    await replica(database, other).run_due()
    assert other.services(business_id) == []
    # Taken over (the lease by hand, as a claim after it ran out does): it resumes at calls.
    token = new_id()
    async with database.transaction() as conn:
        await conn.execute(businesses.update().where(businesses.c.id == business_id).values(
            data_deletion_lease_token=token, data_deletion_lease_until=utcnow() + LEASE))
    second = ScriptedPersonalData()
    await replica(database, second).run(await claimed(database, business_id, token), token)
    assert second.services(business_id) == ["calls", "messaging", "webhooks"]
    assert (await business_row(database, business_id)).data_deleted_at is not None


async def test_two_runners_claim_a_due_deletion_once_and_none_claims_one_not_due(database):
    due, _, _ = await torn_down(database)  # leased to the test until it frees it below
    later, _, _ = await torn_down(database, due_in=timedelta(minutes=5), leased=False)
    engine = database.engine
    async with engine.connect() as first, engine.connect() as second:
        await first.begin()
        await second.begin()
        await first.execute(businesses.update().where(businesses.c.id == due).values(
            data_deletion_lease_until=utcnow() - timedelta(seconds=1)))  # its lease ran out
        one = [r.id for r in await SqlDataDeletions(first).claim_due(100, LEASE)]
        other = [r.id for r in await SqlDataDeletions(second).claim_due(100, LEASE)]
        assert due in one and due not in other  # the row the first claims is skipped by the second
        assert later not in one and later not in other
        await first.rollback()
        await second.rollback()


def test_the_steps_are_the_teardown_services_then_accounts():
    assert STEPS == ("agents", "sdr", "calls", "messaging", "webhooks", "accounts")
