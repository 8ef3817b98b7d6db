"""The gRPC runtime: error mapping, tracing through metadata, graceful shutdown."""
import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import asynccontextmanager

import asyncpg
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy.engine import make_url

from core import registry, rpc, settings
from core.grpc_errors import from_rpc_error
from core.grpc_server import serve
from core.migrations import SERVICES, upgrade_all
from core.rpc import Client
from core.tenant import Tenant
from deploy.local.servers import free_port, wait_for_port
from deploy.local.stack import ROOT
from services.accounts.schema import outbox
from services.accounts.servicer import build
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc, common_pb2
from tests.integration.servers import accepting
from tests.tenants import signed
from tests.waiting import wait_until

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def tracing():
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)


@asynccontextmanager
async def serving(stack, monkeypatch, database_url=None):
    """The real accounts servicer in this process (so spans can be inspected), on its own port."""
    port = free_port()
    monkeypatch.setenv("DATABASE_URL", database_url or stack.database_url)
    monkeypatch.setenv("NATS_URL", stack.nats_url)
    monkeypatch.setenv("SWITCHBOARD_ENV", "local")
    monkeypatch.setenv("SHUTDOWN_DELAY_SECONDS", "0")  # stopped by the test alone
    monkeypatch.setenv("SWITCHBOARD_SECRET_KEY", stack.env()["SWITCHBOARD_SECRET_KEY"])  # its callers' keys
    stop = asyncio.Event()
    task = asyncio.create_task(serve("accounts-test", port, settings.load(), build, service=registry.service("accounts"),
                                     outbox_table=outbox, stop_event=stop))
    await wait_until(lambda: accepting(port), f"the accounts servicer to listen on {port}", timeout=5, interval=0.05)
    try:
        yield port
    finally:
        stop.set()
        await task


def missing_database(stack) -> str:
    return make_url(stack.database_url).set(database=f"missing_{uuid.uuid4().hex[:6]}").render_as_string(False)


def _tenant_md(stack, business_id="00000000-0000-0000-0000-000000000001"):
    return signed(stack, Tenant(account_id=str(uuid.uuid4()), business_ids=(business_id,),
                                api_key_id=str(uuid.uuid4())), to="accounts")


async def test_trace_context_crosses_the_grpc_hop(stack, monkeypatch):
    async with serving(stack, monkeypatch) as port, rpc.channel(f"127.0.0.1:{port}", settings.load()) as ch:
        stub = Client(accounts_pb2_grpc.AccountsStub(ch), registry.service("accounts").descriptor(), "accounts")
        with trace.get_tracer("test").start_as_current_span("client-request") as parent:
            await stub.ListWorkspaces(accounts_pb2.ListWorkspacesRequest(), metadata=_tenant_md(stack))
    spans = [s for s in EXPORTER.get_finished_spans() if s.name == "/switchboard.v1.Accounts/ListWorkspaces"]
    server_spans = [s for s in spans if s.kind == trace.SpanKind.SERVER]
    client_spans = [s for s in spans if s.kind == trace.SpanKind.CLIENT]
    assert server_spans, "the server interceptor made no span"
    assert client_spans, "the client made no span"
    span, client = server_spans[-1], client_spans[-1]
    assert span.context.trace_id == parent.get_span_context().trace_id
    # the request's span, the client's span of the RPC, the server's span of it
    assert client.parent.span_id == parent.get_span_context().span_id
    assert span.parent.span_id == client.context.span_id
    assert span.attributes["rpc.method"] == client.attributes["rpc.method"] == "ListWorkspaces"
    assert span.attributes["rpc.service"] == client.attributes["rpc.service"] == "switchboard.v1.Accounts"


async def test_errors_carry_the_public_code_and_internal_errors_leak_nothing(stack, monkeypatch):
    async with serving(stack, monkeypatch, missing_database(stack)) as port, \
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = accounts_pb2_grpc.AccountsStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await stub.UpdateWorkspace(accounts_pb2.UpdateWorkspaceRequest(id="nope"), metadata=_tenant_md(stack))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        status = rpc_status.from_call(bad.value)
        info = error_details_pb2.ErrorInfo()
        status.details[0].Unpack(info)
        assert info.reason == "invalid_request" and "UUID" in status.message
        with pytest.raises(grpc.aio.AioRpcError) as internal:
            await stub.ListWorkspaces(accounts_pb2.ListWorkspacesRequest(page=common_pb2.PageRequest(limit=5)),
                                      metadata=_tenant_md(stack))
        assert internal.value.code() == grpc.StatusCode.INTERNAL
        assert "missing_" not in internal.value.details() and "asyncpg" not in internal.value.details()
        assert from_rpc_error(internal.value).code == "internal_error"


async def test_deadline_is_enforced(stack, monkeypatch):
    # A database that takes the connection and never answers: the read cannot finish, whatever the machine's speed
    # (a 0.1 ms deadline on a real read was met once reads became one round trip).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"postgresql://nobody@127.0.0.1:{silent.getsockname()[1]}/silent"
        async with serving(stack, monkeypatch, url) as port, grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = accounts_pb2_grpc.AccountsStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.ListWorkspaces(accounts_pb2.ListWorkspacesRequest(), metadata=_tenant_md(stack), timeout=0.5)
            assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_sigterm_drains_and_exits_cleanly(stack):
    accounts = stack.process("accounts")
    accounts.proc.send_signal(signal.SIGTERM)
    assert accounts.proc.wait(20) == 0
    assert "accounts stopped" in accounts.log.read_text()
    stack.restart_process("accounts")
    wait_for_port(accounts.port, 30, accounts.proc, "accounts", accounts.log)
    stack.wait_ready(30)


