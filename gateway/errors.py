"""The public error envelope: {"error": {"code", "message"}} for every error response."""
from __future__ import annotations

import base64
import binascii
import contextlib
import json
import math
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from core.errors import CODES, ServiceError
from providers.x402 import PAYMENT_REQUIRED_HEADER


def error_response(code: str, message: str, status: int | None = None, headers: dict[str, str] | None = None,
                   **extra: Any) -> web.Response:
    status = status or CODES[code][1]
    return web.json_response({"error": {"code": code, "message": message, **extra}}, status=status, headers=headers)


def insufficient_scope(scope: str, message: str) -> str:
    """RFC 6750's WWW-Authenticate challenge for a token (or key) that lacks a scope: a client that can ask for
    more (an OAuth client, by MCP's step-up rule) learns which."""
    return f'Bearer error="insufficient_scope", scope="{scope}", error_description="{message}"'


def timed_out(limit: float) -> ServiceError:
    """504 timeout for a request that was not answered in time: at its route's time limit (gateway.routes.Route.
    time_limit), or a service it called did not answer within that call's own deadline, shorter."""
    return ServiceError("timeout", f"the request did not finish in time (this route's time limit is {limit:g} s); it "
                        "may still take effect: read the result back, or repeat the request with the same "
                        "Idempotency-Key where the route takes one")


def lacks_scope(missing: list[str]) -> ServiceError:
    message = f"this key lacks the {', '.join(missing)} scope"
    return ServiceError("forbidden", message, www_authenticate=insufficient_scope(" ".join(missing), message))


def from_service_error(err: ServiceError) -> web.Response:
    """A service's error with what its details carry: Retry-After for a rate limit, the WWW-Authenticate challenge
    of a missing scope, and for x402's 402 the PAYMENT-REQUIRED header with its decoded requirements in the body
    as error.payment_required."""
    headers: dict[str, str] = {}
    extra: dict[str, Any] = {}
    if "retry_after" in err.details:
        headers["Retry-After"] = err.details["retry_after"]
    if "limit" in err.details:  # a daily spend limit (services.messaging.spend): which one, as the balance names it
        extra["limit"] = err.details["limit"]
    if "www_authenticate" in err.details:
        headers["WWW-Authenticate"] = err.details["www_authenticate"]
    if "next_allowed_at" in err.details:  # the sales pipeline's cadence: when the touch is allowed (null: never)
        extra["nextAllowedAt"] = err.details["next_allowed_at"] or None
        if extra["nextAllowedAt"]:
            wait = datetime.fromisoformat(extra["nextAllowedAt"].replace("Z", "+00:00")) - datetime.now(UTC)
            headers["Retry-After"] = str(max(1, math.ceil(wait.total_seconds())))
    if required := err.details.get("payment_required"):
        headers[PAYMENT_REQUIRED_HEADER] = required
        with contextlib.suppress(binascii.Error, ValueError):  # the header alone still carries it
            extra["payment_required"] = json.loads(base64.b64decode(required))
    return error_response(err.code, err.message, err.http_status, headers or None, **extra)
