"""Stripe's error shape, `{"error": {"type", "code", "decline_code", "message", "param", "doc_url"}}` (absent
fields left out, as Stripe leaves them out), and the refusals the simulator answers with, in Stripe's wording.

`doc_url` is Stripe's: https://stripe.com/docs/error-codes/<code with hyphens>. The statuses of the faults a test
injects are Stripe's own: 409 is a request that conflicts with another one using the same idempotency key
(`idempotency_key_in_use`), 429 is `rate_limit` or, with the fault's `code` "lock_timeout", an object locked by
another request (Stripe answers both with 429; `Stripe-Should-Retry: true` on the lock timeout, which the `stripe`
package honours), 5xx `api_error`.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

DOC_URL = "https://stripe.com/docs/error-codes/{code}"
INVALID_REQUEST = "invalid_request_error"
API_ERROR = "api_error"
CARD_ERROR = "card_error"
IDEMPOTENCY = "idempotency_error"

RATE_LIMIT = ("Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.")
LOCK_TIMEOUT = ("This object cannot be accessed right now because another API request or Stripe process is currently "
                "accessing it. If you see this error intermittently, retry the request. If you see this error "
                "frequently and are making multiple concurrent requests to a single object, make your requests "
                "serially or at a lower rate. See https://stripe.com/docs/rate-limits for more details.")


def key_in_use(key: str | None) -> str:
    return ("There is currently another in-progress request using this Idempotent Key (that probably means you "
            "submitted twice, and the other request is still going through)" + (f": {key}" if key else "")
            + ". Please try again later.")


# The type, code and message of an injected fault, by HTTP status and the fault's code (None: the status's
# default); others: invalid_request_error, or api_error for 5xx.
FAULTS = {(429, None): (INVALID_REQUEST, "rate_limit", RATE_LIMIT),
          (429, "rate_limit"): (INVALID_REQUEST, "rate_limit", RATE_LIMIT),
          (429, "lock_timeout"): (INVALID_REQUEST, "lock_timeout", LOCK_TIMEOUT),
          (409, None): (IDEMPOTENCY, "idempotency_key_in_use", key_in_use(None))}


class ApiError(Exception):
    """Answered as Stripe's error response. `executed`: the endpoint had begun executing (a refusal for the state
    of an object, not a parameter that failed validation), so an idempotency key keeps this answer."""

    def __init__(self, status: int, message: str, *, type_: str = INVALID_REQUEST, code: str | None = None,
                 param: str | None = None, decline_code: str | None = None, executed: bool = False):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param
        self.decline_code, self.executed = decline_code, executed


def error_body(type_: str, message: str, code: str | None = None, param: str | None = None,
               decline_code: str | None = None) -> dict[str, Any]:
    error = {"type": type_, "message": message}
    if code:
        error.update(code=code, doc_url=DOC_URL.format(code=code.replace("_", "-")))
    if decline_code:
        error["decline_code"] = decline_code
    if param:
        error["param"] = param
    return {"error": error}


def error_response(status: int, type_: str, message: str, code: str | None = None, param: str | None = None,
                   headers: dict[str, Any] | None = None, decline_code: str | None = None) -> web.Response:
    return web.json_response(error_body(type_, message, code, param, decline_code), status=status, headers=headers)


def fault_response(status: int, code: str | None = None) -> web.Response:
    """An injected fault in Stripe's shape: `code` picks one of Stripe's errors of that status (429: rate_limit,
    lock_timeout), else the status's own."""
    type_, known, message = FAULTS.get((status, code)) or FAULTS.get((status, None)) or (
        API_ERROR if status >= 500 else INVALID_REQUEST, None, "Injected fault")
    headers = {"Stripe-Should-Retry": "true"} if known == "lock_timeout" else None
    return error_response(status, type_, message, known or code, headers=headers)


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
