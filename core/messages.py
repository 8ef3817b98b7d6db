"""Small protobuf helpers shared by servicers and the gateway."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import Message

from switchboard.v1 import common_pb2


def set_timestamp(message: Message, field: str, value: datetime | None) -> None:
    """Set a Timestamp field from an aware datetime (cheaper than Timestamp.FromDatetime); None leaves it unset."""
    if value is not None:
        target = getattr(message, field)
        target.seconds = int(value.timestamp())
        target.nanos = value.microsecond * 1000


def timestamp(message: Message, field: str) -> datetime | None:
    """A Timestamp field as an aware datetime (UTC); None when unset."""
    return getattr(message, field).ToDatetime(tzinfo=UTC) if message.HasField(field) else None


def struct(data: dict[str, Any] | None) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(data or {})
    return s


def optional(message: Message, field: str) -> Any:
    """The value of a field with presence, or None when the caller did not set it."""
    return getattr(message, field) if message.HasField(field) else None


def business_hours(start: int | None, end: int | None) -> common_pb2.BusinessHours | None:
    """A business's own calling hours as the compliance decision's requests carry them (None when it has none)."""
    return None if start is None else common_pb2.BusinessHours(start_hour=start, end_hour=end)
