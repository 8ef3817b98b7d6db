"""The public error envelope: {"error": {"code", "message"}} for every error response."""
from __future__ import annotations

from aiohttp import web

from core.errors import CODES, ServiceError


def error_response(code: str, message: str, status: int | None = None, headers: dict | None = None) -> web.Response:
    status = status or CODES[code][1]
    return web.json_response({"error": {"code": code, "message": message}}, status=status, headers=headers)


def from_service_error(err: ServiceError) -> web.Response:
    headers = {"Retry-After": err.details["retry_after"]} if "retry_after" in err.details else None
    return error_response(err.code, err.message, err.http_status, headers)
