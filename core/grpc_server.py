"""Bootstrap shared by every process of core.registry: services and their background workers.

`serve` builds the runtime (engine, raw pool, event bus, outbox relay), adds the
service's servicer (wrapped by core.interceptors), health checking (ProbingHealth) and, on the local stack only,
reflection (elsewhere it would list every method to anyone who can reach the port), serves (with mutual TLS when
GRPC_TLS_* name certificates, and the health check alone in plaintext on GRPC_HEALTH_PORT when set, for the
kubelet's probes), and on SIGTERM/SIGINT shuts down
gracefully: readiness NOT_SERVING at once, serving on for SHUTDOWN_DELAY_SECONDS, then new calls refused and those in
flight given the longest deadline of the service's rpcs, then stop (the components in reverse order), dispose.
A worker is the same process without a servicer: its `build(runtime)` starts components with `runtime.run`
and it serves health alone, so Kubernetes probes it like any service.

`main("agents")` is a service's whole `__main__`: it finds `services.agents.servicer.build` and, when the
registry says the service has an outbox, `services.agents.schema.outbox`.
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol, TypeVar

import asyncpg
import grpc
import sqlalchemy as sa
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection
from sqlalchemy.ext.asyncio import AsyncEngine

from core import bus as bus_module
from core import caller, costs, deadlines, logs, metrics, registry, retention, rpc, schema_gate, telemetry, uow
from core import settings as settings_module
from core.background import Background
from core.bus import BatchHandler, DurableConsumer, EventBus, Handler
from core.db import create_engine, create_pool
from core.interceptors import intercept
from core.outbox import OutboxRelay, pending_age
from core.settings import Settings
from core.uow import Database
from switchboard.v1 import costs_pb2, costs_pb2_grpc

log = logging.getLogger(__name__)

Closable = TypeVar("Closable", bound="_HasClose")


class _HasClose(Protocol):
    async def close(self) -> None: ...


@dataclass
class Runtime:
    """What a servicer needs from its process: settings, database, events."""

    name: str
    settings: Settings
    engine: AsyncEngine
    # Raw asyncpg pool for hot-path reads (core.db.Prepared).
    pool: asyncpg.Pool
    bus: EventBus
    relay: OutboxRelay | None = None
    # The registered process this one is (a replica or a test's copy runs under another name), when not `name`.
    kind: str | None = None
    # The use cases' way to the database (core.uow): units of work that wake the relay when they add events.
    db: Database = field(init=False)
    # Run at shutdown, last added first, after the server stopped and before the database and bus close.
    on_stop: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    consumers: list[DurableConsumer] = field(default_factory=list)  # started by `consume`
    # What the service's retention sweep deletes (core.retention): its outbox's and inbox's, and what `retain` adds.
    retained: list[retention.Rule] = field(default_factory=list)
    # The sampled gauges the service adds (`gauge`): name, unit, description, probe.
    gauges: list[tuple[str, str, str, Callable[[], Awaitable[metrics.Sample]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.db = Database(self.engine, self._wake_relay, self.pool)

    def _wake_relay(self) -> None:
        if self.relay is not None:
            self.relay.wake()

    def run(self, component: Background) -> None:
        """Start a background component (consumer, loader, worker) and stop it at shutdown."""
        component.start()
        self.on_stop.append(component.stop)

    def consume(self, durable: str, handler: Handler | BatchHandler, **options: Any) -> None:
        """Run a durable consumer (core.bus.DurableConsumer) for the process's lifetime: of the EVENTS stream, or
        with stream=PROVIDER_STREAM of the providers' messages the service owns; its retries and when it gives up
        from the settings unless `options` say."""
        options = {"max_deliver": self.settings.consumer_max_deliver,
                   "retry_seconds": self.settings.consumer_retry_seconds, **options}
        consumer = DurableConsumer(self.bus, durable, handler, **options)
        process = self.kind or self.name
        if not registry.declares_consumer(process, registry.Consumer(durable, consumer.filter_subject,
                                                                      consumer.stream)):
            raise LookupError(f"{process} does not declare the consumer {durable} of {consumer.filter_subject} on "
                              f"{consumer.stream} (core.registry.BUS): its NATS user would not be let through")
        self.consumers.append(consumer)
        self.run(consumer)

    def retain(self, *rules: retention.Rule) -> None:
        """Add the service's own tables to its retention sweep (started once `build` returns)."""
        self.retained.extend(rules)

    def gauge(self, name: str, unit: str, description: str, probe: Callable[[], Awaitable[metrics.Sample]]) -> None:
        """Report what `probe` answers as a sampled gauge (core.metrics.Sampler: it runs every few seconds in the
        background, never per request), when metrics are on."""
        self.gauges.append((name, unit, description, probe))

    def closing(self, client: Closable) -> Closable:
        """A provider client (providers.configured), closed at shutdown."""
        self.on_stop.append(client.close)
        return client

    def _reachable(self, service: str) -> None:
        process = self.kind or self.name
        if not registry.may_call(process, service):
            raise LookupError(f"{process} does not declare that it calls {service} (core.registry: rpc_to); the "
                              "network policies would not let it through")

    def client(self, service: str) -> rpc.Client:
        """A client of another registered service that forwards the current caller's tenant (one the process
        declares it calls: core.registry.REACHES)."""
        self._reachable(service)
        client, channel = rpc.connect(service, self.settings, forward_tenant=True)
        self.on_stop.append(channel.close)
        return client

    def channel(self, service: str) -> grpc.aio.Channel:
        """A channel to a registered service (this one too), closed at shutdown: for what no service's stub calls,
        such as the standard health check (core.rpc.health)."""
        self._reachable(service)
        channel = rpc.channel(self.settings.addresses[service], self.settings)
        self.on_stop.append(channel.close)
        return channel


