"""Test harness: the same embedded stack `make run` starts (real PostgreSQL, NATS
JetStream, gRPC services and gateway processes), once per session.

With DATABASE_URL set, a fresh database is created on that server for the run and
dropped afterwards; with NATS_URL set, that server is used.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from sqlalchemy.engine import make_url

from core import db_roles
from deploy.local.servers import free_port
from deploy.local.stack import Stack
from tests.api import KEY_RATE_LIMIT, Api, new_account
from tests.calling import VoiceSimulator, agent_with_number
from tests.standing import PaymentsAccess
from tests.texting import SmsSimulator


def _fresh_external_database() -> tuple[str, str] | None:
    base = os.environ.get("DATABASE_URL")
    if not base:
        return None
    name = f"switchboard_test_{uuid.uuid4().hex[:8]}"

    async def create():
        conn = await asyncpg.connect(base)
        await conn.execute(f'CREATE DATABASE "{name}"')
        await conn.close()

    asyncio.run(create())
    return base, make_url(base).set(database=name).render_as_string(hide_password=False)


# The settings of the tests' stacks.
TEST_ENV = {
    "TRUSTED_PROXIES": "127.0.0.1", "KEY_RATE_LIMIT_PER_MINUTE": "1000000",
    # the per-address limits of the public routes stay out of the way of the fuzzing guard
    # (every unsigned request comes from 127.0.0.1); tests/e2e/test_edge.py runs a
    # replica with low ones
    "PUBLIC_RATE_LIMIT_PER_MINUTE": "1000000", "OAUTH_LIMIT_PER_HOUR": "1000000",
    "LOG_LEVEL": "INFO",
    # what a tagged request costs is counted (tests/guard/test_cost_budgets.py)
    "SWITCHBOARD_COUNT_COSTS": "1",
    # webhook retries in milliseconds instead of minutes; claims due again after 2 s
    "WEBHOOK_RETRY_SCALE": "0.0001", "WEBHOOK_LEASE_SECONDS": "2",
    # simulated calls play in a fraction of a second (a 12 s conversation in 0.6 s)
    "VOICE_SIM_TIME_SCALE": "0.05", "SMS_SIM_TIME_SCALE": "0.05",
    # queued emails go out within a fraction of a second, retries in milliseconds
    "EMAIL_DELIVERY_INTERVAL_SECONDS": "0.2", "SMS_RECONCILE_SECONDS": "0.5", "EMAIL_RETRY_SCALE": "0.001",
    # a number on the platform-wide do-not-call list
    "PLATFORM_DNC": "+14155550166",
    # the national do-not-call registry's area code the tests import (tests/e2e/test_national_registry.py)
    "NATIONAL_DNC_AREA_CODES": "505",
    # the reaper closes a silent call a second past its max_duration
    "CALLS_REAPER_INTERVAL_SECONDS": "0.5", "CALLS_REAPER_MARGIN_SECONDS": "1",
    # the provider's inbound calls are reconciled every second (tests/e2e/test_inbound_reconciliation.py)
    "CALLS_RECONCILE_SECONDS": "1",
    # each service's retention sweep looks every second (with the default retention: tests/integration/test_retention.py)
    "RETENTION_INTERVAL_SECONDS": "1",
    # the privacy retention job looks for businesses due every second (tests/e2e/test_data_retention.py)
    "PRIVACY_RETENTION_INTERVAL_SECONDS": "1",
    # payment webhooks retried in milliseconds; a trial lasts 10 minutes (tests move billing
    # on with the simulator's advance); provisioning retried within a second; an unpaid
    # subscription pauses its workspace at once
    "PAYMENTS_SIM_TIME_SCALE": "0.001", "BILLING_INTERVAL_SECONDS": "0.3",
    "PROVISIONING_RETRY_SECONDS": "0.3", "PAYMENT_GRACE_HOURS": "0",
    # a settlement the x402 facilitator leaves unanswered for 4 s is unknown (reconciled)
    "X402_TIMEOUT_SECONDS": "2",
    # unfinished eval runs are polled ten times a second
    "EVAL_POLL_SECONDS": "0.1",
    # a communication job claimed by a scheduler that died is due again after 3 s
    "RUNS_LEASE_SECONDS": "3",
    # an outbox event NATS refuses while taking the next ones is set aside after 2 passes, about 4 s
    # (tests/integration/test_outbox_dead_letters.py)
    "OUTBOX_POISON_AFTER": "2",
    # the sales pipeline's runner works only when a test calls POST /api/sdr/runner
    "SDR_RUNNER_POLL_SECONDS": "86400"}


@contextmanager
def embedded_stack(request, extra_env: dict[str, str] | None = None, **fields) -> Iterator[Stack]:
    """A started stack with the tests' settings (and `extra_env`; `fields`: more of Stack's, e.g. replicas), stopped
    afterwards; its logs are kept when a test of the session failed."""
    home = Path(tempfile.mkdtemp(prefix="switchboard-test-"))
    external = _fresh_external_database()
    # every process serves its metrics on a port of its own (tests/e2e/test_metrics.py scrapes them)
    s = Stack(home=home, http_port=free_port(), durable=False, database_url=external[1] if external else "",
              metrics=True, extra_env={**TEST_ENV, **(extra_env or {})}, **fields)
    try:
        s.start()
        yield s
    finally:
        s.stop()
        if request.session.testsfailed:
            print(f"\nstack logs kept in {s.logs}")
        else:
            shutil.rmtree(home, ignore_errors=True)
        if external:
            async def drop():
                conn = await asyncpg.connect(external[0])
                database = db_roles.database_of(external[1])
                await conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
                for role in db_roles.ROLES:  # the server's, named after the database (core.db_roles)
                    await conn.execute(f"DROP ROLE IF EXISTS {db_roles.ident(db_roles.role_name(database, role.key))}")
                await conn.close()

            asyncio.run(drop())


@pytest.fixture(scope="session")
def stack(request):
    with embedded_stack(request) as s:
        yield s


@pytest.fixture(scope="session")
async def api(stack):
    async with aiohttp.ClientSession() as session:
        yield Api(session, stack.base_url, stack.database_url, PaymentsAccess.of(stack.payments_env()))


@pytest.fixture
async def limited_api(stack, api):
    """A gateway replica of the same stack that allows each key KEY_RATE_LIMIT requests per minute."""
    replica = stack.add_gateway(f"gateway-limited-{uuid.uuid4().hex[:6]}",
                                {"KEY_RATE_LIMIT_PER_MINUTE": str(KEY_RATE_LIMIT)})
    try:
        yield Api(api.session, f"http://127.0.0.1:{replica.port}", api.database_url, api.payments)
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)


@pytest.fixture
async def replica(stack, api):
    """Gateway replicas of the same stack with settings of their own, and nothing cached yet: `replica(NAME=value)`
    starts one and is an Api on it."""
    started = []

    def start(**env) -> Api:
        process = stack.add_gateway(f"gateway-replica-{uuid.uuid4().hex[:6]}", env)
        started.append(process)
        return Api(api.session, f"http://127.0.0.1:{process.port}")

    yield start
    for process in started:
        stack.stop_process(process)
        stack.processes.remove(process)


@pytest.fixture
async def account(api):
    """A new account: its signup reply, a dashboard session, and a key with every scope."""
    made = await new_account(api)
    yield made
    await made["dashboard"].close()


@pytest.fixture
async def calling_agent(api, account):
    """An agent of `account` with a number of its own, given back to the pool afterwards."""
    agent = await agent_with_number(api, account)
    yield agent
    await api.request("DELETE", "/api/v1/phone-numbers", key=account["key"],
                      params={"phone_number": agent["phone_number"]})


@pytest.fixture
async def other_key(api):
    """A key with every scope of another account: it must see nothing of `account`'s data."""
    other = await api.signup(business_name="Other Co")
    dash = await api.dashboard(other)
    try:
        yield (await dash.create_key(name="other", scopes=["*"]))["key"]
    finally:
        await dash.close()


