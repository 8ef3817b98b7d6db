"""ISO 8601 timestamps from query strings and bodies."""
from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from core.errors import invalid


def plus_restored(value: str) -> str:
    """A '+' that an unencoded query string turned into a space, put back (timestamps, E.164 numbers)."""
    return value.replace(" ", "+")


def parse_time(value: str, field: str) -> datetime:
    """An aware UTC datetime; naive input is taken as UTC. A '+' that a query string
    turned into a space is put back."""
    text = plus_restored(value.strip()).upper()  # RFC 3339 allows a lower-case t and z
    try:
        dt = datetime.fromisoformat(text)
        return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    except ValueError:
        raise invalid(f"{field} must be an ISO 8601 timestamp such as 2026-01-31T09:30:00Z") from None
    except OverflowError:  # the offset moves it out of years 1-9999
        raise invalid(f"{field} must be between years 1 and 9999 in UTC") from None


def set_time(target: Timestamp, value: str, field: str) -> None:
    target.FromDatetime(parse_time(value, field))
