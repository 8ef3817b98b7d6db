"""A database (or event bus) that cannot be reached now is told apart from a bug (core.unreachable), and the
services' interceptor answers it `unavailable` with a second to wait, a bug `internal_error`."""
import errno
import logging

import asyncpg
import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from sqlalchemy import exc as sa_exc

from core import caller
from core.interceptors import wrap_unary
from core.tenant import Tenant
from core.unreachable import unreachable


def raised_from(exc: BaseException, cause: BaseException) -> BaseException:
    """`exc` as `raise exc from cause` leaves it (how SQLAlchemy and its asyncpg adapter wrap the driver's error)."""
    exc.__cause__ = cause
    return exc


def wrapped(cause: BaseException, *, invalidated: bool = False) -> sa_exc.DBAPIError:
    return raised_from(sa_exc.InterfaceError("SELECT 1", None, cause, connection_invalidated=invalidated), cause)


AWAY = {
    "refused while connecting": ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed ('127.0.0.1', 5432)"),
    "reset": ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
    "no route to the host": OSError(errno.EHOSTUNREACH, "No route to host"),
    "starting up": asyncpg.CannotConnectNowError("the database system is starting up"),
    "shutting down": asyncpg.AdminShutdownError("terminating connection due to administrator command"),
    "crashed": asyncpg.CrashShutdownError("terminating connection because of crash of another server process"),
    "lost mid-query": asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
    "found closed": asyncpg.InterfaceError("cannot call Connection.fetch(): connection is closed"),
    "sqlalchemy: invalidated": wrapped(RuntimeError("adapted"), invalidated=True),
    "sqlalchemy: lost mid-query": wrapped(asyncpg.ConnectionDoesNotExistError("connection was closed")),
    "sqlalchemy: starting up": wrapped(asyncpg.CannotConnectNowError("the database system is starting up")),
    "sqlalchemy: gave up replacing": sa_exc.DisconnectionError("the server closed this connection"),
    "the event bus": ConnectionError("event bus unavailable"),
}

BUGS = {
    "a key error": KeyError("agent_id"),
    "a type error": TypeError("unsupported operand"),
    "a file": FileNotFoundError(errno.ENOENT, "No such file or directory"),
    "a statement timeout": asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
    "a unique violation": raised_from(sa_exc.IntegrityError("INSERT", None, RuntimeError()),
                                      asyncpg.UniqueViolationError("duplicate key value")),
    "two operations at once": asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
    "sqlalchemy: a syntax error": wrapped(asyncpg.PostgresSyntaxError("syntax error at or near")),
}


@pytest.mark.parametrize("exc", AWAY.values(), ids=AWAY.keys())
def test_a_store_that_cannot_be_reached_is_unreachable(exc):
    assert unreachable(exc)


@pytest.mark.parametrize("exc", BUGS.values(), ids=BUGS.keys())
def test_any_other_error_is_not(exc):
    assert not unreachable(exc)


def test_a_loop_of_causes_ends():
    first, second = KeyError("a"), KeyError("b")
    first.__cause__, second.__cause__ = second, first
    assert not unreachable(first)


class Call:
    """A stand-in for a gRPC server context: a verified caller, and the status the call is aborted with."""

    def __init__(self):
        self.status: status_pb2.Status | None = None
        self.aborted_with: grpc.StatusCode | None = None

    def invocation_metadata(self):
        return caller.metadata_for(Tenant(), "sdr")

    def time_remaining(self):
        return None

    def code(self) -> grpc.StatusCode | None:
        """What the call was aborted with, as grpc.aio's context answers (the metrics' interceptor asks it)."""
        return self.aborted_with

    async def abort(self, code, details, trailing_metadata=()):
        self.aborted_with = code
        self.status = status_pb2.Status.FromString(dict(trailing_metadata)["grpc-status-details-bin"])
        raise grpc.aio.AbortError()


async def answer(exc: BaseException) -> tuple[grpc.StatusCode | None, error_details_pb2.ErrorInfo, str]:
    async def behavior(request, context):
        raise exc

    call = Call()
    with pytest.raises(grpc.aio.AbortError):
        await wrap_unary(behavior, "/switchboard.v1.Sdr/CreateLead")(None, call)
    assert call.status is not None
    info = error_details_pb2.ErrorInfo()
    call.status.details[0].Unpack(info)
    return call.code(), info, call.status.message


async def test_the_interceptor_answers_unavailable_with_a_wait_and_no_traceback(signing, caplog):
    with caplog.at_level(logging.WARNING, logger="core.interceptors"):
        code, info, message = await answer(ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"))
    assert code == grpc.StatusCode.UNAVAILABLE
    assert (info.reason, dict(info.metadata)) == ("unavailable", {"retry_after": "1"})
    assert "Connect call failed" not in message
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None


async def test_the_interceptor_still_answers_a_bug_internal_with_its_traceback_logged(signing, caplog):
    with caplog.at_level(logging.WARNING, logger="core.interceptors"):
        code, info, message = await answer(KeyError("agent_id"))
    assert (code, info.reason) == (grpc.StatusCode.INTERNAL, "internal_error")
    assert "agent_id" not in message
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
