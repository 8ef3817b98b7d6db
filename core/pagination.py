"""Cursor pagination shared by every list: newest first, `after` = created_at of the last item."""
from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa

from core.errors import invalid


def clamp_limit(limit: int, default: int, maximum: int) -> int:
    """The page size to use; 0 means the default, anything outside 1..maximum is refused."""
    if limit == 0:
        return default
    if limit < 1 or limit > maximum:
        raise invalid(f"limit must be between 1 and {maximum}")
    return limit


def page_query(query: sa.Select, created_at: sa.Column, id_col: sa.Column, after: datetime | None, limit: int) -> sa.Select:
    """Newest-first page strictly older than `after`, fetching one extra row to know `has_more`."""
    if after is not None:
        query = query.where(created_at < after)
    return query.order_by(created_at.desc(), id_col.desc()).limit(limit + 1)


def split_page(rows: list, limit: int) -> tuple[list, bool]:
    return rows[:limit], len(rows) > limit


def opt_datetime(message, field: str) -> datetime | None:
    """A Timestamp field of a proto message as an aware datetime, or None when unset."""
    if not message.HasField(field):
        return None
    return getattr(message, field).ToDatetime(tzinfo=timezone.utc)