def observe(runtime: Runtime, outbox_table: sa.Table | None, instruments: metrics.Instruments) -> None:
    """The process's sampled gauges (core.metrics.Sampler): its outbox's lag when it relays one, its consumers'
    pending counts when it runs any, and those its service added (`Runtime.gauge`)."""
    for name, unit, description, probe in runtime.gauges:
        sampler = metrics.Sampler(name, probe)
        instruments.gauge(name, unit, description, sampler)
        runtime.run(sampler)
    if outbox_table is not None:
        async def lag() -> metrics.Sample:
            return [(await pending_age(runtime.engine, outbox_table), {"outbox": str(outbox_table.schema)})]

        lagging = metrics.Sampler("outbox-lag", lag)
        instruments.gauge("switchboard.outbox.lag", "s", "Age of the oldest event not yet relayed", lagging)
        runtime.run(lagging)
    if runtime.consumers:
        async def pending() -> metrics.Sample:
            return await bus_module.pending_counts(runtime.bus, runtime.consumers)

        counting = metrics.Sampler("consumer-pending", pending)
        instruments.gauge("switchboard.consumer.pending", "{message}", "A JetStream consumer's messages waiting",
                          counting)
        runtime.run(counting)


LIVENESS = "liveness"
# What the components' stop may take after the drain (deploy.workloads counts it in the pod's grace period), and
# what each step is given at least once that is spent.
STOP_SECONDS = 5.0
STEP_FLOOR = 0.5
DEPENDENCIES = rpc.DEPENDENCIES


class CostsServicer(costs_pb2_grpc.CostsServicer):
    """What tagged requests cost in this process (core.costs); served only where counting is on."""

    async def TakeCosts(self, request: costs_pb2.TakeCostsRequest, context: object) -> costs_pb2.TakeCostsReply:
        return costs_pb2.TakeCostsReply(counts=costs.take(request.tag))


class ProbingHealth(HealthServicer):
    """Standard health service under three names. "" is readiness, the kubelet's readiness probe: the process has
    started and is not shutting down; it needs nothing else, since each of its calls reaches the database or NATS
    itself and fails alone with a clear error when they are down, and every replica shares them: a database outage
    taking every replica out of its Service would only turn those errors into refused connections. "liveness", the
    liveness probe, says the process answers, and stays SERVING while it drains. "dependencies" also checks, at
    each Check, that the database and NATS are reachable: the platform's health (GET /api/v1/health) reports it,
    no probe asks it."""

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime

    async def Check(self, request: health_pb2.HealthCheckRequest,
                    context: grpc.aio.ServicerContext[health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse],
                    ) -> health_pb2.HealthCheckResponse:
        reply = await super().Check(request, context)
        if reply.status != health_pb2.HealthCheckResponse.SERVING or request.service != DEPENDENCIES:
            return reply
        try:
            async with asyncio.timeout(2.0):
                async with self.runtime.engine.connect() as conn:
                    await conn.execute(sa.text("SELECT 1"))
        except Exception as exc:  # noqa: BLE001 - reported as NOT_SERVING
            log.warning("health: database unreachable: %s", exc)
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.NOT_SERVING)
        if not self.runtime.bus.is_connected:
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.NOT_SERVING)
        return reply


