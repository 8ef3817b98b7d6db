"""Calling another service: each RPC's own deadline (declared in its proto, within what is left of the request being
served: core.deadlines), the caller's token and cost tag, and W3C trace context on every call.

A thin wrapper over a generated stub; the trace (a CLIENT span per call, its context in the metadata) is
OpenTelemetry's grpc instrumentation, an interceptor of every channel made here (core.telemetry). `connect(name, settings)` is the one way a process reaches a service of core.registry;
`forward_tenant=True` is for a service calling another on its caller's behalf: the caller's context goes along,
signed by this process for that callee (core.caller), and a failure comes back as the callee's ServiceError. A call
made for no caller carries this process's own context (no account).
"""
from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from core import caller, costs, deadlines, metrics, registry, telemetry, tenant
from core.errors import ServiceError
from core.grpc_errors import from_rpc_error

if TYPE_CHECKING:
    from google.protobuf.descriptor import ServiceDescriptor

    from core.settings import Settings

T = TypeVar("T")
# gRPC invocation metadata: (key, value) pairs.
Metadata = tuple[tuple[str, str], ...]
# The caller of a process's own calls (a gateway's key authentication, a worker's housekeeping): no account.
ANONYMOUS = tenant.Tenant()

# Reconnect quickly after a service restarts (gRPC's default backoff grows to two minutes). Round robin: an address
# that resolves to several replicas (a headless Service's DNS name, `dns:///accounts:50051`; the scaled local
# stack's `ipv4:a,b`) spreads the calls over all of them rather than pinning every call to the first; one address
# behaves as before.
BALANCING = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 3000),
)


def ms(seconds: float) -> int:
    return round(seconds * 1000)


def channel_options(settings: Settings) -> tuple[tuple[str, str | int], ...]:
    """A client's side of balancing and keepalive (core.settings, "Balancing gRPC"): the name resolved again at
    most every GRPC_DNS_MIN_RESOLUTION_SECONDS (gRPC resolves again when a connection closes, as a server's
    max_connection_age closes each in turn), and pings every GRPC_KEEPALIVE_SECONDS even with no call in flight,
    which the servers accept (core.grpc_server.server_options)."""
    return (*BALANCING,
            ("grpc.dns_min_time_between_resolutions_ms", ms(settings.grpc_dns_min_resolution_seconds)),
            ("grpc.keepalive_time_ms", ms(settings.grpc_keepalive_seconds)),
            ("grpc.keepalive_timeout_ms", ms(settings.grpc_keepalive_timeout_seconds)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0))  # 0: no limit on pings between two frames of data


def channel(address: str, settings: Settings) -> grpc.aio.Channel:
    """A channel to another of our services: mutual TLS when the settings name this process's certificate
    (GRPC_TLS_*), plaintext otherwise. The server's certificate must name the host of `address` (the Service's DNS
    name on Kubernetes, 127.0.0.1 on the embedded stack): no target name is overridden, so each process has
    its own identity."""
    tls = settings.grpc_tls()
    options = channel_options(settings)
    interceptors = telemetry.grpc_client_interceptors()
    if tls is None:
        return grpc.aio.insecure_channel(address, options=options, interceptors=interceptors)
    credentials = grpc.ssl_channel_credentials(root_certificates=tls.ca, private_key=tls.key, certificate_chain=tls.cert)
    return grpc.aio.secure_channel(address, credentials, options=options, interceptors=interceptors)


# The health check's name under which a process also reports its database and NATS reachable (a readiness probe
# asks "": the process alone; core.grpc_server.ProbingHealth).
DEPENDENCIES = "dependencies"


async def health(channel: grpc.aio.Channel, service: str = "", timeout: float = 3.0) -> str:
    """A process's answer to the standard gRPC health check of `service` ("": it has started and is not shutting
    down; DEPENDENCIES: and it reaches its database and NATS): ok, not_serving, or unreachable."""
    stub: Any = health_pb2_grpc.HealthStub(channel)  # its type stubs declare no methods
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    except Exception:  # noqa: BLE001 - unreachable is a status, not an error
        return "unreachable"
    return "ok" if reply.status == health_pb2.HealthCheckResponse.SERVING else "not_serving"


async def unless_not_found(call: Awaitable[T]) -> T | None:
    """The reply of a call through a forwarding client, or None when the callee answers not_found."""
    try:
        return await call
    except ServiceError as exc:
        if exc.code == "not_found":
            return None
        raise


class AsCaller:
    """A client's methods acting for one caller on every call (`Client.as_caller`); cheap to make per request: each
    method is the shared client's, partially applied."""

    def __init__(self, client: Client, who: tenant.Tenant):
        self._client, self._who = client, who

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        return functools.partial(getattr(self._client, name), who=self._who)


class Client:
    """`Client(stub, service, audience).Method(request)` calls `stub.Method` with the method's deadline (declared
    in `service`, the stub's descriptor; `timeout=` replaces it for one call) cut to what is left of the request
    being served (core.deadlines), the trace headers and the caller's token for `audience`, the service called
    (core.caller). `as_caller(who)` is the same client acting for that caller on every call. When metrics are on
    (core.metrics) each call is timed (`rpc.client.duration`)."""

    def __init__(self, stub: Any, service: ServiceDescriptor, audience: str, *, forward_tenant: bool = False) -> None:
        self._stub = stub
        self._service = service
        self._audience = audience
        self._forward_tenant = forward_tenant

    def as_caller(self, who: tenant.Tenant) -> AsCaller:
        return AsCaller(self, who)

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self._stub, name)
        own = deadlines.declared(self._service.methods_by_name[name])
        forward, audience = self._forward_tenant, self._audience
        service = self._service.full_name

        async def invoke(request: Any, *, who: tenant.Tenant | None = None, metadata: Metadata = (),
                         timeout: float | None = None, wait_for_ready: bool | None = None) -> Any:
            if not metadata:  # the caller named, else the one this process acts for, else itself (core.caller)
                if who is None:
                    who = tenant.current() if forward else ANONYMOUS
                metadata = caller.metadata_for(who, audience)
            if costs.enabled:
                costs.count(costs.RPC, name)
                metadata = (*metadata, *costs.metadata())
            instruments = metrics.current()
            started, code = time.perf_counter(), grpc.StatusCode.CANCELLED  # unless it ends otherwise
            try:
                reply = await method(request, metadata=metadata, timeout=deadlines.bounded(timeout or own),
                                     wait_for_ready=wait_for_ready)
                code = grpc.StatusCode.OK
                return reply
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                if not forward:
                    raise
                raise from_rpc_error(exc) from None
            finally:
                if instruments is not None:
                    instruments.rpc_client_done(service, name, code, time.perf_counter() - started)

        setattr(self, name, invoke)  # built once per method
        return invoke


def connect(name: str, settings: Settings, *, forward_tenant: bool = False) -> tuple[Client, grpc.aio.Channel]:
    """A client of the registered service `name`, and its channel (close it at stop)."""
    entry = registry.service(name)
    ch = channel(settings.addresses[name], settings)
    return Client(entry.stub(ch), entry.descriptor(), name, forward_tenant=forward_tenant), ch
