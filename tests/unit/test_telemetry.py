"""core.telemetry's outbound HTTP spans (aiohttp-client's instrumentation): a CLIENT span per request in the
semantic conventions' names, and no trace context sent to the party called."""
from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import telemetry
from deploy.local.servers import free_port


@pytest.fixture
def exported(monkeypatch):
    """This process exporting to memory, as `configure` would make it with an endpoint."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    monkeypatch.setattr(telemetry, "_exporting", True)
    return exporter


@pytest.fixture
async def receiver():
    """A server that answers each request with the headers it got."""
    async def echo(request: web.Request) -> web.Response:
        return web.json_response({k.lower(): v for k, v in request.headers.items()})

    app = web.Application()
    app.router.add_post("/hook", echo)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}/hook"
    await runner.cleanup()


async def test_an_outbound_request_is_a_client_span_and_sends_no_trace_context(exported, receiver):
    def describe(span: trace.Span, params: aiohttp.TraceRequestStartParams) -> None:
        span.set_attribute("switchboard.event.type", params.headers["X-Service-Event"])

    async with aiohttp.ClientSession(trace_configs=telemetry.http_client_traces(describe)) as session:
        with trace.get_tracer("test").start_as_current_span("delivery") as parent:
            async with session.post(f"{receiver}?token=theirs", headers={"X-Service-Event": "lead.created"}) as r:
                received = await r.json()
    assert r.status == 200 and "traceparent" not in received and received["x-service-event"] == "lead.created"
    [post] = [s for s in exported.get_finished_spans() if s.kind == trace.SpanKind.CLIENT]
    assert post.name == "POST" and post.parent.span_id == parent.get_span_context().span_id
    assert post.attributes["url.full"] == receiver  # without the query, which may hold a token of theirs
    assert post.attributes["http.request.method"] == "POST" and post.attributes["http.response.status_code"] == 200
    assert post.attributes["switchboard.event.type"] == "lead.created"


def test_without_an_exporter_no_session_is_instrumented(monkeypatch):
    monkeypatch.setattr(telemetry, "_exporting", False)
    assert telemetry.http_client_traces() == []
