"""Stripe's error shape, `{"error": {"type", "code", "message", "param", "doc_url"}}` (absent fields left out, as
Stripe leaves them out), and the refusals the simulator answers with, in Stripe's wording."""
from __future__ import annotations

from aiohttp import web

DOC_URL = "https://stripe.com/docs/error-codes/{code}"
INVALID_REQUEST = "invalid_request_error"
API_ERROR = "api_error"
IDEMPOTENCY = "idempotency_error"

# The type and code of an injected fault, by HTTP status (others: invalid_request_error, or api_error for 5xx).
FAULTS = {429: (INVALID_REQUEST, "rate_limit", "Too many requests hit the API too quickly."),
          409: (INVALID_REQUEST, "lock_timeout", "This object cannot be accessed right now because another API "
                                                 "request or Stripe process is currently accessing it.")}


class ApiError(Exception):
    """Answered as Stripe's error response."""

    def __init__(self, status: int, message: str, *, type_: str = INVALID_REQUEST, code: str | None = None,
                 param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param


def error_body(type_: str, message: str, code: str | None = None, param: str | None = None) -> dict:
    error = {"type": type_, "message": message}
    if code:
        error.update(code=code, doc_url=DOC_URL.format(code=code))
    if param:
        error["param"] = param
    return {"error": error}


def error_response(status: int, type_: str, message: str, code: str | None = None, param: str | None = None,
                   headers: dict | None = None) -> web.Response:
    return web.json_response(error_body(type_, message, code, param), status=status, headers=headers)


def fault_response(status: int) -> web.Response:
    type_, code, message = FAULTS.get(status, (API_ERROR if status >= 500 else INVALID_REQUEST, None,
                                               "Injected fault"))
    return error_response(status, type_, message, code)


def missing(param: str) -> ApiError:
    return ApiError(400, f"Missing required param: {param}.", code="parameter_missing", param=param)


def invalid(param: str, message: str, code: str | None = None) -> ApiError:
    return ApiError(400, message, code=code, param=param)


def unknown_parameter(param: str) -> ApiError:
    return ApiError(400, f"Received unknown parameter: {param}", code="parameter_unknown", param=param)


def no_such(kind: str, object_id: str, param: str = "id", status: int = 404) -> ApiError:
    return ApiError(status, f"No such {kind}: '{object_id}'", code="resource_missing", param=param)


def unrecognized(method: str, path: str) -> web.Response:
    return error_response(404, INVALID_REQUEST, f"Unrecognized request URL ({method}: {path}). Please see "
                                                "https://stripe.com/docs or we can help at https://support.stripe.com/.")
