"""Twilio's error shape, `{"code", "message", "more_info", "status"}`, and the codes the simulator answers with.

The messages are Twilio's own wording for the codes (its error dictionary at twilio.com/docs/errors), so a
client that shows them shows what Twilio would say.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

from providers.messaging.adapter import CARRIER_ERRORS, UNSUBSCRIBED_RECIPIENT

MORE_INFO = "https://www.twilio.com/docs/errors/{code}"

AUTHENTICATE = 20003  # 401: wrong Account SID or auth token
TEST_CREDENTIALS = 20008  # 403: a resource test credentials cannot reach (all but POST .../Messages)
NOT_FOUND = 20404  # the requested resource was not found
TOO_MANY_REQUESTS = 20429
INVALID_TO = 21211  # "The 'To' number ... is not a valid phone number."
INVALID_FROM = 21212
BODY_REQUIRED = 21602
FROM_REQUIRED = 21603
TO_REQUIRED = 21604
INVALID_STATUS_CALLBACK = 21609
BODY_TOO_LONG = 21617
# A Message update Twilio cannot read: neither Body nor Status, both at once (a redaction and a cancelation), or a
# redaction whose Body is not empty.
INVALID_UPDATE = 30400

GEO_PERMISSION = 21408  # the account may not text the To number's region
FROM_NOT_OURS = 21606  # the From number is not the account's, or cannot text
UNSUBSCRIBED = UNSUBSCRIBED_RECIPIENT  # 21610: the recipient replied STOP to this sender
QUEUE_FULL = 21611  # the From number's queue of outgoing messages is full
UNROUTABLE = 21612
NOT_SMS_CAPABLE = 21614  # the To number cannot receive texts (a landline)

# Delivery errors: the Message's error_code and the status callback's ErrorCode, and the status Twilio reports
# with each: `failed` when the message was never sent (queue overflow, a suspended account), `undelivered` when the
# carrier's receipt said it was not delivered (after `sent`).
DELIVERY_ERRORS = CARRIER_ERRORS
NEVER_SENT = frozenset({30001, 30002})


def delivery_status(code: int) -> str:
    return "failed" if code in NEVER_SENT else "undelivered"

# The code of an injected fault, by HTTP status (others: none).
FAULT_CODES = {429: TOO_MANY_REQUESTS}


class ApiError(Exception):
    """Answered as Twilio's error response."""

    def __init__(self, status: int, code: int | None, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def not_found(path: str) -> ApiError:
    return ApiError(404, NOT_FOUND, f"The requested resource {path} was not found")


def error_body(status: int, code: int | None, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "more_info": MORE_INFO.format(code=code) if code else None,
            "status": status}


def error_response(status: int, code: int | None, message: str, headers: dict[str, Any] | None = None) -> web.Response:
    return web.json_response(error_body(status, code, message), status=status, headers=headers)


def fault_response(status: int) -> web.Response:
    """An injected fault (control plane), with Twilio's code for the status where it has one."""
    return error_response(status, FAULT_CODES.get(status), "Injected fault")
