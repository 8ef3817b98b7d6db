"""Message resources as Twilio shapes them, the checks Twilio makes on a send, and the in-memory store.

A Message resource (GET .../Messages/{Sid}.json) carries `sid` (SM + 32 hex), `account_sid`, `to`, `from`,
`body`, `status`, `direction`, `num_segments` and `num_media` (strings, as Twilio writes them), `error_code`
(an integer or null), `error_message`, `date_created`/`date_updated`/`date_sent` (RFC 2822 in GMT),
`price`/`price_unit`, `messaging_service_sid`, `api_version`, `uri` and `subresource_uris`.

A message's media (an MMS's) are Media resources of their own (`ME` sids, `parent_sid` the message's), listed at
`.../Messages/{Sid}/Media.json` and deleted one by one (`DELETE .../Media/{Sid}.json`). A message is redacted as
Twilio documents it: a POST to the Message resource with an empty Body leaves `body` "" (the record, its numbers,
status, segments and price stay).

The store keeps messages in memory for the life of the process (a restart forgets them); lists are newest
first, as Twilio lists them.
"""
from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlencode

import phonenumbers

from core.contact import is_e164
from core.urls import url_parts
from providers.messaging.simulator import errors
from providers.messaging.simulator.errors import ApiError

API_VERSION = "2010-04-01"
BODY_MAX = 1600
PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX = 50, 1000
URL_MAX = 4000

