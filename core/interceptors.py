"""gRPC server interceptor: tenant context, tracing, deadlines and error mapping.

(The client side is core.rpc.Client: a grpc.aio client interceptor costs more
per call than the rest of the gateway's request handling.)

One interceptor wraps every unary handler so that the work done per
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
        metadata = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        tenant_token = tenant.set_current(tenant.Tenant.from_metadata(metadata))
        parent = telemetry.extract(metadata) if "traceparent" in metadata else None
        try:
            with tracer.start_as_current_span(method, context=parent, kind=trace.SpanKind.SERVER) as span:
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
            tenant.reset_current(tenant_token)

    return handler


class ServerInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self):
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}  # built once per method

    async def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method
        wrapped = self._wrapped.get(method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None or method.startswith("/grpc."):
            return handler  # health and reflection: no tenant, no wrapping
        wrapped = grpc.unary_unary_rpc_method_handler(
            _wrap_unary(handler.unary_unary, method),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        self._wrapped[method] = wrapped
        return wrapped
