"""Cursor pagination shared by every list: newest first, ordered by (timestamp, id).

A page ends with `next_cursor`, an opaque token of the last item's timestamp and id; the next page starts
strictly after that place, so rows sharing a timestamp are never skipped or repeated at a page break. The
spec's `after=<created_at>` cursor still works (rows strictly older than it).
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from datetime import datetime, timezone

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import UUID

from core.errors import invalid
from core.ids import is_uuid
from switchboard.v1 import common_pb2

BAD_CURSOR = "cursor is not one this API returned: pass next_cursor exactly as the previous page gave it"


def clamp_limit(limit: int, default: int, maximum: int) -> int:
    """The page size to use; 0 means the default, anything outside 1..maximum is refused."""
    if limit == 0:
        return default
    if limit < 1 or limit > maximum:
        raise invalid(f"limit must be between 1 and {maximum}")
    return limit


def encode_cursor(at: datetime, row_id) -> str:
    raw = json.dumps([at.isoformat(), row_id if isinstance(row_id, int) else str(row_id)], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, id_col: sa.Column) -> tuple[datetime, object]:
    """The (timestamp, id) a cursor names, checked against the id column's type, or 400."""
    try:
        at, row_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        at = datetime.fromisoformat(at)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise invalid(BAD_CURSOR) from None
    if isinstance(id_col.type, sa.Integer):
        ok = isinstance(row_id, int) and not isinstance(row_id, bool)
    elif isinstance(id_col.type, UUID):
        ok = isinstance(row_id, str) and is_uuid(row_id)
    else:
        ok = isinstance(row_id, str)
    if not ok or at.tzinfo is None:
        raise invalid(BAD_CURSOR)
    return at, row_id


def page_query(query: sa.Select, at: sa.Column, id_col: sa.Column, page: common_pb2.PageRequest,
               limit: int) -> sa.Select:
    """Newest-first page after the request's cursor (or older than its `after`), fetching one extra row to
    know whether there is more."""
    if page.cursor:
        cursor_at, cursor_id = decode_cursor(page.cursor, id_col)
        query = query.where(sa.tuple_(at, id_col) < sa.tuple_(sa.literal(cursor_at, at.type),
                                                               sa.literal(cursor_id, id_col.type)))
    elif (after := opt_datetime(page, "after")) is not None:
        query = query.where(at < after)
    return query.order_by(at.desc(), id_col.desc()).limit(limit + 1)


def split_page(rows: list, limit: int, place: Callable[[object], tuple[datetime, object]] | None = None
               ) -> tuple[list, common_pb2.PageInfo]:
    """The page's rows and its PageInfo; `place` gives a row's (timestamp, id) for next_cursor (omit it for
    lists that are not ordered by page_query)."""
    rows, has_more = rows[:limit], len(rows) > limit
    info = common_pb2.PageInfo(has_more=has_more)
    if has_more and place is not None:
        info.next_cursor = encode_cursor(*place(rows[-1]))
    return rows, info


def opt_datetime(message, field: str) -> datetime | None:
    """A Timestamp field of a proto message as an aware datetime, or None when unset."""
    if not message.HasField(field):
        return None
    return getattr(message, field).ToDatetime(tzinfo=timezone.utc)
