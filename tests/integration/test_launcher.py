"""The embedded launcher refuses to trample a running stack, and gives each process only its own secrets."""
import asyncio
import signal
import time
import uuid
from pathlib import Path

import aiohttp
import pytest

from core import registry
from core.settings import OPTIONAL_SECRETS, SECRET_FIELDS
from deploy.local.servers import Postgres, port_is_free
from deploy.local.stack import KINDS, Stack
from tests.api import Api
from tests.waiting import wait_until


def test_second_stack_on_the_same_port_is_refused_with_a_clear_message(stack, tmp_path):
    assert not port_is_free(stack.http_port)
    with pytest.raises(RuntimeError, match="already in use"):
        Stack(home=tmp_path, http_port=stack.http_port).start()


def test_each_running_process_holds_only_the_secrets_declared_for_it(stack):
    """The environment each process of the stack runs with (/proc/<pid>/environ): of the secret settings, exactly
    those core.registry declares for it (a provider simulator: its provider's credentials), with the stack's values
    (DATABASE_URL and DIRECT_DATABASE_URL: its role's, not the owner's)."""
    if not Path("/proc/self/environ").exists():
        pytest.skip("no /proc here")
    every = stack.env()
    for p in stack.processes:
        entries = Path(f"/proc/{p.proc.pid}/environ").read_bytes().decode().split("\0")
        environ = dict(entry.split("=", 1) for entry in entries if entry)
        held = {name: value for name, value in environ.items() if name in SECRET_FIELDS}
        own = {}  # what its kind holds of its own: its caller context key, its NATS user, its database role's URL
        if p.module in KINDS:
            own[registry.CALLER_SIGNING_KEY] = stack.caller_keys()[KINDS[p.module]][0]
            own[registry.NATS_SEED] = stack.nats_login(KINDS[p.module]).seed
            for variable in ("DATABASE_URL", registry.DIRECT_DATABASE_URL):  # no pooler here: both are direct
                if variable in p.secrets:
                    own[variable] = stack.database_url_of(KINDS[p.module])
        assert held == {name: own.get(name) or every[name] for name in p.secrets
                        if name not in OPTIONAL_SECRETS or name in every or name in own}, p.name  # unset: not given
    launched = {p.name: p.secrets for p in stack.processes if p.name in registry.SECRETS}
    assert launched == {name: secrets for name, secrets in registry.SECRETS.items() if name not in registry.JOBS}


def test_second_postgres_on_the_same_data_is_refused(stack):
    if stack.postgres is None:
        pytest.skip("DATABASE_URL points at an external server")
    with pytest.raises(RuntimeError, match="already running"):
        Postgres(stack.home, durable=False).start()


async def test_gateway_flushes_the_usage_log_when_stopped(api, account, stack):
    """Entries still queued behind the request path are written on SIGTERM, not lost."""
    key = account["key"]
    for _ in range(5):
        assert (await api.request("GET", "/api/v1/balance", key=key))[0] == 200
    stack.restart_process("gateway")  # SIGTERM, wait for exit, start again
    stack.wait_ready(30)
    async with aiohttp.ClientSession() as session:
        fresh = Api(session, stack.base_url)
        status, body, _ = await fresh.request("GET", "/api/v1/usage", key=key)
    assert status == 200
    assert len([e for e in body["usage"] if e["endpoint"] == "/api/v1/balance"]) == 5


async def test_a_stopped_service_is_a_clear_503_and_recovery_is_automatic(api, account, stack):
    accounts = stack.process("accounts")
    stack.stop_process(accounts)
    try:
        status, body, _ = await api.request("GET", "/api/v1/balance", key=account["key"])
        assert status == 503 and body["error"]["code"] == "unavailable"
    finally:
        stack.spawn(accounts)
        stack.wait_ready(30)
    assert (await api.request("GET", "/api/v1/balance", key=account["key"]))[0] == 200


async def test_a_stopped_service_shows_in_the_health_not_in_the_gateways_readiness(api, account, stack):
    """One service down leaves the gateway ready (it serves every route that does not need it, and the others with a
    clear 503): /api/v1/health shows it degraded."""
    async def services():
        return (await api.request("GET", "/api/v1/health", key=account["key"]))[1]["services"]
    # every service ok first: after a test restarted one, sdr's channel to it (which the health asks over) is back
    # within its reconnect backoff (core.rpc), later than the gateways' that wait_ready watches
    await wait_until(services, "every service ok in the health", lambda found: set(found.values()) == {"ok"},
                     timeout=10)
    evals = stack.process("evals")
    stack.stop_process(evals)
    try:
        status, body, _ = await api.request("GET", "/readyz")
        assert status == 200 and body["ready"] is True
        status, body, _ = await api.request("GET", "/api/v1/health", key=account["key"])
        assert status == 200 and body["status"] == "degraded"
        assert body["services"]["evals"] == "unreachable" and body["services"]["accounts"] == "ok"
    finally:
        stack.spawn(evals)
        stack.wait_ready(30)


async def test_on_sigterm_a_gateway_is_unready_at_once_serves_through_its_delay_then_exits(api, account, stack):
    """/readyz 503 at once, every route still answered for SHUTDOWN_DELAY_SECONDS, then a clean exit."""
    delay = 5.0
    replica = await asyncio.to_thread(stack.add_gateway, f"gateway-draining-{uuid.uuid4().hex[:6]}",
                                      {"SHUTDOWN_DELAY_SECONDS": str(delay)})
    draining = Api(api.session, f"http://127.0.0.1:{replica.port}")
    try:
        assert (await draining.request("GET", "/readyz"))[0] == 200
        signalled = time.monotonic()
        replica.proc.send_signal(signal.SIGTERM)
        status, body, _ = await wait_until(lambda: draining.request("GET", "/readyz"), "the gateway to be unready",
                                           lambda reply: reply[0] == 503, timeout=1, interval=0.05)
        assert body["draining"] is True
        assert (await draining.request("GET", "/api/v1/balance", key=account["key"]))[0] == 200
        assert time.monotonic() - signalled < delay  # answered while draining
        assert await asyncio.to_thread(replica.proc.wait, 30) == 0
        assert time.monotonic() - signalled >= delay
        assert "gateway stopped" in replica.log.read_text()
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)


async def test_usage_writer_drops_a_refused_batch_instead_of_blocking_the_log(stack):
    """A batch the accounts service can never store is dropped (and logged), not retried forever."""
    import asyncio

    from core import rpc, settings
    from gateway.usage import UsageWriter
    from switchboard.v1 import accounts_pb2, accounts_pb2_grpc
    from tests.tenants import act_as

    act_as(stack)  # the gateway's writer
    async with rpc.channel(f"127.0.0.1:{stack.process('accounts').port}", settings.load()) as channel:
        accounts = registry.service("accounts")
        writer = UsageWriter(rpc.Client(accounts_pb2_grpc.AccountsStub(channel), accounts.descriptor(), "accounts"))
        bad = accounts_pb2.UsageEntry(endpoint="/x", method="GET", status_code=200, account_id="nope", api_key_id="nope")
        await asyncio.wait_for(writer._send([bad]), 5.0)
