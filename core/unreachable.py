"""Whether an exception says a backing store cannot be reached at the moment, rather than that the code is wrong.

While PostgreSQL restarts or fails over, every query of those seconds fails with one of a few errors: the connection
is refused or reset (ConnectionError; as asyncpg and SQLAlchemy raise it, unwrapped, when connecting), the server
refuses new connections while it starts or stops or ends the ones it has (asyncpg's CannotConnectNowError,
AdminShutdownError, CrashShutdownError and the SQLSTATE class 08 connection errors), or a connection is found closed
(asyncpg's InterfaceError "connection is closed"; SQLAlchemy's DBAPIError marked `connection_invalidated`, which
wraps these). The event bus's own "unavailable" is a ConnectionError too (core.bus, core.outbox). The services'
interceptor (core.interceptors) answers these UNAVAILABLE, which the caller may retry, and any other error INTERNAL.
"""
from __future__ import annotations

import errno

import asyncpg
from sqlalchemy import exc as sa_exc

_AWAY = (ConnectionError, sa_exc.DisconnectionError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
         asyncpg.AdminShutdownError, asyncpg.CrashShutdownError)
# OSErrors of a network that is not a ConnectionError's (a host or network that cannot be routed to, a connect that
# timed out in the kernel)
_NETWORK_ERRNOS = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ETIMEDOUT})


def unreachable(exc: BaseException) -> bool:
    """True when `exc`, or an exception it was raised from (`__cause__`: how SQLAlchemy and its asyncpg adapter
    wrap the driver's error), says the database or the event bus cannot be reached now."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if _says_unreachable(current):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


def _says_unreachable(exc: BaseException) -> bool:
    if isinstance(exc, _AWAY):
        return True
    if isinstance(exc, OSError):
        return exc.errno in _NETWORK_ERRNOS
    if isinstance(exc, sa_exc.DBAPIError):
        return exc.connection_invalidated
    return isinstance(exc, asyncpg.InterfaceError) and "connection is closed" in str(exc)