@pytest.fixture
async def voice(stack):
    async with aiohttp.ClientSession() as session:
        sim = VoiceSimulator(session, f"http://127.0.0.1:{stack.process('voice-simulator').port}",
                             stack.home_secret("voice_api_key"))
        yield sim
        await sim.clear_faults()


@pytest.fixture
async def sms(stack):
    async with aiohttp.ClientSession() as session:
        sim = SmsSimulator(session, f"http://127.0.0.1:{stack.process('sms-simulator').port}")
        yield sim
        for path in ("/faults", "/callbacks", "/delivery-outcomes", "/opt-out", "/available-numbers"):
            await sim.control("DELETE", path)


@pytest.fixture
async def mailbox(stack):
    """The catch-all's read API: `await mailbox(to)` is the messages received for `to`."""
    url = f"http://127.0.0.1:{stack.process('mail-catchall').port}/messages"
    async with aiohttp.ClientSession() as session:
        async def received(to: str) -> list[dict]:
            async with session.get(url, params={"to": to}) as r:
                assert r.status == 200, await r.text()
                return (await r.json())["messages"]
        yield received


@pytest.fixture
async def db(stack):
    """A direct connection to the stack's database, for checks the API does not expose."""
    conn = await asyncpg.connect(stack.database_url)
    yield conn
    await conn.close()
