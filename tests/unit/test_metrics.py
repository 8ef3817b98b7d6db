"""core.metrics' instruments on an in-memory reader: what each measurement records, the sampler behind the gauges,
and the provider clients' request timing."""
from __future__ import annotations

import aiohttp
import grpc
import pytest
from aiohttp import web
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from core import metrics
from deploy.local.servers import free_port


@pytest.fixture
def recorded(monkeypatch):
    """Instruments on an in-memory reader, installed as the process's; `recorded()` is {metric: {labels: value}}
    (a histogram's value is its count of samples)."""
    reader = InMemoryMetricReader()
    instruments = metrics.Instruments(MeterProvider(metric_readers=[reader]).get_meter("test"))
    monkeypatch.setattr(metrics, "_instruments", instruments)

    def read() -> dict[str, dict[frozenset, float]]:
        found: dict[str, dict[frozenset, float]] = {}
        for resource in reader.get_metrics_data().resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found[metric.name] = {frozenset(p.attributes.items()): getattr(p, "count", None) or p.value
                                          for p in metric.data.data_points}
        return found

    read.instruments = instruments
    return read


def test_rpcs_are_timed_in_the_semantic_conventions_names(recorded):
    recorded.instruments.rpc_server_done("switchboard.v1.Sdr", "CreateLead", grpc.StatusCode.OK, 0.01)
    recorded.instruments.rpc_server_done("switchboard.v1.Sdr", "CreateLead", grpc.StatusCode.NOT_FOUND, 0.02)
    recorded.instruments.rpc_client_done("switchboard.v1.Sdr", "CreateLead", grpc.StatusCode.OK, 0.03)
    found = recorded()

    def call(code: int) -> frozenset:
        return frozenset({"rpc.system": "grpc", "rpc.service": "switchboard.v1.Sdr", "rpc.method": "CreateLead",
                          "rpc.grpc.status_code": code}.items())

    assert found["rpc.server.duration"] == {call(0): 1, call(5): 1}
    assert found["rpc.client.duration"] == {call(0): 1}


def test_a_statement_is_timed_by_its_operation_and_a_failure_by_its_error(recorded):
    recorded.instruments.db_done("  select 1", 0.001)
    recorded.instruments.db_done("INSERT INTO sdr.leads VALUES ($1)", 0.002, ValueError("no"))
    found = recorded()
    assert found["db.client.operation.duration"] == {
        frozenset({"db.system.name": "postgresql", "db.operation.name": "SELECT"}.items()): 1,
        frozenset({"db.system.name": "postgresql", "db.operation.name": "INSERT", "error.type": "ValueError"}.items()): 1}


def test_a_webhook_attempt_records_its_lag_only_when_delivered(recorded):
    recorded.instruments.webhook_attempt("delivered", 1.5)
    recorded.instruments.webhook_attempt("pending", 0.1)
    recorded.instruments.webhook_attempt("failed", 9.0)
    found = recorded()
    assert sum(found["switchboard.webhooks.attempts"].values()) == 3
    assert found["switchboard.webhooks.failures"] == {frozenset({("status", "pending")}): 1,
                                                      frozenset({("status", "failed")}): 1}
    assert found["switchboard.webhooks.delivery_lag"] == {frozenset(): 1}


async def test_provider_requests_are_timed_and_failures_counted(recorded):
    async def answer(request: web.Request) -> web.Response:
        return web.Response(status=int(request.query["status"]))

    app = web.Application()
    app.router.add_get("/", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession(trace_configs=metrics.provider_traces("voice")) as session:
            for status in (200, 404, 429, 503):
                async with session.get(f"http://127.0.0.1:{port}/", params={"status": str(status)}) as r:
                    assert r.status == status
            with pytest.raises(aiohttp.ClientConnectorError):
                await session.get(f"http://127.0.0.1:{free_port()}/")
    finally:
        await runner.cleanup()
    found = recorded()

    def labels(outcome: str) -> frozenset:
        return frozenset({"provider": "voice", "http.request.method": "GET", "outcome": outcome}.items())

    assert found["switchboard.provider.duration"] == {labels(o): 1 for o in (
        "2xx", "4xx", "429", "5xx", "ClientConnectorError")}
    assert found["switchboard.provider.errors"] == {labels(o): 1 for o in ("429", "5xx", "ClientConnectorError")}


def test_without_metrics_a_provider_session_has_no_trace_config(monkeypatch):
    monkeypatch.setattr(metrics, "_instruments", None)
    assert metrics.provider_traces("voice") == []


async def test_a_sampler_keeps_its_last_answer_and_tries_again_sooner_while_it_fails():
    answers: list = [ConnectionError("not yet"), ConnectionError("not yet"), [(3.0, {"consumer": "c"})]]

    async def probe() -> metrics.Sample:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    sampler = metrics.Sampler("test", probe, every=15.0)
    await sampler.round()
    assert (sampler.observe(None), sampler.interval) == ([], 1.0)
    await sampler.round()
    assert sampler.interval == 2.0
    await sampler.round()
    [observed] = sampler.observe(None)
    assert (observed.value, observed.attributes, sampler.interval) == (3.0, {"consumer": "c"}, 15.0)