# GSM 03.38: the basic set costs one septet a character, the extension set two; anything else makes the
# whole text UCS-2. Single segments hold 160 septets or 70 UCS-2 characters; concatenated ones 153 or 67.
GSM_BASIC = frozenset("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "ÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
GSM_EXTENDED = frozenset("^{}\\[~]|€\f")


def rfc2822(at: datetime | None = None) -> str:
    """Twilio's timestamp: `Thu, 30 Jul 2015 20:12:31 +0000`."""
    return format_datetime((at or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0))


def new_sid(prefix: str = "SM") -> str:
    return prefix + secrets.token_hex(16)


def num_segments(body: str) -> int:
    if all(c in GSM_BASIC or c in GSM_EXTENDED for c in body):
        units, single, multi = sum(2 if c in GSM_EXTENDED else 1 for c in body), 160, 153
    else:
        units, single, multi = sum(2 if ord(c) > 0xFFFF else 1 for c in body), 70, 67  # UTF-16 code units
    return 1 if units <= single else -(-units // multi)


def country_of(number: str) -> str:
    """The ISO country of an E.164 number (FromCountry/ToCountry of a webhook), "" when unknown."""
    try:
        return phonenumbers.region_code_for_number(phonenumbers.parse(number, None)) or ""
    except phonenumbers.NumberParseException:
        return ""


def is_callback_url(value: str) -> bool:
    """An absolute http(s) URL with a host (Twilio refuses underscores in it) within Twilio's length limit."""
    if len(value) > URL_MAX:
        return False
    parts = url_parts(value)
    return parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname) and "_" not in (parts.hostname or "")


def check_send(form: Mapping[str, str]) -> None:
    """Twilio's checks on POST .../Messages.json, in its order: what is missing, then what is malformed.
    Unknown parameters are ignored, as Twilio ignores them."""
    to, from_, body = form.get("To", ""), form.get("From", ""), form.get("Body", "")
    if not to:
        raise ApiError(400, errors.TO_REQUIRED, "A 'To' phone number is required.")
    if not from_:
        raise ApiError(400, errors.FROM_REQUIRED, "A 'From' phone number is required.")
    if not body:
        raise ApiError(400, errors.BODY_REQUIRED, "Message body is required.")
    if len(body) > BODY_MAX:
        raise ApiError(400, errors.BODY_TOO_LONG,
                       f"The concatenated message body exceeds the {BODY_MAX} character limit.")
    if not is_e164(to):
        raise ApiError(400, errors.INVALID_TO, f"The 'To' number {to} is not a valid phone number.")
    if not is_e164(from_):
        raise ApiError(400, errors.INVALID_FROM,
                       f"The 'From' number {from_} is not a valid phone number, shortcode, or alphanumeric sender ID.")
    callback = form.get("StatusCallback")
    if callback is not None and not is_callback_url(callback):
        raise ApiError(400, errors.INVALID_STATUS_CALLBACK, f"The StatusCallback URL {callback} is not a valid URL.")


class Messages:
    """The account's messages, by SID in creation order. Each record is the Message resource plus private
    fields (leading underscore) that the API never shows."""

    def __init__(self, account_sid: str):
        self.account_sid = account_sid
        self.base = f"/{API_VERSION}/Accounts/{account_sid}/Messages"
        self.records: dict[str, dict[str, Any]] = {}

    def create(self, *, to: str, from_: str, body: str, direction: str, status: str,
               status_callback: str | None = None) -> dict[str, Any]:
        """A new message, kept."""
        record = self.resource(to=to, from_=from_, body=body, direction=direction, status=status,
                               status_callback=status_callback)
        self.records[record["sid"]] = record
        return record

    def resource(self, *, to: str, from_: str, body: str, direction: str, status: str,
                 status_callback: str | None = None) -> dict[str, Any]:
        """A new message's resource, not kept (a test-credentials send is shown and forgotten)."""
        sid, stamp = new_sid(), rfc2822()
        record: dict[str, Any] = {
            "account_sid": self.account_sid, "api_version": API_VERSION, "body": body,
            "date_created": stamp, "date_sent": None, "date_updated": stamp, "direction": direction,
            "error_code": None, "error_message": None, "from": from_, "messaging_service_sid": None,
            "num_media": "0", "num_segments": str(num_segments(body)), "price": None, "price_unit": "USD",
            "sid": sid, "status": status,
            "subresource_uris": {"media": f"{self.base}/{sid}/Media.json", "feedback": f"{self.base}/{sid}/Feedback.json"},
            "to": to, "uri": f"{self.base}/{sid}.json",
            "_status_callback": status_callback, "_media": [],
        }
        if status in ("sent", "delivered", "received"):
            record["date_sent"] = stamp
        return record

    def get(self, sid: str) -> dict[str, Any] | None:
        return self.records.get(sid)

    def attach_media(self, sid: str, content_types: list[str]) -> None:
        """Media of these content types on the message (an MMS received), as Twilio keeps them."""
        record = self.records[sid]
        base = f"{self.base}/{sid}/Media"
        for content_type in content_types:
            media_sid, stamp = new_sid("ME"), rfc2822()
            record["_media"].append({"account_sid": self.account_sid, "content_type": content_type,
                                     "date_created": stamp, "date_updated": stamp, "parent_sid": sid,
                                     "sid": media_sid, "uri": f"{base}/{media_sid}.json"})
        record["num_media"] = str(len(record["_media"]))

    def media_page(self, sid: str, query: Mapping[str, str]) -> dict[str, Any]:
        """GET .../Messages/{Sid}/Media.json: the list envelope (`media_list`) over the message's media."""
        return list_page(f"{self.base}/{sid}/Media", "media_list", list(self.records[sid]["_media"]), query, ())

    def media(self, sid: str, media_sid: str) -> dict[str, Any] | None:
        return next((m for m in self.records[sid]["_media"] if m["sid"] == media_sid), None)

    def delete_media(self, sid: str, media_sid: str) -> bool:
        """The media gone for good (False when the message has none such); `num_media` stays what was sent."""
        kept = [m for m in self.records[sid]["_media"] if m["sid"] != media_sid]
        deleted = len(kept) < len(self.records[sid]["_media"])
        self.records[sid]["_media"] = kept
        return deleted

    def redact(self, sid: str) -> dict[str, Any]:
        """The message's body redacted (""), as a POST of an empty Body does."""
        record = self.records[sid]
        record.update(body="", date_updated=rfc2822())
        return record

    def move(self, sid: str, status: str, error_code: int | None = None) -> dict[str, Any]:
        """The message's new status (and delivery error), as GET shows it from now on."""
        record, stamp = self.records[sid], rfc2822()
        record.update(status=status, date_updated=stamp)
        if status == "sent":
            record["date_sent"] = stamp
            record["price"] = f"-{0.0079 * int(record['num_segments']):.5f}"
        if error_code is not None:
            record.update(error_code=error_code, error_message=errors.DELIVERY_ERRORS.get(error_code))
        return record

    def page(self, query: Mapping[str, str]) -> dict[str, Any]:
        """GET .../Messages.json: Twilio's list envelope over the messages matching To/From, newest first."""
        found = [public(r) for r in reversed(self.records.values())
                 if all(r[field] == query[name] for name, field in (("To", "to"), ("From", "from")) if name in query)]
        return list_page(self.base, "messages", found, query, ("To", "From"))


def list_page(base: str, key: str, found: list[dict[str, Any]], query: Mapping[str, str],
              filters: tuple[str, ...]) -> dict[str, Any]:
    """Twilio's list envelope over `found` (under `key`), the page PageSize and Page name; its URIs repeat the
    `filters` the query gave."""
    size, number = int_param(query, "PageSize", PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX), int_param(query, "Page", 0, 0,
                                                                                                 None)
    start = number * size
    rows = found[start:start + size]
    given = {name: query[name] for name in filters if name in query}

    def uri(n: int) -> str:
        return f"{base}.json?" + urlencode({**given, "PageSize": size, "Page": n})

    return {key: rows, "end": start + max(len(rows) - 1, 0), "start": start,
            "page": number, "page_size": size, "uri": uri(number), "first_page_uri": uri(0),
            "next_page_uri": uri(number + 1) if start + size < len(found) else None,
            "previous_page_uri": uri(number - 1) if number > 0 else None}


def public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if not k.startswith("_")}


def int_param(query: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ApiError(400, None, f"{name} must be an integer {bound}")
    return value
