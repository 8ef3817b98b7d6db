"""A receiver of OpenTelemetry traces for the tests: OTLP over HTTP (POST /v1/traces, protobuf, decoded with
opentelemetry-proto), in a thread of its own so that it answers while a stack starts."""
import asyncio
import gzip
import threading
from dataclasses import dataclass

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from deploy.local.servers import free_port

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

    def start(self) -> "Collector":
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        self.ready.wait(5)
        return self

    def close(self) -> None:
        self.stop()
        self.thread.join(5)
