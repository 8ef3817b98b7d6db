"""The server-side interceptor: tenant context, tracing, deadlines and error mapping.

`intercept(servicer, service)` wraps every RPC method of a servicer once, at
start-up, with one handler that: verifies the caller's signed token (core.caller) and refuses the call
with `unauthenticated` when it does not verify, else puts the caller it names in a context variable; makes the
caller's deadline the budget of the calls it makes in turn (core.deadlines); and maps exceptions to a status
carrying the public code (`ServiceError`); a database or event bus that cannot be reached now (core.unreachable: a
PostgreSQL restart) to `unavailable`, which the caller may retry after a second (a warning here, no traceback); and
anything else to a detail-free `internal_error` (logged here with its traceback, never sent; recorded on the call's
span).

The call's SERVER span, continuing the caller's W3C trace, is OpenTelemetry's grpc server interceptor
(core.telemetry.grpc_server_interceptors), which runs around this handler: the handler's work is within that span.

When metrics are on (core.metrics), each call is also timed by service, method and status code
(`rpc.server.duration`); otherwise the handler is exactly the one above.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from opentelemetry import trace

from core import caller, costs, deadlines, metrics, tenant
from core.errors import ServiceError
from core.grpc_errors import internal_status, to_status
from core.unreachable import unreachable

log = logging.getLogger(__name__)

Context = grpc.aio.ServicerContext[Any, Any]
# A servicer's method: (request, context) to its reply.
Behavior = Callable[[Any, Context], Awaitable[Any]]
# What an `unavailable` answer tells the caller to wait (the gateway's Retry-After): a restart's or failover's order
RETRY_AFTER_SECONDS = "1"


async def _abort(context: Context, status: grpc.Status) -> None:
    await context.abort(status.code, status.details, trailing_metadata=status.trailing_metadata)


async def _run(behavior: Behavior, request: Any, context: Context, method: str) -> Any:
    # The caller's deadline needs no timer here: when it passes, gRPC cancels this coroutine
    # (and the caller gets DEADLINE_EXCEEDED); callers always send one (core.rpc.Client), and what is left of it
    # bounds the calls this one makes (`handler`: core.deadlines.within).
    try:
        return await behavior(request, context)
    except ServiceError as err:
        trace.get_current_span().set_attribute("switchboard.error_code", err.code)
        await _abort(context, to_status(err))
    except (asyncio.CancelledError, grpc.aio.AbortError):
        raise
    except Exception as exc:  # the one place unexpected errors become statuses
        if unreachable(exc):  # not a bug: the store is back in seconds, and the caller may retry
            log.warning("%s: unavailable: %s: %s", method, type(exc).__name__, exc)
            trace.get_current_span().set_attribute("switchboard.error_code", "unavailable")
            status = to_status(ServiceError("unavailable", "storage is unavailable for a moment; retry shortly",
                                            retry_after=RETRY_AFTER_SECONDS))
        else:
            log.exception("unhandled error in %s", method)
            trace.get_current_span().record_exception(exc)
            status = internal_status()
        await _abort(context, status)


def wrap_unary(behavior: Behavior, method: str) -> Behavior:
    """The handler that runs `behavior` (an async servicer method) inside the call's context; `method` is the
    full name /package.Service/Method."""
    service, name = method.lstrip("/").split("/")

    async def handler(request: Any, context: Context) -> Any:
        metadata = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        try:
            who = caller.verified(metadata, method)  # before anything else: an unproven caller reaches no handler
        except ServiceError as err:
            await _abort(context, to_status(err))
        tenant_token = tenant.set_current(who)
        try:
            with costs.tagged(metadata.get(costs.METADATA_KEY)), deadlines.within(context.time_remaining()):
                return await _run(behavior, request, context, method)
        finally:
            tenant.reset_current(tenant_token)

    instruments = metrics.current()
    if instruments is None:
        return handler

    async def measured(request: Any, context: Context) -> Any:
        started, code = time.perf_counter(), grpc.StatusCode.CANCELLED  # unless it ends otherwise: gRPC cancelled it
        try:
            reply = await handler(request, context)
            code = grpc.StatusCode.OK
            return reply
        except grpc.aio.AbortError:
            aborted = context.code()
            code = aborted if isinstance(aborted, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
            raise
        finally:
            instruments.rpc_server_done(service, name, code, time.perf_counter() - started)

    return measured


def intercept(servicer: object, service: ServiceDescriptor) -> object:
    """Wrap every RPC method of `service` on this servicer instance (before it is added to a server)."""
    for rpc in service.methods:
        setattr(servicer, rpc.name, wrap_unary(getattr(servicer, rpc.name), f"/{service.full_name}/{rpc.name}"))
    return servicer
