"""An agent's tools as plain functions: checking the `tools` an owner sends (each refusal names its field, e.g.
`tools[2].url`), what the provider assistant gets of them, and the secret that signs the custom tools' requests.

A tool is `{type, ...}` with a type of contracts.agents.AGENT_TOOLS. The stored list is the checked one, with the
defaults filled in (a destination's mode, a custom tool's timeout_ms). A custom tool's URL is checked here for its
form (https, no literal address); the service checks what its host resolves to (core.destinations) before saving.
"""
from __future__ import annotations

import ipaddress
import json
import re
import secrets
from typing import Any

from jsonschema import SchemaError
from jsonschema.validators import validator_for

from contracts.agents import (
    AGENT_TOOLS,
    CUSTOM_DESCRIPTION_MAX,
    CUSTOM_NAME_PATTERN,
    CUSTOM_TOOL,
    DESTINATION_NAME_MAX,
    DESTINATIONS_MAX,
    LINK_NAME_MAX,
    LINKS_MAX,
    PARAMETER_FORMATS,
    PARAMETER_KEYWORDS,
    PARAMETER_TYPES,
    PARAMETERS_MAX_BYTES,
    TIMEOUT_MS,
    TOOL_SECRET_PREFIX,
    TOOLS_MAX,
    TRANSFER_MESSAGE_MAX,
    TRANSFER_MODES,
)
from core.contact import is_e164
from core.errors import invalid
from core.urls import split_url

# The keys each type takes besides `type`.
KEYS: dict[str, frozenset[str]] = {
    **{t: frozenset() for t in ("send_sms", "check_availability", "book_appointment", "update_lead", "end_call")},
    "send_link": frozenset({"links"}),
    "transfer_call": frozenset({"destinations", "mode"}),
    CUSTOM_TOOL: frozenset({"name", "description", "parameters", "url", "timeout_ms"}),
}
LOOPBACK_NAMES = ("localhost",)


def check_tools(given: Any, allow_loopback: bool) -> list[dict[str, Any]]:
    """The tools to store, or 400 naming the first bad field. Each built-in type at most once; custom tools have
    names unique in the agent."""
    if not isinstance(given, list):
        raise invalid("tools must be an array of tool objects {type, ...}")
    if len(given) > TOOLS_MAX:
        raise invalid(f"tools may hold at most {TOOLS_MAX} tools")
    checked: list[dict[str, Any]] = []
    for i, tool in enumerate(given):
        at = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise invalid(f"{at} must be an object {{type, ...}}")
        kind = tool.get("type")
        if kind not in AGENT_TOOLS:
            raise invalid(f"{at}.type must be one of {', '.join(AGENT_TOOLS)}")
        unknown = set(tool) - KEYS[kind] - {"type"}
        if unknown:
            raise invalid(f"{at} ({kind}) does not take {', '.join(sorted(unknown))}")
        if kind != CUSTOM_TOOL and any(t["type"] == kind for t in checked):
            raise invalid(f"{at}.type: {kind} is already in tools (each built-in tool at most once)")
        if kind == "send_link":
            checked.append({"type": kind, "links": _links(tool.get("links"), f"{at}.links")})
        elif kind == "transfer_call":
            checked.append(_transfer(tool, at))
        elif kind == CUSTOM_TOOL:
            custom = _custom(tool, at, allow_loopback)
            if any(t["type"] == CUSTOM_TOOL and t["name"] == custom["name"] for t in checked):
                raise invalid(f"{at}.name: another custom tool is named {custom['name']}")
            checked.append(custom)
        else:
            checked.append({"type": kind})
    return checked


