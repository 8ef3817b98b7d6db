"""OpenTelemetry tracing: one trace per request across gateway, gRPC, PostgreSQL, NATS and webhook delivery.

W3C trace context travels in gRPC metadata and NATS headers through the standard propagator (and in the outbox
row, so the relay's publish continues the trace of the change that wrote the event). Spans are exported only when
a process is told where: OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), as OTLP over HTTP,
or OTEL_TRACES_EXPORTER=console; a test may install its own provider instead. Only then is the SDK provider
installed (and SQLAlchemy's instrumentation, `instrument_engine`); otherwise the API's non-recording spans still
carry an incoming trace id through every hop, and the span helpers here (`client_span`, `producer_span`) are a
check and a null context: nothing is recorded and nothing is exported.

The spans follow OpenTelemetry's semantic conventions: the gateway's SERVER span (http.*), a CLIENT span per RPC
and a SERVER span per served RPC (rpc.*), CLIENT spans per SQL statement (db.*), a PRODUCER span per NATS
publish and a CONSUMER span per message (or batch) processed (messaging.*), and a CLIENT span per webhook POST.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import Token
from typing import Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider, sampling
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import Attributes

_configured = False
# Whether this process installed its own provider (configure): the instrumentations are installed only then.
_exporting = False


class _NoLoneClientSpans(sampling.Sampler):
    """The root sampler: a CLIENT span that starts a trace (a background loop's poll of the database, a worker's
    housekeeping call) is dropped, else a worker polling five times a second would be a trace every 200 ms; a
    span within a traced request, message or delivery follows its parent (ParentBased)."""

    def should_sample(self, parent_context: otel_context.Context | None, trace_id: int, name: str,
                      kind: SpanKind | None = None, attributes: Attributes = None,
                      links: Sequence[trace.Link] | None = None,
                      trace_state: trace.TraceState | None = None) -> sampling.SamplingResult:
        decision = sampling.Decision.DROP if kind == SpanKind.CLIENT else sampling.Decision.RECORD_AND_SAMPLE
        return sampling.SamplingResult(decision, attributes if decision == sampling.Decision.RECORD_AND_SAMPLE
                                       else None, trace_state)

    def get_description(self) -> str:
        return "NoLoneClientSpans"


def _exporter() -> SpanExporter | None:
    """The exporter the environment asks for, or None (then nothing is recorded)."""
    chosen = os.environ.get("OTEL_TRACES_EXPORTER", "otlp")
    if chosen == "console":
        return ConsoleSpanExporter()
    if chosen == "otlp" and (os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                             or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        # Imported only when exporting. It reads the endpoint (adding /v1/traces), headers, timeout and
        # compression from the standard OTEL_EXPORTER_OTLP_* variables.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    return None


def configure(service_name: str) -> None:
    """Called once at the start of every process: export this process's spans (as `service_name`) when the
    environment says where (module docstring), with a BatchSpanProcessor (OTEL_BSP_* tune it)."""
    global _configured, _exporting
    if _configured:
        return
    _configured = True
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return  # a test already installed one
    exporter = _exporter()
    if exporter is None:
        return
    from opentelemetry.sdk.resources import Resource

    # OTEL_TRACES_SAMPLER, when set, replaces ours (the SDK reads it when given no sampler).
    sampler = None if os.environ.get("OTEL_TRACES_SAMPLER") else sampling.ParentBased(_NoLoneClientSpans())
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}), sampler=sampler)
    provider.add_span_processor(BatchSpanProcessor(exporter))  # flushed at exit (the provider's shutdown)
    trace.set_tracer_provider(provider)
    _exporting = True


def recording() -> bool:
    """Whether spans are recorded in this process (an SDK provider is installed)."""
    return isinstance(trace.get_tracer_provider(), TracerProvider)


def instrument_engine(engine: Any) -> None:
    """SQL spans (OpenTelemetry's SQLAlchemy instrumentation) for this process's engine (an AsyncEngine), when
    this process exports spans."""
    if not _exporting:
        return
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    # It declares SQLAlchemy below 2.1, whose engine events (all it uses) are 2.0's: tests/scaleout/test_trace_end_to_end
    # checks its spans.
    SQLAlchemyInstrumentor().instrument(engine=engine.sync_engine, skip_dep_check=True)


def tracer(name: str = "switchboard") -> trace.Tracer:
    return trace.get_tracer(name)


def inject(carrier: dict[str, str]) -> dict[str, str]:
    """Write the current trace context into a header/metadata dict."""
    propagate.inject(carrier)
    return carrier


def extract(carrier: Mapping[str, str]) -> otel_context.Context:
    """A context whose parent is the trace in the carrier (if any)."""
    return propagate.extract(carrier)


class _Attached:
    """Makes a trace context current for a block, without a span of our own."""

    def __init__(self, ctx: otel_context.Context) -> None:
        self.ctx = ctx
        self.token: Token[otel_context.Context] | None = None

    def __enter__(self) -> None:
        self.token = otel_context.attach(self.ctx)
        return None

    def __exit__(self, *exc: object) -> Literal[False]:
        if self.token is not None:
            otel_context.detach(self.token)
        return False


def continue_trace(tracer_: trace.Tracer, name: str, carrier: Mapping[str, str], *,
                   kind: SpanKind = SpanKind.SERVER,
                   attributes: Attributes = None) -> AbstractContextManager[trace.Span | None]:
    """Context manager for one incoming request or message: a span of `kind` when spans are recorded, otherwise
    just the caller's trace context (if any) so it propagates to further calls. Yields the span, or None when not
    recording."""
    parent = extract(carrier) if "traceparent" in carrier else None
    if recording():
        return tracer_.start_as_current_span(name, context=parent, kind=kind, attributes=attributes)
    return nullcontext() if parent is None else _Attached(parent)


def continue_batch(tracer_: trace.Tracer, name: str, carriers: list[Mapping[str, str]], *,
                   attributes: Attributes = None) -> AbstractContextManager[trace.Span | None]:
    """Context manager for a batch of incoming messages handled together: a consumer span linked to each
    message's trace when spans are recorded (a span has one parent, so the traces are links; when every message
    comes from one trace, as the events one change wrote do, the first message's span is its parent too, so that
    trace goes on through the batch), otherwise nothing."""
    if not recording():
        return nullcontext()
    contexts = [ctx for ctx in (trace.get_current_span(extract(c)).get_span_context()
                                for c in carriers if "traceparent" in c) if ctx.is_valid]
    one_trace = bool(contexts) and len(contexts) == len(carriers) and len({c.trace_id for c in contexts}) == 1
    parent = trace.set_span_in_context(trace.NonRecordingSpan(contexts[0])) if one_trace else None
    return tracer_.start_as_current_span(name, context=parent, kind=SpanKind.CONSUMER,
                                         links=[trace.Link(c) for c in contexts], attributes=attributes)


def client_span(tracer_: trace.Tracer, name: str,
                attributes: Attributes = None) -> AbstractContextManager[trace.Span | None]:
    """A CLIENT span (an outgoing call: an RPC, a statement, a webhook POST) around a block when spans are
    recorded, else nothing; yields the span or None."""
    if not recording():
        return nullcontext()
    return tracer_.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes)


def http_server_response(span: trace.Span, status: int, scheme: str, path: str) -> None:
    """A server span's request path and response status (an error when 5xx: a 4xx is the client's)."""
    span.set_attributes({"http.response.status_code": status, "url.scheme": scheme, "url.path": path})
    if status >= 500:
        span.set_status(trace.StatusCode.ERROR)
        span.set_attribute("error.type", str(status))


def rpc_span(service: str, method: str) -> tuple[str, dict[str, str]]:
    """The name and attributes of an RPC's spans, client and server (`service`: package.Service)."""
    return f"{service}/{method}", {"rpc.system": "grpc", "rpc.service": service, "rpc.method": method}


def messaging(destination: str, operation: str) -> dict[str, str]:
    """The messaging attributes of a NATS span (`operation`: send, process)."""
    return {"messaging.system": "nats", "messaging.destination.name": destination,
            "messaging.operation.type": operation}


@contextmanager
def producer_span(tracer_: trace.Tracer, destination: str, headers: dict[str, str], *,
                  parent: Mapping[str, str] | None = None) -> Iterator[None]:
    """Around the publishing of one message whose `headers` are sent: a PRODUCER span when spans are recorded,
    child of the trace in `parent` (the headers an outbox row kept) or else of the current one, whose context is
    then written into `headers` (for the consumer to continue). When not recording the headers keep the trace they
    have (an outbox row's) or get the current one."""
    if not recording():
        if parent is None:
            inject(headers)
        yield
        return
    ctx = extract(parent) if parent is not None else None
    with tracer_.start_as_current_span(f"send {destination}", context=ctx, kind=SpanKind.PRODUCER,
                                       attributes=messaging(destination, "send")):
        inject(headers)
        yield
