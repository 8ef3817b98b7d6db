"""Building request protos from query parameters and bodies, shared by the route modules."""
from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf.message import Message

from core.messages import struct
from gateway.timeparse import set_time
from switchboard.v1 import common_pb2

M = TypeVar("M", bound=Message)


def page_request(query: dict[str, Any]) -> common_pb2.PageRequest:
    page = common_pb2.PageRequest(limit=query.get("limit", 0), cursor=query.get("cursor", ""))
    if "after" in query:
        set_time(page.after, query["after"], "after")
    return page


def page_query(default: int, maximum: int, **extra: Any) -> dict[str, Any]:
    """Query schema of a newest-first list: `limit`, `cursor`, `after` and the list's own parameters."""
    return {"type": "object", "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": maximum, "default": default},
        "cursor": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$",
                   "description": "next_cursor of the previous page: continues exactly after its last item, even "
                   "among items sharing a timestamp (wins over after)"},
        "after": {"type": "string", "format": "date-time",
                  "description": "cursor: created_at of the last item of the previous page (items strictly older; "
                  "items sharing that timestamp are skipped, which cursor avoids)"},
        **extra}}


def set_fields(message: M, source: dict[str, Any], *names: str) -> M:
    """Copy the given (non-null) scalar values from a body or query onto a request proto; returns it."""
    for name in names:
        if source.get(name) is not None:
            setattr(message, name, source[name])
    return message


def set_structs(message: M, source: dict[str, Any], *names: str) -> M:
    """Copy the given JSON objects onto Struct fields of a request proto; returns it."""
    for name in names:
        if isinstance(source.get(name), dict):
            getattr(message, name).CopyFrom(struct(source[name]))
    return message
