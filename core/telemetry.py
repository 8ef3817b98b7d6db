"""OpenTelemetry tracing: one trace per request across gateway, gRPC and NATS.

W3C trace context travels in gRPC metadata and NATS headers through the
standard propagator. The SDK tracer provider is installed only when spans are
exported (OTEL_TRACES_EXPORTER=console, or a test installs its own provider).
Otherwise the API's non-recording spans still carry an incoming trace id
through every hop, at almost no cost per request.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from contextvars import Token
from typing import Literal

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

_configured = False


def configure(service_name: str) -> None:
    global _configured
    if _configured:
        return
    _configured = True
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return  # a test already installed one
    if os.environ.get("OTEL_TRACES_EXPORTER") != "console":
        return
    from opentelemetry.sdk.resources import Resource

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)


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


def continue_trace(tracer_: trace.Tracer, name: str,
                   carrier: Mapping[str, str]) -> AbstractContextManager[trace.Span | None]:
    """Context manager for one incoming request: a server span when spans are recorded,
    otherwise just the caller's trace context (if any) so it propagates to further calls.
    Yields the span, or None when not recording."""
    parent = extract(carrier) if "traceparent" in carrier else None
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return tracer_.start_as_current_span(name, context=parent, kind=trace.SpanKind.SERVER)
    return nullcontext() if parent is None else _Attached(parent)


def continue_batch(tracer_: trace.Tracer, name: str,
                   carriers: list[Mapping[str, str]]) -> AbstractContextManager[trace.Span | None]:
    """Context manager for a batch of incoming messages handled together: a consumer span linked to each
    message's trace when spans are recorded (a span has one parent, so the traces are links), otherwise
    nothing."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        return nullcontext()
    links = [trace.Link(span.get_span_context()) for span in
             (trace.get_current_span(extract(c)) for c in carriers if "traceparent" in c)]
    return tracer_.start_as_current_span(name, kind=trace.SpanKind.CONSUMER, links=links)
