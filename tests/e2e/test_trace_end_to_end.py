"""One API call, one trace: a stack whose every process exports OTLP over HTTP (OTEL_EXPORTER_OTLP_ENDPOINT) to a
receiver in this test, a lead created, and the trace from the gateway to the webhook's delivery that it caused:
gateway server span, gRPC client span, the service's server span and SQL spans, the outbox's NATS publish, the
dispatcher's consumer span and the webhook POST."""
import asyncio
import gzip
import threading
import uuid
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from deploy.local.servers import free_port
from tests.api import Api
from tests.conftest import embedded_stack
from tests.receiver import Receiver
from tests.waiting import wait_until

SERVER, CLIENT = SpanProto.SPAN_KIND_SERVER, SpanProto.SPAN_KIND_CLIENT
PRODUCER, CONSUMER = SpanProto.SPAN_KIND_PRODUCER, SpanProto.SPAN_KIND_CONSUMER


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict


def _value(v: AnyValue):
    return getattr(v, v.WhichOneof("value")) if v.WhichOneof("value") else None


class Collector:
    """An OTLP/HTTP trace receiver (POST /v1/traces, protobuf), in a thread of its own so that it answers while
    the stack starts."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.spans: list[Span] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()

    async def export(self, request: web.Request) -> web.Response:
        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            service = next(_value(a.value) for a in resource.resource.attributes if a.key == "service.name")
            self.spans += [Span(service, s.name, s.kind, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(),
                                {a.key: _value(a.value) for a in s.attributes})
                           for scope in resource.scope_spans for s in scope.spans]
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(),
                            content_type="application/x-protobuf")

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/traces", self.export)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        self.loop.run_until_complete(web.TCPSite(self.runner, "127.0.0.1", self.port).start())
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.runner.cleanup())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)

    def trace(self, trace_id: str) -> dict[str, Span]:
        return {s.span_id: s for s in list(self.spans) if s.trace_id == trace_id}


@pytest.fixture(scope="module")
def traced(request):
    """A stack of its own whose processes export their spans to the collector, batched every 100 ms."""
    collector = Collector()
    thread = threading.Thread(target=collector.run, daemon=True)
    thread.start()
    collector.ready.wait(5)
    try:
        with embedded_stack(request, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                                      "OTEL_BSP_SCHEDULE_DELAY": "100"}) as stack:
            yield stack, collector
    finally:
        collector.stop()
        thread.join(5)


def _ancestors(span: Span, spans: dict[str, Span]) -> list[Span]:
    """`span`, its parent, and so on up to the root."""
    chain = [span]
    while chain[-1].parent_id in spans:
        chain.append(spans[chain[-1].parent_id])
    return chain


async def test_one_api_call_is_one_trace_from_the_gateway_to_the_webhook_delivery(traced):
    stack, collector = traced
    receiver = await Receiver().start()
    async with aiohttp.ClientSession() as session:
        api = Api(session, stack.base_url, stack.database_url)
        signup = await api.signup(email=f"owner-{uuid.uuid4().hex[:10]}@example.com")
        dash = await api.dashboard(signup)
        key = (await dash.create_key(name="all", scopes=["*"]))["key"]
        await dash.close()
        status, body, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
            "webhook_url": receiver.url, "events": ["lead.created"]})
        assert status == 201, body
        status, lead, _ = await api.request("POST", "/api/v1/leads", key=key,
                                            json={"business_id": signup["business_id"], "name": "Traced Lead"})
        assert status == 201, lead
        status, page, _ = await api.request("GET", "/api/v1/leads", key=key)
        assert status == 200 and [item["id"] for item in page["leads"]] == [lead["id"]], page
    delivered = await receiver.wait_for(1, "lead.created")
    await receiver.stop()
    assert next(iter(delivered.values()))["json"]["data"]["id"] == lead["id"]

    def the_call() -> list[Span]:
        return [s for s in collector.spans if s.service == "gateway" and s.kind == SERVER
                and s.attributes.get("http.route") == "/api/v1/leads"
                and s.attributes.get("http.request.method") == "POST"]

    root = (await wait_until(the_call, "the gateway's span of POST /api/v1/leads", timeout=10))[0]

    def whole_trace() -> dict[str, Span]:
        spans = collector.trace(root.trace_id)
        posts = [s for s in spans.values() if s.service == "webhooks-dispatcher" and s.kind == CLIENT
                 and s.attributes.get("http.request.method") == "POST"]
        # done once the delivery is in and every span's parent is too (processes export on their own schedules)
        return spans if posts and all(s.parent_id in spans for s in spans.values() if s is not root) else {}

    spans = await wait_until(whole_trace, "the webhook delivery's span in a whole trace", timeout=15)
    # One tree: the gateway's span is the only root, every other span's parent is in the trace.
    assert root.parent_id == "" and [s for s in spans.values() if s.parent_id not in spans] == [root]

    assert root.name == "POST /api/v1/leads" and root.attributes["http.response.status_code"] == 201
    assert root.attributes["url.path"] == "/api/v1/leads"
    post = next(s for s in spans.values() if s.service == "webhooks-dispatcher" and s.kind == CLIENT
                and s.attributes.get("http.request.method") == "POST")
    assert post.attributes["url.full"] == receiver.url and post.attributes["http.response.status_code"] == 200
    assert post.attributes["switchboard.event.type"] == "lead.created"
    # From the delivery up to the gateway: consumer, the outbox's publish, the sdr service's server span, the
    # gateway's RPC to it, the gateway's own span.
    chain = _ancestors(post, spans)
    consume, publish, served, called = chain[1:5]
    assert (consume.service, consume.kind) == ("webhooks-dispatcher", CONSUMER)
    assert consume.attributes["messaging.system"] == "nats"
    assert consume.attributes["messaging.destination.name"].startswith("events.")
    assert (publish.service, publish.kind, publish.name) == ("sdr", PRODUCER, "send events.lead.created")
    assert publish.attributes["messaging.system"] == "nats"
    assert publish.attributes["messaging.destination.name"] == "events.lead.created"
    assert (served.service, served.kind, served.name) == ("sdr", SERVER, "switchboard.v1.Sdr/CreateLead")
    assert (called.service, called.kind, called.name) == ("gateway", CLIENT, "switchboard.v1.Sdr/CreateLead")
    for span in (served, called):
        assert span.attributes["rpc.system"] == "grpc" and span.attributes["rpc.service"] == "switchboard.v1.Sdr"
        assert span.attributes["rpc.method"] == "CreateLead"
    assert chain[5:] == [root]
    # The SQL statements: the lead's insert and its outbox row under the service's span, the dispatcher's fan-out
    # under the consumer's.
    sql = [s for s in spans.values() if s.kind == CLIENT and s.attributes.get("db.system") == "postgresql"]
    assert {s.name.split()[0] for s in sql if s.parent_id == served.span_id} >= {"INSERT"}
    assert any("INTO sdr.outbox" in s.attributes.get("db.statement", "") for s in sql if s.parent_id == served.span_id)
    assert any(s.parent_id == consume.span_id and s.service == "webhooks-dispatcher" for s in sql)


    # The page of leads is read on the raw pool (core.db.Prepared), whose statements have their spans too.
    def listing() -> list[Span]:
        return [s for s in collector.spans if s.service == "sdr" and s.kind == CLIENT
                and "FROM sdr.leads" in s.attributes.get("db.statement", "")
                and any(p.span_id == s.parent_id and p.name == "switchboard.v1.Sdr/ListLeads" for p in collector.spans)]

    read = (await wait_until(listing, "the span of the page's SELECT under the sdr service's ListLeads"))[0]
    assert read.name == "SELECT" and read.attributes["db.system"] == "postgresql"
