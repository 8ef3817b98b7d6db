"""Request validation against the route table's JSON Schemas (draft 2020-12)."""
from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from multidict import MultiMapping

from core.contact import E164_PATTERN
from core.errors import ServiceError
from core.ids import is_uuid
from gateway import patterns
from gateway.timeparse import plus_restored

_validators: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}
FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """One compiled validator per schema object (route schemas are module-level constants)."""
    hit = _validators.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, Draft202012Validator(schema, format_checker=FORMAT_CHECKER))
        _validators[id(schema)] = hit
    return hit[1]


def _rule(error: ValidationError) -> Any:
    """The failed keyword's value in the schema (jsonschema sets it on every error it reports)."""
    return error.validator_value


def _sent(error: ValidationError) -> Any:
    """The part of the request that failed it."""
    return error.instance


def _where(error: ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "body"


def _field(error: ValidationError, name: str) -> str:
    prefix = _where(error)
    return name if prefix == "body" else f"{prefix}.{name}"


def _alternatives(error: ValidationError) -> list[list[str]] | None:
    """The field sets of a oneOf/anyOf whose branches only require fields (e.g. agent_id or its alias id)."""
    branches = _rule(error) if error.validator in ("oneOf", "anyOf") else None
    if not branches or not all(set(b) == {"required"} for b in branches):
        return None
    return [b["required"] for b in branches]


def _unwrap_nullable(error: ValidationError) -> ValidationError:
    """For a value that is not null under `anyOf: [X, {"type": "null"}]`, X's own first error (what to fix)
    rather than "is not valid under any of the given schemas"."""
    while error.validator == "anyOf" and _sent(error) is not None and error.context:
        nulls = [i for i, branch in enumerate(_rule(error)) if branch == {"type": "null"}]
        if not nulls:
            return error
        inner = sorted((e for e in error.context if e.relative_schema_path[0] not in nulls),
                       key=lambda e: [str(p) for p in e.absolute_path])
        if not inner:
            return error
        error = inner[0]
    return error


def _condition(schema: dict[str, Any], error: ValidationError) -> str:
    """' when <fields> is sent' for an error of an if/then's `then` (the fields the `if` requires), else ''."""
    path = list(error.schema_path)
    if "then" not in path:
        return ""
    node: Any = schema
    for step in path[:path.index("then")]:
        node = node[step]
    fields = node.get("if", {}).get("required", [])
    return f" when {' and '.join(fields)} is sent" if fields else ""


def check(schema: dict[str, Any], value: Any, code: str = "invalid_request") -> None:
    """Raise an error naming the first offending field, e.g. "name: 'x' is too long".

    A missing field is `bad_request` (the spec's "required parameters missing"); any other problem is
    `code`. Routes with a code of their own (signup's validation_error) use it for both."""
    missing_code = "bad_request" if code == "invalid_request" else code
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    first = _unwrap_nullable(errors[0])
    if first.validator == "required":
        missing = first.message.split("'")[1] if "'" in first.message else first.message
        raise ServiceError(missing_code, f"{_field(first, missing)} is required{_condition(schema, first)}")
    alternatives = _alternatives(first)
    if alternatives is not None:
        names = " or ".join("+".join(_field(first, n) for n in names) for names in alternatives)
        if not any(all(n in _sent(first) for n in names) for names in alternatives):
            raise ServiceError(missing_code, f"{names} is required")
        raise ServiceError(code, f"send only one of {names}")
    if first.validator == "dependentRequired":
        needed = next(n for n in _rule(first) if n in _sent(first) and any(
            d not in _sent(first) for d in _rule(first)[n]))
        raise ServiceError(missing_code, f"{_field(first, needed)} needs "
                           + " and ".join(_field(first, d) for d in _rule(first)[needed]))
    if first.validator == "not" and set(_rule(first)) == {"required"}:
        both = " and ".join(_field(first, n) for n in _rule(first)["required"])
        raise ServiceError(code, f"send {both} not together: they are alternatives")
    if first.validator == "pattern":
        raise ServiceError(code, patterns.must_match(_where(first), _rule(first)))
    raise ServiceError(code, f"{_where(first)}: {first.message}{_condition(schema, first)}")


QUERY_KEYWORDS = {"type", "minimum", "maximum", "enum", "format", "pattern", "default", "description", "items",
                  "deprecated"}
MAX_NUMBER_DIGITS = 300  # beyond a double's range: no field can hold it


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, refusing what JSON forbids but Python accepts (NaN, Infinity, numbers
    too large for a double) and taking integral floats such as 2.0 as the integers JSON Schema says
    they are, so no integer field ever meets a float."""
    return json.loads(raw, parse_constant=_no_constant, parse_float=_number, parse_int=_integer)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _integer(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise ValueError(f"number {text[:40]}... is too large")
    return int(text)


def _number(text: str) -> int | float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is too large")
    return int(value) if value.is_integer() else value


MAX_DEPTH = 32  # JSON nesting a body may have: protobuf refuses deeper Structs when decoding


def depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar is 0, {} or [] is 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


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


def unstorable_text_path(value: Any, path: str = "") -> str | None:
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


def coerce_query(schema: dict[str, Any] | None, params: MultiMapping[str]) -> dict[str, Any]:
    """Query strings to typed values as the schema declares (integers, booleans, arrays), then checked.

    Strict like the bodies: an unknown parameter, a repeated single-valued one or an empty value the
    schema does not allow is refused, so a typo never silently widens a listing. An empty value of a
    plain string counts as absent. Query schemas may only use QUERY_KEYWORDS (a unit test holds every
    route to that)."""
    props = (schema or {}).get("properties", {})
    out: dict[str, Any] = {}
    for name in dict.fromkeys(params.keys()):
        spec = props.get(name)
        if spec is None:
            known = ", ".join(props) or "no query parameters"
            raise ServiceError("invalid_request", f"unknown query parameter {name!r}; this route takes {known}")
        values = params.getall(name)
        if any("\x00" in v for v in values):
            raise ServiceError("invalid_request", f"{name} must not contain NUL characters")
        if spec.get("type") == "array":
            items = [p for v in values for p in v.split(",") if p]
            for item in items:
                _check_param(name, spec["items"], item)
            if items:
                out[name] = items
            continue
        if len(values) > 1:
            raise ServiceError("invalid_request", f"{name} was given {len(values)} times; send it once")
        if values[0] == "" and set(spec) <= {"type", "description", "deprecated"}:
            continue  # "source=" means no filter
        out[name] = _typed(name, spec, values[0])
        _check_param(name, spec, out[name])
    missing = [n for n in (schema or {}).get("required", ()) if n not in out]
    if missing:
        raise ServiceError("bad_request", f"{missing[0]} is required")
    return out


def _typed(name: str, spec: dict[str, Any], raw: str) -> str | int | bool:
    kind = spec.get("type")
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]{1,18}", raw):
            raise ServiceError("invalid_request", f"{name} must be an integer")
        return int(raw)
    if kind == "boolean":
        if raw not in ("true", "false"):
            raise ServiceError("invalid_request", f"{name} must be true or false")
        return raw == "true"
    if spec.get("format") == "date-time" or spec.get("pattern") == E164_PATTERN:
        return plus_restored(raw)
    return raw


def _check_param(name: str, spec: dict[str, Any], value: Any) -> None:
    """The few keywords query parameters use, checked directly: this runs on every GET, where
    a full JSON Schema pass costs more than the rest of the parameter handling."""
    if ("minimum" in spec and value < spec["minimum"]) or ("maximum" in spec and value > spec["maximum"]):
        raise ServiceError("invalid_request", f"{name} must be between {spec.get('minimum', '-inf')} and "
                           f"{spec.get('maximum', 'inf')}")
    if "enum" in spec and value not in spec["enum"]:
        if len(spec["enum"]) > 12:  # a long list helps less than what it is
            raise ServiceError("invalid_request", f"{name} {value!r} is not accepted: send "
                               f"{spec.get('description', 'a value listed in /api/v1/openapi.json')}")
        raise ServiceError("invalid_request", f"{name} must be one of {', '.join(map(str, spec['enum']))}")
    if "pattern" in spec and not re.search(spec["pattern"], value):
        raise ServiceError("invalid_request", patterns.must_match(name, spec["pattern"]))
    fmt = spec.get("format")
    if fmt == "uuid" and not is_uuid(value):
        raise ServiceError("invalid_request", f"{name} must be a UUID")
    if fmt == "date-time" and not FORMAT_CHECKER.conforms(value, "date-time"):
        raise ServiceError("invalid_request", f"{name} must be an RFC 3339 timestamp such as 2026-01-31T09:30:00Z")
