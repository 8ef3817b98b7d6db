"""Public error codes and their one mapping to gRPC and HTTP statuses.

A service raises `ServiceError(code, message)`; the gRPC error interceptor turns
it into a status whose `google.rpc.ErrorInfo.reason` is the public code, and the
gateway turns that back into `{"error": {"code", "message"}}` without guessing.
"""
from __future__ import annotations

import grpc

# public code -> (gRPC status, HTTP status)
CODES: dict[str, tuple[grpc.StatusCode, int]] = {
    "bad_request": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "invalid_request": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "validation_error": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "content_blocked": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "number_opted_out": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "number_on_dnc": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "tcpa_violation": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    # The national do-not-call registry's data of the callee's area code is older than the FTC's 31 days.
    "dnc_registry_stale": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "unauthorized": (grpc.StatusCode.UNAUTHENTICATED, 401),
    "payment_required": (grpc.StatusCode.FAILED_PRECONDITION, 402),
    "forbidden": (grpc.StatusCode.PERMISSION_DENIED, 403),
    "not_found": (grpc.StatusCode.NOT_FOUND, 404),
    "method_not_allowed": (grpc.StatusCode.UNIMPLEMENTED, 405),
    "email_exists": (grpc.StatusCode.ALREADY_EXISTS, 409),
    "conflict": (grpc.StatusCode.ALREADY_EXISTS, 409),
    "rate_limited": (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    "provider_error": (grpc.StatusCode.INTERNAL, 500),
    "call_failed": (grpc.StatusCode.INTERNAL, 500),
    "sms_send_failed": (grpc.StatusCode.INTERNAL, 500),
    "internal_error": (grpc.StatusCode.INTERNAL, 500),
    "unavailable": (grpc.StatusCode.UNAVAILABLE, 503),
    # A call that did not end within its deadline (core.deadlines); the gateway says which limit (gateway.app).
    "timeout": (grpc.StatusCode.DEADLINE_EXCEEDED, 504),
}

# For a status that arrives without ErrorInfo (e.g. a deadline or a dead peer).
GRPC_TO_HTTP: dict[grpc.StatusCode, tuple[int, str]] = {
    grpc.StatusCode.INVALID_ARGUMENT: (400, "invalid_request"),
    grpc.StatusCode.FAILED_PRECONDITION: (400, "invalid_request"),
    grpc.StatusCode.OUT_OF_RANGE: (400, "invalid_request"),
    grpc.StatusCode.UNAUTHENTICATED: (401, "unauthorized"),
    grpc.StatusCode.PERMISSION_DENIED: (403, "forbidden"),
    grpc.StatusCode.NOT_FOUND: (404, "not_found"),
    grpc.StatusCode.ALREADY_EXISTS: (409, "conflict"),
    grpc.StatusCode.RESOURCE_EXHAUSTED: (429, "rate_limited"),
    grpc.StatusCode.UNAVAILABLE: (503, "unavailable"),
    grpc.StatusCode.DEADLINE_EXCEEDED: (504, "timeout"),
}

ERROR_DOMAIN = "switchboard.dev"


class ServiceError(Exception):
    """An error whose code and message are safe to show the caller."""

    def __init__(self, code: str, message: str, *, grpc_code: grpc.StatusCode | None = None, **details: str):
        if code not in CODES:
            raise ValueError(f"unknown public error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = {k: str(v) for k, v in details.items()}
        self._grpc_code = grpc_code

    @property
    def grpc_status(self) -> grpc.StatusCode:
        return self._grpc_code or CODES[self.code][0]

    @property
    def http_status(self) -> int:
        return CODES[self.code][1]


def invalid(message: str) -> ServiceError:
    return ServiceError("invalid_request", message)


def refused_move(message: str) -> ServiceError:
    """A request that is well-formed but not allowed in the record's current state."""
    return ServiceError("invalid_request", message, grpc_code=grpc.StatusCode.FAILED_PRECONDITION)


def not_found(what: str) -> ServiceError:
    return ServiceError("not_found", f"{what} not found")
