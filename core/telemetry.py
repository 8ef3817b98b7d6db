"""OpenTelemetry tracing: one trace per request across gateway, gRPC, PostgreSQL, NATS and webhook delivery.

The spans are the OpenTelemetry instrumentation packages' wherever one exists, named and described by the semantic
conventions (OTEL_SEMCONV_STABILITY_OPT_IN defaults to `http,database`: the stable HTTP and database attributes):
the gateway's SERVER span per request (`http_server_instrumented`, aiohttp-server), a CLIENT span per RPC and a
SERVER span per served RPC (`grpc_client_interceptors`, `grpc_server_interceptors`: grpc's aio interceptors),
a CLIENT span per SQL statement (asyncpg's, which sees SQLAlchemy's statements and the raw pool's alike) and a
CLIENT span per outgoing HTTP request (`http_client_traces`, aiohttp-client: webhook POSTs, providers' APIs).
NATS has no instrumentation package: its PRODUCER span per publish and CONSUMER span per message (or batch) are
made here (`producer_span`, `continue_trace`, `continue_batch`), and W3C trace context travels in the message
headers (and in the outbox row, so the relay's publish continues the trace of the change that wrote the event).

Spans are exported only when a process is told where: OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), as OTLP over HTTP, or OTEL_TRACES_EXPORTER=console; a test may install its
own provider instead. Only then is the SDK provider installed, with the leaf spans' instrumentations (SQL, outgoing
HTTP); the HTTP server's and gRPC's are always on, so that without the SDK the API's non-recording spans still
carry an incoming trace id through every hop (and into the logs, core.logs) while nothing is recorded.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider, sampling
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import Attributes

if TYPE_CHECKING:
    import aiohttp
    import grpc

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
    _semantic_conventions()
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

    # every asyncpg connection's statements: SQLAlchemy's and the raw pool's (the package is unannotated)
    AsyncPGInstrumentor().instrument()  # type: ignore[no-untyped-call]


def _semantic_conventions() -> None:
    """The stable HTTP and database conventions' names (`http.request.method`, `url.full`, `db.query.text`...)
    rather than the packages' default, the old ones; read once, by the first instrumentation installed."""
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "http,database")


def recording() -> bool:
    """Whether spans are recorded in this process (an SDK provider is installed)."""
    return isinstance(trace.get_tracer_provider(), TracerProvider)


def grpc_server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """A server's interceptors: grpc's SERVER span per call, continuing the caller's trace (outermost: the
    caller's token, cost tag and deadline, core.interceptors, are handled within it)."""
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor()]  # type: ignore[no-untyped-call]  # the package is unannotated


def grpc_client_interceptors() -> list[grpc.aio.ClientInterceptor]:
    """A channel's interceptors: grpc's CLIENT span per call, whose context goes in the call's metadata."""
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    interceptors: list[grpc.aio.ClientInterceptor] = aio_client_interceptors()  # type: ignore[no-untyped-call]
    return interceptors


def http_server_instrumented() -> None:
    """aiohttp-server's SERVER span (and `http.server.request.duration`) for every request of the applications
    made from now on (its middleware goes first in each: it times the whole answer)."""
    from opentelemetry.instrumentation.aiohttp_server import AioHttpServerInstrumentor

    instrumentor = AioHttpServerInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        _semantic_conventions()
        with warnings.catch_warnings():  # aiohttp discourages the subclass of web.Application it installs
            warnings.simplefilter("ignore", DeprecationWarning)
            instrumentor.instrument()


# aiohttp-client writes the trace context into every request; these headers are removed again before it is sent
# to a party outside the platform (a webhook receiver, a provider), which gets no trace ids of ours.
_TRACE_HEADERS = ("traceparent", "tracestate", "baggage")


def http_client_traces(request_hook: Callable[[trace.Span, Any], None] | None = None) -> list[aiohttp.TraceConfig]:
    """A session's trace configs (`trace_configs=`) when spans are exported: aiohttp-client's CLIENT span per
    request (its URL without query or credentials; `request_hook(span, params)` may add attributes), sending no
    trace context; none otherwise."""
    if not _exporting:
        return []
    import aiohttp
    from opentelemetry.instrumentation._semconv import _StabilityMode
    from opentelemetry.instrumentation.aiohttp_client import create_trace_config
    from yarl import URL

    def without_query(url: URL) -> str:
        return str(url.with_query(None).with_fragment(None).with_user(None))

    async def untraced(session: Any, ctx: Any, params: aiohttp.TraceRequestStartParams) -> None:
        for name in _TRACE_HEADERS:
            params.headers.popall(name, None)

    private = aiohttp.TraceConfig()
    private.on_request_start.append(untraced)
    return [create_trace_config(url_filter=without_query, request_hook=request_hook,
                                sem_conv_opt_in_mode=_StabilityMode.HTTP), private]


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