def _string(value: Any, at: str, maximum: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid(f"{at} must be a non-empty string")
    if len(value.strip()) > maximum:
        raise invalid(f"{at} must be at most {maximum} characters")
    return value.strip()


def _objects(value: Any, at: str, keys: frozenset[str], required: tuple[str, ...], low: int,
             high: int) -> list[dict[str, Any]]:
    """A list of `low` to `high` objects with only `keys` and every one of `required`."""
    if not isinstance(value, list) or not low <= len(value) <= high:
        raise invalid(f"{at} must be an array of {low} to {high} objects")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise invalid(f"{at}[{i}] must be an object")
        unknown = set(item) - keys
        if unknown:
            raise invalid(f"{at}[{i}] does not take {', '.join(sorted(unknown))}")
        missing = [k for k in required if k not in item]
        if missing:
            raise invalid(f"{at}[{i}].{missing[0]} is required")
    return value


def _unique_name(names: list[str], name: str, at: str) -> None:
    if name in names:
        raise invalid(f"{at}: another one is named {name}")
    names.append(name)


def _links(value: Any, at: str) -> list[dict[str, str]]:
    links: list[dict[str, str]] = []
    names: list[str] = []
    for i, link in enumerate(_objects(value, at, frozenset({"name", "url"}), ("name", "url"), 1, LINKS_MAX)):
        name = _string(link["name"], f"{at}[{i}].name", LINK_NAME_MAX)
        _unique_name(names, name, f"{at}[{i}].name")
        url = link["url"]
        if not isinstance(url, str) or len(url) > 2000:
            raise invalid(f"{at}[{i}].url must be an https URL of at most 2000 characters")
        parts = split_url(url.strip(), f"{at}[{i}].url")
        if parts.scheme != "https" or not parts.hostname:
            raise invalid(f"{at}[{i}].url must be an https URL such as https://example.com/menu")
        links.append({"name": name, "url": url.strip()})
    return links


def _transfer(tool: dict[str, Any], at: str) -> dict[str, Any]:
    """transfer_call: its destinations, or none and the mode of a transfer to the business's phone_forward_to."""
    destinations = _destinations(tool.get("destinations", []), f"{at}.destinations")
    if destinations:
        if "mode" in tool:
            raise invalid(f"{at}.mode is the mode of a transfer to the business's phone_forward_to (no "
                          "destinations): give each destination its own mode")
        return {"type": "transfer_call", "destinations": destinations}
    return {"type": "transfer_call", "destinations": [], "mode": _mode(tool.get("mode", TRANSFER_MODES[0]),
                                                                       f"{at}.mode")}


def _mode(value: Any, at: str) -> str:
    if value not in TRANSFER_MODES:
        raise invalid(f"{at} must be one of {', '.join(TRANSFER_MODES)}")
    return str(value)


def _destinations(value: Any, at: str) -> list[dict[str, Any]]:
    if value == []:
        return []  # the business's phone_forward_to, asked for when the call is transferred
    destinations: list[dict[str, Any]] = []
    names: list[str] = []
    keys = frozenset({"name", "phone_number", "mode", "message"})
    for i, d in enumerate(_objects(value, at, keys, ("name", "phone_number"), 1, DESTINATIONS_MAX)):
        where = f"{at}[{i}]"
        name = _string(d["name"], f"{where}.name", DESTINATION_NAME_MAX)
        _unique_name(names, name, f"{where}.name")
        if not is_e164(d["phone_number"]):
            raise invalid(f"{where}.phone_number must be a valid phone number in E.164, e.g. +14155550123")
        destination = {"name": name, "phone_number": d["phone_number"],
                       "mode": _mode(d.get("mode", TRANSFER_MODES[0]), f"{where}.mode")}
        if d.get("message") is not None:
            destination["message"] = _string(d["message"], f"{where}.message", TRANSFER_MESSAGE_MAX)
        destinations.append(destination)
    return destinations


def _custom(tool: dict[str, Any], at: str, allow_loopback: bool) -> dict[str, Any]:
    for key in ("name", "description", "parameters", "url"):
        if key not in tool:
            raise invalid(f"{at}.{key} is required for a custom tool")
    name = tool["name"]
    if not isinstance(name, str) or not re.fullmatch(CUSTOM_NAME_PATTERN, name):
        raise invalid(f"{at}.name must be 1 to 64 letters, digits, _ or - (it is the function's name)")
    if name in AGENT_TOOLS:
        raise invalid(f"{at}.name must not be the name of a built-in tool ({name})")
    timeout = tool.get("timeout_ms", TIMEOUT_MS[0])
    if isinstance(timeout, float) and timeout.is_integer():
        timeout = int(timeout)  # a JSON number as the request's Struct carries it
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not TIMEOUT_MS[1] <= timeout <= TIMEOUT_MS[2]:
        raise invalid(f"{at}.timeout_ms must be an integer from {TIMEOUT_MS[1]} to {TIMEOUT_MS[2]}")
    return {"type": CUSTOM_TOOL, "name": name,
            "description": _string(tool["description"], f"{at}.description", CUSTOM_DESCRIPTION_MAX),
            "parameters": check_parameters(tool["parameters"], f"{at}.parameters"),
            "url": check_tool_url(tool["url"], f"{at}.url", allow_loopback), "timeout_ms": timeout}


def check_parameters(schema: Any, at: str) -> dict[str, Any]:
    """A JSON Schema for an object (checked against its draft's metaschema), at most PARAMETERS_MAX_BYTES as JSON,
    using only the keywords, types and formats the voice provider takes."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise invalid(f"{at} must be a JSON Schema of an object: {{\"type\": \"object\", \"properties\": {{...}}}}")
    if len(json.dumps(schema, separators=(",", ":")).encode()) > PARAMETERS_MAX_BYTES:
        raise invalid(f"{at} must be at most {PARAMETERS_MAX_BYTES} bytes as JSON")
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        raise invalid(f"{at}{where} is not a valid JSON Schema: {exc.message}") from None
    if set(schema) - {"type", "properties", "required"} or not isinstance(schema.get("properties"), dict):
        raise invalid(f"{at} takes type, properties (required: an object, may be empty) and required only")
    _provider_schema(schema, at)
    return schema


def _provider_schema(schema: dict[str, Any], at: str) -> None:
    unknown = set(schema) - PARAMETER_KEYWORDS
    if unknown:
        raise invalid(f"{at} uses {', '.join(sorted(unknown))}: the keywords a tool's parameters may use are "
                      f"{', '.join(sorted(PARAMETER_KEYWORDS))}")
    if schema.get("type") not in PARAMETER_TYPES:
        raise invalid(f"{at}.type must be one of {', '.join(PARAMETER_TYPES)}")
    if "format" in schema and schema["format"] not in PARAMETER_FORMATS:
        raise invalid(f"{at}.format must be one of {', '.join(PARAMETER_FORMATS)}")
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        raise invalid(f"{at}.enum must list strings")
    if isinstance(schema.get("items"), dict):
        _provider_schema(schema["items"], f"{at}.items")
    for name, sub in (schema.get("properties") or {}).items():
        _provider_schema(sub, f"{at}.properties.{name}")


def check_tool_url(url: Any, at: str, allow_loopback: bool) -> str:
    """An https URL naming a host, not an address; on the local stack (`allow_loopback`) a loopback URL too, over
    http or https (a developer's own receiver). Where the host resolves to is checked by core.destinations."""
    if not isinstance(url, str) or len(url) > 2000:
        raise invalid(f"{at} must be an https URL of at most 2000 characters")
    parts = split_url(url.strip(), at)
    host = parts.hostname or ""
    if not host or parts.username or parts.password:
        raise invalid(f"{at} must be an https URL with a host and no credentials")
    loopback = allow_loopback and _is_loopback(host)
    if parts.scheme != "https" and not (loopback and parts.scheme == "http"):
        raise invalid(f"{at} must be an https URL such as https://tools.example.com/lookup")
    if _is_address(host) and not loopback:
        raise invalid(f"{at} must name a host, not an IP address")
    return url.strip()


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES or (_is_address(host) and ipaddress.ip_address(host).is_loopback)


def custom_urls(tools: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(field, url) of each custom tool, to check where its host resolves."""
    return [(f"tools[{i}].url", t["url"]) for i, t in enumerate(tools) if t["type"] == CUSTOM_TOOL]


def has_custom(tools: list[dict[str, Any]]) -> bool:
    return any(t["type"] == CUSTOM_TOOL for t in tools)


# -- the signing secret ----------------------------------------------------------------------------------------


def new_secret() -> str:
    return TOOL_SECRET_PREFIX + secrets.token_urlsafe(32)


def masked(tail: str | None) -> str | None:
    """How a secret is shown after it was made (its last four characters), as webhook secrets are."""
    return f"{TOOL_SECRET_PREFIX}...{tail}" if tail else None
