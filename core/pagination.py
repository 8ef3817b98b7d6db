"""Cursor pagination shared by every list: newest first, ordered by (timestamp, id).

A page ends with `next_cursor`, an opaque token of the last item's timestamp and id; the next page starts
strictly after that place, so rows sharing a timestamp are never skipped or repeated at a page break. The
spec's `after=<created_at>` cursor still works (rows strictly older than it).
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

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


def encode_cursor(at: datetime, row_id: object) -> str:
    raw = json.dumps([at.isoformat(), row_id if isinstance(row_id, int) else str(row_id)], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, id_col: sa.Column[Any]) -> tuple[datetime, object]:
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


@dataclass(frozen=True)
class Page:
    """What a list request asks for, free of the wire format: a checked page size and where to start
    (an opaque `cursor` this API returned, or the spec's `after` timestamp)."""

    limit: int
    cursor: str = ""
    after: datetime | None = None

    @classmethod
    def of(cls, request: common_pb2.PageRequest, default: int, maximum: int) -> Page:
        """A servicer's PageRequest, its limit clamped to this list's default and maximum."""
        return cls(clamp_limit(request.limit, default, maximum), request.cursor, opt_datetime(request, "after"))


@dataclass(frozen=True)
class Paged:
    """One page of rows, whether more follow, and where the next page starts."""

    rows: Sequence[Any]
    has_more: bool
    next_cursor: str = ""

    def info(self) -> common_pb2.PageInfo:
        return common_pb2.PageInfo(has_more=self.has_more, next_cursor=self.next_cursor)

    def map(self, read: Callable[[Any], Any]) -> Paged:
        """The same page with each row read (a repository's rows into its typed records)."""
        return dataclasses.replace(self, rows=[read(row) for row in self.rows])


def page_query(query: sa.Select[Any], at: sa.Column[Any], id_col: sa.Column[Any], page: Page) -> sa.Select[Any]:
    """Newest-first page after the request's cursor (or older than its `after`), fetching one extra row to
    know whether there is more."""
    if page.cursor:
        cursor_at, cursor_id = decode_cursor(page.cursor, id_col)
        query = query.where(sa.tuple_(at, id_col) < sa.tuple_(sa.literal(cursor_at, at.type),
                                                               sa.literal(cursor_id, id_col.type)))
    elif page.after is not None:
        query = query.where(at < page.after)
    return query.order_by(at.desc(), id_col.desc()).limit(page.limit + 1)


def split_page(rows: Sequence[Any], limit: int, place: tuple[str, str] | None = None) -> Paged:
    """The page of `limit + 1` fetched rows; `place` names the (timestamp, id) columns of next_cursor
    (omit it for lists that are not ordered by page_query)."""
    rows, has_more = rows[:limit], len(rows) > limit
    if not (has_more and place):
        return Paged(rows, has_more)
    last = getattr(rows[-1], "_mapping", rows[-1])  # a SQLAlchemy Row or an asyncpg Record
    return Paged(rows, has_more, encode_cursor(last[place[0]], last[place[1]]))


async def fetch_page(conn: AsyncConnection, query: sa.Select[Any], at: sa.Column[Any], id_col: sa.Column[Any],
                     page: Page) -> Paged:
    """Run `query` as a newest-first page ordered by (at, id_col)."""
    rows = (await conn.execute(page_query(query, at, id_col, page))).all()
    return split_page(rows, page.limit, (at.name, id_col.name))


def opt_datetime(message: Message, field: str) -> datetime | None:
    """A Timestamp field of a proto message as an aware datetime, or None when unset."""
    if not message.HasField(field):
        return None
    stamp: Timestamp = getattr(message, field)
    return stamp.ToDatetime(tzinfo=UTC)