def server_options(settings: Settings) -> list[tuple[str, int]]:
    """A server's side of balancing and keepalive (core.settings, "Balancing gRPC"): each connection closed after
    its maximum age (GOAWAY, then the grace for calls in flight), so that its client resolves the service's name
    again and a new replica gets its share; pings every GRPC_KEEPALIVE_SECONDS; a client's pings accepted as often
    as GRPC_MIN_PING_INTERVAL_SECONDS, even with no call in flight, as core.rpc.channel_options sends them. (gRPC
    adds up to 10% of jitter to each connection's age, so a client's connections do not all close at once.)"""
    return [("grpc.so_reuseport", 0),  # a second process on the same port fails to bind rather than sharing it
            ("grpc.max_connection_age_ms", rpc.ms(settings.grpc_max_connection_age_seconds)),
            ("grpc.max_connection_age_grace_ms", rpc.ms(settings.grpc_max_connection_age_grace_seconds)),
            ("grpc.keepalive_time_ms", rpc.ms(settings.grpc_keepalive_seconds)),
            ("grpc.keepalive_timeout_ms", rpc.ms(settings.grpc_keepalive_timeout_seconds)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", rpc.ms(settings.grpc_min_ping_interval_seconds))]


def listen(server: grpc.aio.Server, name: str, port: int, settings: Settings, *, plaintext: bool = False) -> None:
    """Serve on `port` of GRPC_HOST (loopback only on the local stack): with mutual TLS when the settings name certificates
    (GRPC_TLS_*: a client must present a certificate the CA signed), unless `plaintext`."""
    address = f"{settings.grpc_host}:{port}"
    tls = None if plaintext else settings.grpc_tls()
    if tls is None:
        bound = server.add_insecure_port(address)
    else:
        bound = server.add_secure_port(address, grpc.ssl_server_credentials(
            [(tls.key, tls.cert)], root_certificates=tls.ca, require_client_auth=True))
    if bound == 0:
        raise SystemExit(f"{name}: cannot listen on port {port}")


async def serve_probes(health: HealthServicer, name: str, settings: Settings) -> grpc.aio.Server:
    """The health service alone, in plaintext, on GRPC_HEALTH_PORT: for the kubelet's gRPC probes, which do not
    speak TLS. It tells only whether the process serves; every RPC stays behind mutual TLS on the main port."""
    probes = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    health_pb2_grpc.add_HealthServicer_to_server(health, probes)
    listen(probes, name, settings.grpc_health_port, settings, plaintext=True)
    await probes.start()
    return probes


# Builds the process's servicer from its runtime (None for a worker, which only starts components).
Build = Callable[[Runtime], object | None]


async def serve(name: str, port: int, settings: Settings, build: Build, *, service: registry.Service | None = None,
                outbox_table: sa.Table | None = None, stop_event: asyncio.Event | None = None) -> None:
    telemetry.configure(name)
    instruments = metrics.configure(name, settings)
    identity = service.name if service is not None else name  # whose callers it accepts, whose key it signs with
    keys = caller.keyring_of(settings, identity)
    caller.configure(keys, identity)
    uow.configure_guard(strict=settings.environment != "production")
    if settings.count_costs:
        costs.enable()
    sizes = settings.database_pool("service" if service is not None else "worker")
    engine = create_engine(settings.database_url.reveal(), pool_size=sizes.size, max_overflow=sizes.overflow,
                           statement_cache=settings.database_statement_cache, application_name=name)
    pool = await create_pool(settings.database_url.reveal(), size=sizes.raw,
                             statement_cache=settings.database_statement_cache, application_name=name)
    bus = EventBus.of(settings, service.name if service is not None else name, keys, connection_name=name)
    bus.start()
    runtime = Runtime(name=name, settings=settings, engine=engine, pool=pool, bus=bus,
                      kind=service.name if service is not None else None)
    if outbox_table is not None:
        # its LISTEN needs a session of its own: straight to PostgreSQL, past a transaction pooler
        runtime.relay = OutboxRelay(engine, outbox_table, bus, listen_url=settings.direct_database(),
                                    poison_after=settings.outbox_poison_after)
        runtime.relay.start()

    server = grpc.aio.server(options=server_options(settings), interceptors=telemetry.grpc_server_interceptors())
    service_names = []
    runtime.retained[:0] = standard_retention(service, settings)
    servicer = build(runtime)
    if runtime.retained:
        runtime.run(retention.RetentionSweep(engine, runtime.retained, interval=settings.retention_interval_seconds,
                                             batch=settings.retention_batch))
    if instruments is not None:
        observe(runtime, outbox_table, instruments)
    if service is not None:
        descriptor: ServiceDescriptor = service.descriptor()
        add_to_server(service, servicer, server)
        service_names.append(descriptor.full_name)
    health = ProbingHealth(runtime)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    if settings.count_costs:
        costs_pb2_grpc.add_CostsServicer_to_server(CostsServicer(), server)  # type: ignore[no-untyped-call]
    if settings.environment == "local":
        reflection.enable_server_reflection([*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                                             reflection.SERVICE_NAME], server)
    listen(server, name, port, settings)
    await server.start()
    probes = await serve_probes(health, name, settings) if settings.grpc_health_port else None
    for svc in ("", LIVENESS, DEPENDENCIES, *service_names):
        await health.set(svc, health_pb2.HealthCheckResponse.SERVING)
    log.info("%s serving gRPC on port %s%s", name, port, " with mutual TLS" if settings.grpc_tls_cert else "")

    stop = stop_event or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()

    # Unready first (callers and load balancers stop sending), serving on meanwhile; then new calls are refused and
    # those in flight may take their deadline. Liveness stays SERVING (a draining process is alive), and so does
    # DEPENDENCIES: the platform's health asks one replica of the service, and one leaving degrades nothing.
    log.info("%s shutting down: unready, serving %.0f s more", name, settings.shutdown_delay_seconds)
    for svc in ("", *service_names):
        await health.set(svc, health_pb2.HealthCheckResponse.NOT_SERVING)
    await asyncio.sleep(settings.shutdown_delay_seconds)
    log.info("%s draining", name)
    await server.stop(deadlines.longest(service) if service is not None else 0)
    if probes is not None:
        await probes.stop(None)
    steps = [*reversed(runtime.on_stop), *([runtime.relay.stop] if runtime.relay else []), bus.close, pool.close,
             engine.dispose]
    await stop_within(name, steps, STOP_SECONDS)
    log.info("%s stopped", name)


async def stop_within(name: str, steps: list[Callable[[], Awaitable[None]]], seconds: float) -> None:
    """Run the stop steps in order within `seconds` in all (each at least STEP_FLOOR): one that overruns is left
    behind with a warning naming it and the next goes on, so a stuck component (a connection that never answers)
    cannot keep the process past its pod's grace period, which counts STOP_SECONDS for this."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    for step in steps:
        try:
            await asyncio.wait_for(step(), max(STEP_FLOOR, deadline - loop.time()))
        except TimeoutError:
            log.warning("%s: %s did not finish within the %.0f s a stop is given; left behind", name,
                        getattr(step, "__qualname__", step), seconds)


def standard_retention(service: registry.Service | None, settings: Settings) -> list[retention.Rule]:
    """The retention of a service's outbox (published rows) and inbox (ids past the dedup window), those it has."""
    if service is None or not service.schema:
        return []
    tables = {t.name: t for t in importlib.import_module(f"{service.module}.schema").metadata.tables.values()}
    rules = []
    if "outbox" in tables:
        rules.append(retention.published_outbox(tables["outbox"], timedelta(days=settings.retention_outbox_days)))
    if "inbox" in tables:
        rules.append(retention.inbox_ids(tables["inbox"], timedelta(days=settings.retention_inbox_days)))
    return rules


def main(name: str) -> None:
    """Run the registered service or worker `name` until SIGTERM; not on a schema older than its code
    (core.schema_gate)."""
    settings = settings_module.load(name)
    logs.configure(settings.log_level, name)
    schema_gate.require(name, settings.database_url.reveal())
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    port = settings.grpc_ports[name]
    if name in registry.BY_NAME:
        service = registry.service(name)
        build = importlib.import_module(f"{service.module}.servicer").build
        outbox = importlib.import_module(f"{service.module}.schema").outbox if service.outbox else None
        asyncio.run(serve(name, port, settings, build, service=service, outbox_table=outbox))
    else:
        build = importlib.import_module(registry.worker(name).module).build
        asyncio.run(serve(name, port, settings, build))


def add_to_server(service: registry.Service, servicer: object, server: grpc.aio.Server) -> None:
    """Serve `servicer` with every method behind core.interceptors (the caller's token verified before any handler
    runs): the one way a servicer is added to a server."""
    module = importlib.import_module(f"switchboard.v1.{service.name}_pb2_grpc")
    getattr(module, f"add_{service.grpc_name}Servicer_to_server")(intercept(servicer, service.descriptor()), server)
