"""Protobuf messages to public JSON: what the API answers and what a business's export holds (core.export_page)
read alike, so the two can never drift.

Unset optional fields become null, timestamps ISO 8601 UTC strings ending in Z, Struct fields plain objects, maps
objects in the order of their keys. The gateway's published schema of this JSON walks the same descriptors
(gateway.convert).
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from core.ids import rfc3339

TIMESTAMP = "google.protobuf.Timestamp"
STRUCT = "google.protobuf.Struct"

def _plain(value: Any) -> Any:
    """Struct/ListValue contents as plain JSON values (json_format is several times slower)."""
    if isinstance(value, struct_pb2.Struct):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, struct_pb2.ListValue):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # Struct keeps every number as a double; give back the integer that was sent
    return value


def _timestamp(value: timestamp_pb2.Timestamp) -> str:
    return rfc3339(datetime.fromtimestamp(value.seconds, UTC).replace(microsecond=value.nanos // 1000))


SCALAR, TIME, OBJECT, MESSAGE, MAP = range(5)


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _kind(field: FieldDescriptor) -> int:
    if field.message_type is None:
        return SCALAR
    if is_map(field):
        return MAP  # of scalar values (counts by name)
    return {TIMESTAMP: TIME, STRUCT: OBJECT}.get(field.message_type.full_name, MESSAGE)


def _convert(kind: int, value: Any) -> Any:
    if kind == SCALAR:
        return value
    if kind == TIME:
        return _timestamp(value)
    if kind == OBJECT:
        return _plain(value)
    if kind == MAP:
        return dict(sorted(value.items()))  # a map has no order on the wire: by key, so the same reply reads the same
    return to_json(value)


# Per message type: (name, kind, repeated, has presence), worked out once from the descriptor.
_plans: dict[str, list[tuple[str, int, bool, bool]]] = {}


def _plan(descriptor: Descriptor) -> list[tuple[str, int, bool, bool]]:
    plan = _plans.get(descriptor.full_name)
    if plan is None:
        plan = [(f.name, _kind(f), f.is_repeated and not is_map(f), f.has_presence and not f.is_repeated)
                for f in descriptor.fields]
        _plans[descriptor.full_name] = plan
    return plan


def to_json(message: Message, omit: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind, repeated, presence in _plan(cast(Descriptor, message.DESCRIPTOR)):
        if name in omit:
            continue
        value = getattr(message, name)
        if repeated:
            out[name] = [_convert(kind, v) for v in value]
        elif presence and not message.HasField(name):
            out[name] = {} if kind == OBJECT else None
        else:
            out[name] = _convert(kind, value)
    return out
