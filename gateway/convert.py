"""Protobuf messages to public JSON (core.proto_json), and the JSON Schema that describes exactly that JSON.

Both walk the message descriptor, so a response can never drift from its
published schema: unset optional fields become null, timestamps ISO 8601 UTC
strings ending in Z, Struct fields plain objects, maps objects in the order of their keys.
"""
from __future__ import annotations

from typing import Any, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from core.proto_json import STRUCT, TIMESTAMP, is_map, to_json

__all__ = ["message_schema", "schema_of", "to_json"]

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


def _field_schema(field: FieldDescriptor) -> dict[str, Any]:
    if field.message_type is not None and is_map(field):
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
