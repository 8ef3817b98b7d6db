"""Turning exceptions into gRPC statuses that carry the public error code, and back."""
from __future__ import annotations

import logging
from typing import cast

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from core.errors import ERROR_DOMAIN, GRPC_TO_HTTP, ServiceError

log = logging.getLogger(__name__)


def to_status(err: ServiceError) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=err.code, domain=ERROR_DOMAIN, metadata=err.details)
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(
        status_pb2.Status(code=err.grpc_status.value[0], message=err.message, details=[detail])
    )


def internal_status() -> grpc.Status:
    return to_status(ServiceError("internal_error", "internal error; it has been logged"))


def from_rpc_error(exc: grpc.aio.AioRpcError | grpc.RpcError) -> ServiceError:
    """The public error an RPC failure stands for; never leaks internal details."""
    # Both kinds answer code(), details() and trailing_metadata(), all from_call reads of a grpc.Call.
    status = rpc_status.from_call(cast(grpc.Call, exc))
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                try:
                    return ServiceError(info.reason, status.message, **dict(info.metadata))
                except ValueError:
                    break
    code = exc.code()
    _, public = GRPC_TO_HTTP.get(code, (500, "internal_error"))
    if public == "unavailable":
        return ServiceError("unavailable", "a backing service is unavailable; retry shortly")
    if public == "timeout":
        return ServiceError("timeout", "a backing service did not answer in time; retry shortly")
    if public == "internal_error":
        return ServiceError("internal_error", "internal error")
    return ServiceError(public, exc.details() or public.replace("_", " "))
