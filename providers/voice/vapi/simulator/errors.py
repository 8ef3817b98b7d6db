"""The provider's error shape, `{"message", "error", "statusCode"}` (message may be a list of strings)."""
from __future__ import annotations

from http import HTTPStatus

from aiohttp import web

INVALID_KEY = "Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa."


class ApiError(Exception):
    """Answered as the provider's error response (with `headers`, e.g. a 429's Retry-After)."""

    def __init__(self, status: int, message: str | list[str], headers: dict[str, str] | None = None):
        super().__init__(message if isinstance(message, str) else "; ".join(message))
        self.status = status
        self.message = message
        self.headers = headers


def bad_request(messages: list[str] | str) -> ApiError:
    return ApiError(400, messages if isinstance(messages, list) else [messages])


def not_found(label: str) -> ApiError:
    return ApiError(404, f"Couldn't Find {label}")


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def error_response(status: int, message: str | list[str], headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"message": message, "error": reason(status), "statusCode": status}, status=status,
                             headers=headers)
