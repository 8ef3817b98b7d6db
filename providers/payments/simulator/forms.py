"""Stripe's request parameters: form-encoded pairs in bracket notation, decoded to nested values.

`line_items[0][price]=price_1&line_items[0][quantity]=1&metadata[business_id]=b1&expand[]=x` becomes
`{"line_items": [{"price": "price_1", "quantity": "1"}], "metadata": {"business_id": "b1"}, "expand": ["x"]}`:
a hash whose keys are all indices is an array (in index order), `[]` appends, and every leaf stays a string
(`"7"`, `"true"`), as Stripe receives it; `integer` and `boolean` read them the way Stripe does.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from providers.payments.simulator.errors import ApiError, invalid, unknown_parameter

KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
SEGMENT = re.compile(r"\[([^\[\]]*)\]")
FREE_FORM = {"metadata"}  # hashes whose keys are the caller's (digits stay keys, never indices)


def decode(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key, value in pairs:
        match = KEY.match(key)
        if not match:
            raise ApiError(400, f"Invalid parameter name: {key}", param=key)
        parts = [match.group(1), *SEGMENT.findall(match.group(2))]
        node = root
        for n, part in enumerate(parts):
            if part == "":
                part = str(len(node))
            if n == len(parts) - 1:
                if isinstance(node.get(part), dict):
                    raise invalid(key, f"Invalid value for {key}: expected an object")
                node[part] = value
            else:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    raise invalid(key, f"Invalid object: {key}")
                node = child
    decoded: dict[str, Any] = _arrays(root, None)  # (a body of bare indices decodes as a list)
    return decoded


def _arrays(node: Any, name: str | None) -> Any:
    if not isinstance(node, dict):
        return node
    values = {k: _arrays(v, k) for k, v in node.items()}
    if values and name not in FREE_FORM and all(k.isdigit() for k in values):
        return [values[k] for k in sorted(values, key=int)]
    return values


def decode_body(raw: bytes) -> dict[str, Any]:
    try:
        return decode(parse_qsl(raw.decode(), keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        raise ApiError(400, "Invalid request body: not UTF-8") from None


def check_known(params: dict[str, Any], allowed: set[str], prefix: str = "") -> None:
    for key in params:
        if key not in allowed:
            raise unknown_parameter(f"{prefix}[{key}]" if prefix else key)


def integer(value: object, param: str, low: int | None = None, high: int | None = None) -> int:
    try:
        number = int(value) if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()) else None
    except ValueError:
        number = None
    if number is None:
        raise invalid(param, f"Invalid integer: {value}", "parameter_invalid_integer")
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = f"between {low} and {high}" if low is not None and high is not None else \
            (f"at least {low}" if low is not None else f"at most {high}")
        raise invalid(param, f"Invalid {param}: must be {bounds}", "parameter_invalid_integer")
    return number


def string_map(value: object, param: str) -> dict[str, str]:
    """Metadata: up to 50 keys of at most 40 characters, values of at most 500 (Stripe's limits)."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise invalid(param, f"Invalid object: {param}")
    if len(value) > 50:
        raise invalid(param, f"Invalid {param}: at most 50 keys")
    for key, item in value.items():
        if not isinstance(item, str):
            raise invalid(f"{param}[{key}]", f"Invalid value for {param}[{key}]: expected a string")
        if len(key) > 40 or len(item) > 500:
            raise invalid(f"{param}[{key}]", f"Invalid {param}: keys must be at most 40 characters and values at "
                                             "most 500 characters")
    return {k: v for k, v in value.items() if v != ""}  # an empty value unsets the key