def test_settings_never_show_secrets(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2@db/x")
    monkeypatch.setenv("SWITCHBOARD_SECRET_KEY", "topsecret")
    cfg = settings.load()
    text = f"{cfg!r} {cfg.database_url} {cfg.secret_key!r}"
    assert "hunter2" not in text and "topsecret" not in text
    assert cfg.secret_key.reveal() == "topsecret"


# What the migrations made in the services' schemas, as the catalogue shows it.
CATALOGUE = {
    "columns": "SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default "
               "FROM information_schema.columns WHERE table_schema = ANY($1)",
    "indexes": "SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = ANY($1)",
    "constraints": "SELECT n.nspname, c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) "
                   "FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = ANY($1)",
    "triggers": "SELECT trigger_schema, event_object_table, trigger_name, event_manipulation, action_statement "
                "FROM information_schema.triggers WHERE trigger_schema = ANY($1)",
    "functions": "SELECT n.nspname, p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
                 "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY($1)",
}


def schema_of(database_url: str) -> dict:
    """Each service's alembic revision, and the columns, indexes, constraints, triggers and functions of the
    services' schemas."""
    async def read() -> dict:
        conn = await asyncpg.connect(database_url)
        try:
            shape = {name: sorted(map(tuple, await conn.fetch(query, list(SERVICES))))
                     for name, query in CATALOGUE.items()}
            shape["revisions"] = {service: await conn.fetchval(f'SELECT version_num FROM "{service}".alembic_version')
                                  for service in SERVICES}
            return shape
        finally:
            await conn.close()
    return asyncio.run(read())


def test_migrations_are_idempotent(stack):
    """Running every service's migrations again over the migrated database leaves each service at its revision
    and its schema as it was."""
    before = schema_of(stack.database_url)
    assert all(before["revisions"].values()), before["revisions"]
    assert all(before[part] for part in CATALOGUE), {part: len(rows) for part, rows in before.items()}
    upgrade_all(stack.database_url)
    assert schema_of(stack.database_url) == before


async def test_without_its_database_a_service_is_live_and_ready_and_its_dependencies_check_says_so(stack, monkeypatch):
    """Readiness is the process's alone: a database every replica shares, down, must not take them all out of their
    Service; the platform's health reads the "dependencies" check."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with serving(stack, monkeypatch, missing_database(stack)) as port, \
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        health = health_pb2_grpc.HealthStub(ch)
        live = await health.Check(health_pb2.HealthCheckRequest(service="liveness"))
        ready = await health.Check(health_pb2.HealthCheckRequest(service=""))
        dependencies = await health.Check(health_pb2.HealthCheckRequest(service=rpc.DEPENDENCIES))
    assert live.status == health_pb2.HealthCheckResponse.SERVING
    assert ready.status == health_pb2.HealthCheckResponse.SERVING
    assert dependencies.status == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_on_sigterm_a_service_is_unready_at_once_serves_through_its_delay_then_exits(stack):
    """Readiness NOT_SERVING at once (liveness still SERVING), calls still answered for SHUTDOWN_DELAY_SECONDS,
    then a clean exit."""
    delay = 5.0
    replica = await asyncio.to_thread(stack.add_replica, "accounts", f"accounts-draining-{uuid.uuid4().hex[:6]}",
                                      {"SHUTDOWN_DELAY_SECONDS": str(delay)})
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{replica.port}") as ch:
            stub = Client(accounts_pb2_grpc.AccountsStub(ch), registry.service("accounts").descriptor(), "accounts")
            await wait_until(lambda: rpc.health(ch, rpc.DEPENDENCIES), "the replica to reach its database and NATS",
                             lambda status: status == "ok")
            signalled = time.monotonic()
            replica.proc.send_signal(signal.SIGTERM)
            await wait_until(lambda: rpc.health(ch), "the replica to be unready", lambda status: status == "not_serving",
                             timeout=1, interval=0.05)
            assert await rpc.health(ch, "liveness") == "ok"
            await stub.ListWorkspaces(accounts_pb2.ListWorkspacesRequest(), metadata=_tenant_md(stack))
            assert time.monotonic() - signalled < delay  # answered while draining
        # within the grace a pod is given (deploy.workloads.grace_seconds: at most 70 s for a service), however
        # loaded the machine (20 s was too short once in the full suite)
        try:
            code = await asyncio.to_thread(replica.proc.wait, 60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 60 s after SIGTERM; its log ends:\n{replica.log.read_text()[-3000:]}")
        assert code == 0
        assert time.monotonic() - signalled >= delay
        assert "accounts stopped" in replica.log.read_text()
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)


def test_outside_the_local_stack_a_process_without_its_secrets_stops_naming_them():
    """`python -m services.calls` given none of its secrets (and SWITCHBOARD_SECRET_KEY, which it does not read): it
    names each it needs (not DIRECT_DATABASE_URL, which only a pooled DATABASE_URL needs)."""
    env = {name: value for name, value in os.environ.items() if name not in settings.SECRET_FIELDS} | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")]), "SWITCHBOARD_ENV": "production",
        "SWITCHBOARD_SECRET_KEY": "a-long-random-value", "CALLS_GRPC_PORT": str(free_port())}
    done = subprocess.run([sys.executable, "-m", "services.calls"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and done.stderr.splitlines() == [
        f"{variable}: must be set (calls reads it; outside the local stack a secret has no default)"
        for variable in registry.SECRETS["calls"] if variable not in settings.OPTIONAL_SECRETS]
