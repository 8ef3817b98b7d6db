"""One page of a business's records for its export (issue 56): `ExportPage` of the services that hold its records
(core.registry.EXPORT_SERVICES; services/*/export_pages.py), which the accounts service's export job alone may ask
(core.registry.RPC_CALLERS), one kind at a time, page after page.

A page is a keyset page of the lists' own order, newest first, mostly by (created_at, id) (core.pagination): one
indexed read per page, its cursor opaque, so rows sharing a timestamp are never skipped or repeated at a page break,
and no transaction outlives the read. A page ends early rather than pass MAX_BYTES (gRPC's message size). Each record is the JSON the public API shows for it (core.proto_json over the same
message the service answers the gateway with), one compact UTF-8 document a line.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from core import tenant
from core.errors import ServiceError, not_found
from core.ids import require_uuid
from core.pagination import Page, Paged, encode_cursor
from core.proto_json import to_json
from switchboard.v1 import common_pb2

MAX_LIMIT = 5000  # records a page: the job's pages stay a few MB however large the business
# A reply's lines at most (one record more only when a single one is larger): under gRPC's default 4 MiB message,
# which a page of long transcripts could pass.
MAX_BYTES = 3 * 1024 * 1024
BAD_CURSOR = "after is not a cursor this service gave: pass next_after exactly as the previous page gave it"


@dataclass(frozen=True)
class Asked:
    """A checked ExportPage request: whose records, which kind, and the page (its limit and cursor)."""

    business_id: str
    kind: str
    page: Page


def asked(request: common_pb2.ExportPageRequest, kinds: Sequence[str]) -> Asked:
    """The request checked (validation_error saying what to fix): a business of the caller's (the export job acts
    for the business it exports), a kind this service holds, a limit of 1 to MAX_LIMIT."""
    business_id = require_uuid(request.business_id, "business_id").lower()
    caller = tenant.current()
    if caller.business_ids and not caller.can_access(business_id):
        raise not_found("business")
    if request.kind not in kinds:
        raise ServiceError("validation_error", f"kind must be one of {', '.join(kinds)} (not {request.kind!r})")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise ServiceError("validation_error", f"limit must be between 1 and {MAX_LIMIT}")
    return Asked(business_id, request.kind, Page(request.limit, request.after))


def line(record: Message | dict[str, Any]) -> str:
    """A record (a message, or its JSON with what the export adds) as one compact JSON document, as the public API
    shows it."""
    document = to_json(record) if isinstance(record, Message) else record
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def by_created(row: Any) -> str:
    """The cursor after a row of a list ordered by (created_at, id), as core.pagination writes it."""
    return encode_cursor(row.created_at, row.id)


def reply(rows: Sequence[Any], paged: Paged, render: Callable[[Any], Message | dict[str, Any]],
          cursor_of: Callable[[Any], str] = by_created) -> common_pb2.ExportPageReply:
    """The page's rows rendered (`render`: a row as the API shows it), and the cursor after the page ("" after the
    last). A page whose lines would pass MAX_BYTES ends early, after the row before (`cursor_of` names it): the next
    page starts there."""
    lines: list[str] = []
    size = 0
    for n, row in enumerate(rows):
        text = line(render(row))
        size += len(text.encode())
        if lines and size > MAX_BYTES:
            return common_pb2.ExportPageReply(lines=lines, next_after=cursor_of(rows[n - 1]))
        lines.append(text)
    return common_pb2.ExportPageReply(lines=lines, next_after=paged.next_cursor)


def key_cursor(*key: str | int) -> str:
    """An opaque cursor of a page's last sort key, for a kind whose order is not core.pagination's (timestamp, id)."""
    raw = json.dumps(list(key), separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def key_of(cursor: str, types: tuple[type, ...]) -> tuple[Any, ...] | None:
    """The sort key a `key_cursor` names (None for the first page), its values of these types, or validation_error."""
    if not cursor:
        return None
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ServiceError("validation_error", BAD_CURSOR) from None
    if not (isinstance(key, list) and len(key) == len(types)
            and all(isinstance(v, t) and not isinstance(v, bool) for v, t in zip(key, types, strict=True))):
        raise ServiceError("validation_error", BAD_CURSOR)
    return tuple(key)
