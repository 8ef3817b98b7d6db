"""OpenTelemetry metrics: the platform's instruments, exported by OTLP and/or served for a Prometheus scrape.

`configure(name, port, host)` installs an SDK meter provider when something reads it: a Prometheus endpoint
(`/metrics` on METRICS_PORT, served by prometheus_client's HTTP server in a thread of its own) and/or an OTLP/HTTP
exporter (when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, unless
OTEL_METRICS_EXPORTER leaves out `otlp`; the exporter reads the standard OTEL_EXPORTER_OTLP_* variables). Otherwise metrics are off: `current()` is None, no provider exists, and
the instrumented code skips recording after that one check.

Recording is in memory (OTel aggregates; the readers collect on a scrape or a timer, never per request). What is
measured by querying (the outbox's oldest unrelayed event, the consumers' pending counts) is sampled by a
`Sampler`, a periodic background task of the process, and reported by observable gauges from the last sample:
never a query or a call per request.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from opentelemetry.metrics import CallbackOptions, Counter, Histogram, Meter, Observation

from core.background import Periodic

if TYPE_CHECKING:
    import aiohttp
    import grpc
    from opentelemetry.sdk.metrics.view import View

    from core.settings import Settings

log = logging.getLogger(__name__)

# Seconds, for every histogram: requests and provider calls (milliseconds to a minute) and lags (up to an hour).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
SAMPLE_SECONDS = 15.0  # how often a Sampler queries


def status_class(status: int) -> str:
    return f"{status // 100}xx"


# Every counter and histogram: its attribute on Instruments, then its name (as exported by OTLP; Prometheus replaces
# the dots with underscores and adds the unit and `_total`: README, Observability), unit and description.
# The gateway's requests are OpenTelemetry's aiohttp-server instrumentation's (`http.server.request.duration`, by
# http.request.method, http.route and http.response.status_code: core.telemetry.http_server_instrumented); the
# RPCs' are named and described by the semantic conventions (`rpc.server.duration`, `rpc.client.duration`), which
# stock dashboards and alerts read.
COUNTERS = (
    # webhooks dispatcher
    ("webhook_attempts", "switchboard.webhooks.attempts", "{attempt}", "Webhook delivery attempts, by outcome"),
    ("webhook_failures", "switchboard.webhooks.failures", "{attempt}", "Webhook delivery attempts that failed"),
    # providers' HTTP APIs
    ("provider_errors", "switchboard.provider.errors", "{request}",
     "Provider requests that failed (5xx, 429 or no answer)"),
    # retention sweeps (core.retention): per schema.table
    ("retention_deleted", "switchboard.retention.deleted", "{row}", "Rows deleted as past their retention"),
    # durable consumers: per stream and consumer (core.deadletters); an outbox relay's events NATS never took, as
    # consumer `outbox-<service>` of stream EVENTS (core.outbox)
    ("dead_letters", "switchboard.dead_letters", "{message}",
     "Messages a consumer gave up on, or an outbox relay could not publish, stored as dead letters"),
)
HISTOGRAMS = (  # in seconds
    # gRPC: per rpc.system, rpc.service, rpc.method and rpc.grpc.status_code (its number: 0 is OK)
    ("rpc_server_duration", "rpc.server.duration", "s", "Measures the duration of inbound RPC."),
    ("rpc_client_duration", "rpc.client.duration", "s", "Measures the duration of outbound RPC."),
    # SQL statements: per db.system.name, db.operation.name (the statement's first word) and error.type
    ("db_duration", "db.client.operation.duration", "s", "Duration of database client operations."),
    ("webhook_lag", "switchboard.webhooks.delivery_lag", "s", "From a delivery's creation to its successful attempt"),
    ("scheduler_lateness", "switchboard.runs.scheduler_lateness", "s",
     "How late past its due time the runs scheduler claimed a touch"),
    ("provider_duration", "switchboard.provider.duration", "s", "Time a request to a provider's API took"),
)


def rpc_attributes(service: str, method: str, code: grpc.StatusCode) -> dict[str, str | int]:
    """A call's attributes in the semantic conventions' names."""
    return {"rpc.system": "grpc", "rpc.service": service, "rpc.method": method, "rpc.grpc.status_code": code.value[0]}


class Instruments:
    """Every instrument of the platform (COUNTERS, HISTOGRAMS), made once per process on its meter."""

    webhook_attempts: Counter
    webhook_failures: Counter
    provider_errors: Counter
    retention_deleted: Counter
    dead_letters: Counter
    rpc_server_duration: Histogram
    rpc_client_duration: Histogram
    db_duration: Histogram
    webhook_lag: Histogram
    scheduler_lateness: Histogram
    provider_duration: Histogram

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        for attribute, name, unit, description in COUNTERS:
            setattr(self, attribute, meter.create_counter(name, unit, description))
        for attribute, name, unit, description in HISTOGRAMS:
            setattr(self, attribute, meter.create_histogram(name, unit, description))

    def rpc_server_done(self, service: str, method: str, code: grpc.StatusCode, seconds: float) -> None:
        """A call served: `service` is package.Service, `method` its method's name."""
        self.rpc_server_duration.record(seconds, rpc_attributes(service, method, code))

    def rpc_client_done(self, service: str, method: str, code: grpc.StatusCode, seconds: float) -> None:
        """A call made to another service."""
        self.rpc_client_duration.record(seconds, rpc_attributes(service, method, code))

    def db_done(self, statement: str, seconds: float, error: BaseException | None = None) -> None:
        """A statement run (its text: the operation's name is its first word)."""
        words = statement.split(None, 1)
        attributes = {"db.system.name": "postgresql", "db.operation.name": words[0].upper() if words else ""}
        if error is not None:
            attributes["error.type"] = type(error).__qualname__
        self.db_duration.record(seconds, attributes)

    def webhook_attempt(self, status: str, seconds_since_created: float) -> None:
        """One delivery attempt and the delivery's status after it: delivered (its lag recorded), pending (to be
        retried) or failed (no more attempts)."""
        self.webhook_attempts.add(1, {"status": status})
        if status == "delivered":
            self.webhook_lag.record(seconds_since_created)
        else:
            self.webhook_failures.add(1, {"status": status})

    def provider_done(self, provider: str, method: str, outcome: str, seconds: float) -> None:
        """`outcome`: the status class of the answer, or the exception's type when none came."""
        attributes = {"provider": provider, "http.request.method": method, "outcome": outcome}
        self.provider_duration.record(seconds, attributes)
        if outcome in ("5xx", "429") or not outcome[0].isdigit():
            self.provider_errors.add(1, attributes)

    def gauge(self, name: str, unit: str, description: str, sampler: Sampler) -> None:
        """An observable gauge reporting `sampler`'s last sample."""
        self.meter.create_observable_gauge(name, [sampler.observe], unit, description)


