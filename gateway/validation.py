"""Request validation against the route table's JSON Schemas (draft 2020-12)."""
from __future__ import annotations

import re

from jsonschema import Draft202012Validator
from multidict import MultiDictProxy

from core.errors import ServiceError
from core.ids import is_uuid

_validators: dict[int, tuple[dict, Draft202012Validator]] = {}


def validator(schema: dict) -> Draft202012Validator:
    """One compiled validator per schema object (route schemas are module-level constants)."""
    hit = _validators.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER))
        _validators[id(schema)] = hit
    return hit[1]


def _where(error) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "body"


def check(schema: dict, value, code: str = "invalid_request") -> None:
    """Raise `code` naming the first offending field, e.g. "name: 'x' is too long"."""
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        if first.validator == "required":
            missing = first.message.split("'")[1] if "'" in first.message else first.message
            prefix = _where(first)
            raise ServiceError(code, f"{missing} is required" if prefix == "body" else f"{prefix}.{missing} is required")
        raise ServiceError(code, f"{_where(first)}: {first.message}")


QUERY_KEYWORDS = {"type", "minimum", "maximum", "enum", "format", "default", "description", "items", "deprecated"}


# JSON escapes that can smuggle in text no database or protobuf accepts: NUL and lone surrogates.
SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def _unstorable(text: str) -> bool:
    if "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return True
    return False


def unstorable_text_path(value, path: str = "") -> str | None:
    """Where a JSON value holds text that cannot be stored (NUL, lone surrogate), or None."""
    if isinstance(value, str):
        return (path or "body") if _unstorable(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if _unstorable(key):
                return where
            found = unstorable_text_path(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = unstorable_text_path(item, f"{path}[{i}]")
            if found:
                return found
    return None


def coerce_query(schema: dict, params: MultiDictProxy) -> dict:
    """Query strings to typed values as the schema declares (integers, booleans, arrays), then checked.

    Query schemas may only use QUERY_KEYWORDS (a unit test holds every route to that)."""
    props = schema.get("properties", {})
    out: dict = {}
    for name in params.keys():
        if name in out:
            continue
        spec = props.get(name)
        if spec is None:
            continue  # unknown parameters are ignored
        kind = spec.get("type")
        values = [v for v in params.getall(name) if v != ""]  # "after=" means no cursor, not a bad one
        if not values:
            continue
        if any("\x00" in v for v in values):
            raise ServiceError("invalid_request", f"{name} must not contain NUL characters")
        if kind == "array":
            out[name] = [p for v in values for p in v.split(",") if p]
            continue
        raw = values[-1]
        if kind == "integer":
            try:
                out[name] = int(raw)
            except ValueError:
                raise ServiceError("invalid_request", f"{name} must be an integer") from None
        elif kind == "boolean":
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ServiceError("invalid_request", f"{name} must be true or false")
            out[name] = raw.lower() in ("true", "1")
        else:
            out[name] = raw
        _check_param(name, spec, out[name])
    missing = [n for n in schema.get("required", ()) if n not in out]
    if missing:
        raise ServiceError("invalid_request", f"{missing[0]} is required")
    return out


def _check_param(name: str, spec: dict, value) -> None:
    """The few keywords query parameters use, checked directly: this runs on every GET, where
    a full JSON Schema pass costs more than the rest of the parameter handling."""
    if "minimum" in spec and value < spec["minimum"] or "maximum" in spec and value > spec["maximum"]:
        raise ServiceError("invalid_request", f"{name} must be between {spec.get('minimum', '-inf')} and "
                           f"{spec.get('maximum', 'inf')}")
    if "enum" in spec and value not in spec["enum"]:
        raise ServiceError("invalid_request", f"{name} must be one of {', '.join(map(str, spec['enum']))}")
    if spec.get("format") == "uuid" and not is_uuid(value):
        raise ServiceError("invalid_request", f"{name} must be a UUID")
