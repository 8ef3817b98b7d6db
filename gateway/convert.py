"""Protobuf messages to public JSON, and the JSON Schema that describes exactly that JSON.

Both walk the message descriptor, so a response can never drift from its
published schema: unset optional fields become null, timestamps ISO 8601 UTC
strings ending in Z, Struct fields plain objects, maps objects in the order of their keys.
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
_SCALARS = {
    FieldDescriptor.CPPTYPE_STRING: "string",
    FieldDescriptor.CPPTYPE_BOOL: "boolean",
    FieldDescriptor.CPPTYPE_INT32: "integer",
    FieldDescriptor.CPPTYPE_INT64: "integer",
    FieldDescriptor.CPPTYPE_UINT32: "integer",
    FieldDescriptor.CPPTYPE_UINT64: "integer",
    FieldDescriptor.CPPTYPE_DOUBLE: "number",
    FieldDescriptor.CPPTYPE_FLOAT: "number",
    FieldDescriptor.CPPTYPE_ENUM: "string",
}


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


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _kind(field: FieldDescriptor) -> int:
    if field.message_type is None:
        return SCALAR
    if _is_map(field):
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
        plan = [(f.name, _kind(f), f.is_repeated and not _is_map(f), f.has_presence and not f.is_repeated)
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


def _field_schema(field: FieldDescriptor) -> dict[str, Any]:
    if field.message_type is not None and _is_map(field):
        return {"type": "object", "additionalProperties": _field_schema(field.message_type.fields_by_name["value"])}
    if field.message_type is not None:
        name = field.message_type.full_name
        if name == TIMESTAMP:
            schema = {"type": "string", "format": "date-time"}
        elif name == STRUCT:
            schema = {"type": "object"}
        else:
            schema = message_schema(field.message_type)
    else:
        schema = {"type": _SCALARS[field.cpp_type]}
    if field.is_repeated:
        return {"type": "array", "items": schema}
    if field.has_presence and not (field.message_type and field.message_type.full_name == STRUCT):
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def schema_of(message: type[Message], omit: tuple[str, ...] = ()) -> dict[str, Any]:
    """JSON Schema of `to_json` for messages of a generated class (see message_schema)."""
    # The stubs type a class's DESCRIPTOR as the pure-Python or the upb descriptor; both have the same API.
    return message_schema(cast(Descriptor, message.DESCRIPTOR), omit)


def message_schema(descriptor: Descriptor, omit: tuple[str, ...] = ()) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of `to_json(message)` for messages of this type."""
    props = {f.name: _field_schema(f) for f in descriptor.fields if f.name not in omit}
    return {"type": "object", "properties": props, "required": list(props)}