_instruments: Instruments | None = None
_configured = False


def current() -> Instruments | None:
    """The instruments, or None when metrics are off (nothing to record)."""
    return _instruments


def views() -> list[View]:
    """Every histogram in BUCKETS, the instrumentation packages' too (aiohttp-server's http.server.request.duration
    advises buckets of its own): the API's latency SLO reads the 1 s boundary (le="1.0") and lags run to an hour."""
    from opentelemetry.sdk.metrics import Histogram as SdkHistogram
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View

    return [View(instrument_type=SdkHistogram, aggregation=ExplicitBucketHistogramAggregation(BUCKETS))]


def configure(service_name: str, settings: Settings) -> Instruments | None:
    """Install the meter provider for this process (once) when METRICS_PORT or an OTLP endpoint is set; the
    instruments, or None when metrics stay off. The scrape port listens on loopback only on the local stack."""
    global _configured, _instruments
    if _configured:
        return _instruments
    _configured = True
    port = settings.metrics_port
    host = "127.0.0.1" if settings.environment == "local" else "0.0.0.0"  # scraped from outside the pod
    otlp = bool(os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")) \
        and "otlp" in os.environ.get("OTEL_METRICS_EXPORTER", "otlp").split(",")
    if not port and not otlp:
        return None
    from opentelemetry import metrics as otel_metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    readers: list[MetricReader] = []
    if port:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import start_http_server

        start_http_server(port, addr=host)
        readers.append(PrometheusMetricReader())
        log.info("metrics served for Prometheus on http://%s:%s/metrics", host, port)
    if otlp:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        log.info("metrics exported by OTLP")
    provider = MeterProvider(metric_readers=readers, resource=Resource.create({"service.name": service_name}),
                             views=views())
    otel_metrics.set_meter_provider(provider)
    _instruments = Instruments(provider.get_meter("switchboard"))
    return _instruments


# A sample: each value with its attributes.
Sample = list[tuple[float, dict[str, str]]]


class Sampler(Periodic):
    """Runs `probe` every `every` seconds in the background and keeps its last answer for an observable gauge
    (`Instruments.gauge`), which the readers collect on their own schedule. A probe that fails (the database or
    NATS away, a consumer not yet subscribed at start) leaves no sample and is tried again sooner: after 1 s, then
    twice as long each time up to `every`."""

    def __init__(self, name: str, probe: Callable[[], Awaitable[Sample]], every: float = SAMPLE_SECONDS) -> None:
        self.task_name = f"metrics-{name}"
        self.probe, self.every, self.interval = probe, every, every
        self.failures = 0
        self.last: Sample = []

    async def round(self) -> bool:
        try:
            self.last, self.failures = await self.probe(), 0
        except Exception as exc:  # noqa: BLE001 - no sample until it answers again
            self.last, self.failures = [], self.failures + 1
            log.debug("%s: no sample (%s: %s)", self.task_name, type(exc).__name__, exc)
        self.interval = min(self.every, 0.5 * 2 ** self.failures) if self.failures else self.every
        return False

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(value, attributes) for value, attributes in self.last]


