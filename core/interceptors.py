"""gRPC interceptors: tenant context, tracing, deadlines and error mapping.

Server side, one interceptor wraps every unary handler so that the work done per
call stays small: it extracts the W3C trace context and the tenant from
metadata, bounds the handler by the caller's deadline, and maps exceptions to a
status carrying the public code (`ServiceError`) or a detail-free
`internal_error` for anything unexpected (logged with its traceback here, never
sent).
"""
from __future__ import annotations

import asyncio
import logging

import grpc
from opentelemetry import context as otel_context
from opentelemetry import trace

from core import telemetry, tenant
from core.errors import ServiceError
from core.grpc_errors import internal_status, to_status

log = logging.getLogger(__name__)


async def _abort(context: grpc.aio.ServicerContext, status: grpc.Status):
    await context.abort(status.code, status.details, trailing_metadata=status.trailing_metadata)


def _wrap_unary(behavior, method: str):
    tracer = telemetry.tracer("switchboard.grpc.server")

    async def handler(request, context: grpc.aio.ServicerContext):
        metadata = context.invocation_metadata() or ()
        carrier = {k: v for k, v in metadata if isinstance(v, str)}
        token = otel_context.attach(telemetry.extract(carrier))
        tenant_token = tenant.set_current(tenant.Tenant.from_metadata(metadata))
        try:
            with tracer.start_as_current_span(method, kind=trace.SpanKind.SERVER) as span:
                remaining = context.time_remaining()
                try:
                    if remaining is None:
                        return await behavior(request, context)
                    async with asyncio.timeout(remaining):
                        return await behavior(request, context)
                except ServiceError as err:
                    span.set_attribute("switchboard.error_code", err.code)
                    await _abort(context, to_status(err))
                except TimeoutError:
                    await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
                except asyncio.CancelledError:
                    raise
                except grpc.aio.AbortError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the one place unexpected errors become statuses
                    log.exception("unhandled error in %s", method)
                    span.record_exception(exc)
                    await _abort(context, internal_status())
        finally:
            tenant._current.reset(tenant_token)
            otel_context.detach(token)

    return handler


class ServerInterceptor(grpc.aio.ServerInterceptor):
    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        if handler_call_details.method.startswith("/grpc."):
            return handler  # health and reflection: no tenant, no wrapping
        return grpc.unary_unary_rpc_method_handler(
            _wrap_unary(handler.unary_unary, handler_call_details.method),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class ClientInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    """Adds the current trace context and a default deadline to outgoing calls."""

    def __init__(self, default_timeout: float):
        self.default_timeout = default_timeout

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        metadata = list(client_call_details.metadata or ())
        carrier = telemetry.inject({})
        metadata.extend(carrier.items())
        details = grpc.aio.ClientCallDetails(
            method=client_call_details.method,
            timeout=client_call_details.timeout if client_call_details.timeout is not None else self.default_timeout,
            metadata=grpc.aio.Metadata(*metadata),
            credentials=client_call_details.credentials,
            wait_for_ready=client_call_details.wait_for_ready,
        )
        return await continuation(details, request)
