"""Deadlines: how long each RPC may take, and what is left of the request being served.

Each rpc declares its own deadline once, in its proto (`option (deadline_ms) = ...`, protos/switchboard/v1/
options.proto, which says how each is sized). A request has a budget: a gateway route's time limit from the moment
the request arrives (gateway.routes.Route.time_limit), or in a service the deadline its caller sent (the server
interceptor sets it from the call). Every RPC made while serving it (core.rpc.Client) waits at most
`bounded(its own deadline)`: the shorter of the two, so the calls of one request, one after the other and hop after
hop, never outlast what its first caller was promised. Work that must finish once begun (core.to_completion) runs
`detached` from its caller's budget: the caller may stop waiting, the work's own calls get their full deadlines.
"""
from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from google.protobuf.descriptor import MethodDescriptor

from core import registry
from switchboard.v1 import options_pb2

# The instant (time.monotonic()) by which the request being served must be answered; None: no budget (a worker's
# or a consumer's own call).
_until: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


def declared(method: MethodDescriptor) -> float:
    """The rpc's own deadline, in seconds; LookupError when it declares none."""
    # (the generated stub types the extension as a plain FieldDescriptor)
    ms: int = method.GetOptions().Extensions[options_pb2.deadline_ms]  # type: ignore[index]
    if not ms:
        raise LookupError(f"rpc {method.full_name} declares no deadline: add {{ option (deadline_ms) = ...; }}")
    return ms / 1000


def of_rpc(name: str) -> float:
    """The declared deadline, in seconds, of an rpc of a registered service named as the gateway's routes name them
    ("switchboard.v1.Service/Method")."""
    service, method = name.split("/")
    found = next(s for s in registry.SERVICES if s.full_name == service)
    return declared(found.descriptor().methods_by_name[method])


def longest(service: registry.Service) -> float:
    """The longest deadline of the service's rpcs: what a call in flight may still need when the service stops."""
    return max(declared(method) for method in service.descriptor().methods)


def time_left() -> float | None:
    """Seconds left of the request being served (negative once past), or None without a budget."""
    until = _until.get()
    return None if until is None else until - time.monotonic()


def bounded(seconds: float, spare: float = 0.0) -> float:
    """A call's deadline, or a wait: `seconds`, cut to what is left of the request's budget less `spare` (0 once
    that is spent: a call then fails at once, DEADLINE_EXCEEDED, without being sent)."""
    left = time_left()
    return seconds if left is None else max(0.0, min(seconds, left - spare))


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Serve the block within `seconds` from now (never beyond a budget already running); None: no budget of its
    own (a call that came without a deadline)."""
    if seconds is None:
        yield
        return
    until = time.monotonic() + seconds
    running = _until.get()
    token = _until.set(until if running is None else min(until, running))
    try:
        yield
    finally:
        _until.reset(token)


def detached() -> contextvars.Context:
    """A copy of the current context without the request's budget, to run work in that outlives its caller
    (`loop.create_task(work, context=detached())`)."""
    context = contextvars.copy_context()
    context.run(_until.set, None)
    return context