def provider_traces(provider: str) -> list[aiohttp.TraceConfig]:
    """aiohttp trace configs timing each request of a provider client's session (`trace_configs=`): none when
    metrics are off."""
    instruments = _instruments
    if instruments is None:
        return []
    import aiohttp

    async def started(session: Any, ctx: SimpleNamespace, params: Any) -> None:
        ctx.started = time.perf_counter()

    async def ended(session: Any, ctx: SimpleNamespace, params: aiohttp.TraceRequestEndParams) -> None:
        status = params.response.status
        outcome = "429" if status == 429 else status_class(status)
        instruments.provider_done(provider, params.method, outcome, time.perf_counter() - ctx.started)

    async def failed(session: Any, ctx: SimpleNamespace, params: aiohttp.TraceRequestExceptionParams) -> None:
        instruments.provider_done(provider, params.method, type(params.exception).__name__,
                                  time.perf_counter() - ctx.started)

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(started)
    trace.on_request_end.append(ended)
    trace.on_request_exception.append(failed)
    return [trace]


def instrument_engine(engine: Any) -> None:
    """Time each statement of a SQLAlchemy engine (an AsyncEngine) as `db.client.operation.duration`, when metrics
    are on."""
    instruments = _instruments
    if instruments is None:
        return
    from sqlalchemy import event

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def started(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        conn.info["metrics.started"] = time.perf_counter()

    @event.listens_for(engine.sync_engine, "after_cursor_execute")
    def ended(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        instruments.db_done(statement, time.perf_counter() - conn.info.pop("metrics.started", time.perf_counter()))

    @event.listens_for(engine.sync_engine, "handle_error")
    def failed(context: Any) -> None:
        began = context.connection.info.pop("metrics.started", None) if context.connection is not None else None
        if began is not None:  # it failed running, not before
            instruments.db_done(context.statement or "", time.perf_counter() - began, context.original_exception)


def instrument_connection(conn: Any) -> None:
    """Time each statement of a raw asyncpg connection (its query logger: elapsed time and error), when metrics are
    on."""
    instruments = _instruments
    if instruments is None:
        return

    def logged(record: Any) -> None:
        instruments.db_done(record.query, record.elapsed, record.exception)

    conn.add_query_logger(logged)
