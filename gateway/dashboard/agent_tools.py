"""The agent page's tools as plain functions: the `tools` list its forms make of the agent's saved one (built-in
tools turned on or off with send_link's links and transfer_call's destinations; a custom tool added or removed), and
what the page shows of them. The list goes to UpdateAgent as the API's agent update sends it, and the agents service
checks it (services.agents.tools.check_tools): its refusal is the page's message. Only what a form cannot carry as
the API's JSON is read here (a custom tool's parameters, typed as JSON text)."""
from __future__ import annotations

import json
from typing import Any

from multidict import MultiMapping

from contracts.agents import AGENT_TOOLS, CUSTOM_TOOL, DESTINATIONS_MAX, LINKS_MAX, TRANSFER_MODES
from core.errors import invalid

BUILTINS = tuple(t for t in AGENT_TOOLS if t != CUSTOM_TOOL)
LINK_FIELDS = ("link_name", "link_url")
DESTINATION_FIELDS = ("destination_name", "destination_phone", "destination_mode", "destination_message")
CUSTOM_FIELDS = ("custom_name", "custom_description", "custom_parameters", "custom_url", "custom_timeout_ms")
BLANK_ROWS = 2  # empty rows the page offers for new links and destinations
NEW_PARAMETERS = '{"type": "object", "properties": {}}'

Typed = MultiMapping[Any]  # a posted form: its values are text


def _text(form: Typed, field: str) -> str:
    return str(form.get(field, "")).replace("\r\n", "\n").strip()


def _rows(form: Typed, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """The filled rows of a form's repeated fields (row i: the i-th value of each), blank rows left out."""
    columns = [[str(v).strip() for v in form.getall(f, [])] for f in fields]
    rows = [dict(zip(fields, values, strict=False)) for values in zip(*columns, strict=False)]
    return [row for row in rows if any(row.get(f) for f in fields if f != "destination_mode")]


def _links(form: Typed) -> list[dict[str, str]]:
    return [{"name": r["link_name"], "url": r["link_url"]} for r in _rows(form, LINK_FIELDS)]


def _destinations(form: Typed) -> list[dict[str, str]]:
    return [{"name": r["destination_name"], "phone_number": r["destination_phone"],
             "mode": r["destination_mode"] or TRANSFER_MODES[0],
             **({"message": r["destination_message"]} if r["destination_message"] else {})}
            for r in _rows(form, DESTINATION_FIELDS)]


def _builtin(kind: str, form: Typed) -> dict[str, Any]:
    if kind == "send_link":
        return {"type": kind, "links": _links(form)}
    if kind == "transfer_call":
        return {"type": kind, "destinations": _destinations(form)}
    return {"type": kind}


def with_builtins(saved: list[dict[str, Any]], form: Typed) -> list[dict[str, Any]]:
    """The saved tools with the built-ins as the form has them (its `tool` boxes, links and destinations): kept in
    their place (so saving an unchanged form changes nothing), new ones after them; custom tools as they are."""
    on = {str(t) for t in form.getall("tool", [])}
    kept = [t if t["type"] == CUSTOM_TOOL else _builtin(t["type"], form)
            for t in saved if t["type"] == CUSTOM_TOOL or t["type"] in on]
    present = {t["type"] for t in kept}
    return kept + [_builtin(kind, form) for kind in BUILTINS if kind in on and kind not in present]


def with_custom(saved: list[dict[str, Any]], form: Typed) -> list[dict[str, Any]]:
    """The saved tools and the custom tool of the form after them. Its parameters must be JSON (400 otherwise);
    everything else of it is the service's to check."""
    try:
        parameters = json.loads(_text(form, "custom_parameters"))
    except json.JSONDecodeError as exc:
        raise invalid(f"the parameters must be JSON, a JSON Schema of an object such as {NEW_PARAMETERS} "
                      f"({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    tool = {"type": CUSTOM_TOOL, "name": _text(form, "custom_name"), "description": _text(form, "custom_description"),
            "parameters": parameters, "url": _text(form, "custom_url")}
    if timeout := _text(form, "custom_timeout_ms"):
        tool["timeout_ms"] = int(timeout) if timeout.isdigit() else timeout
    return [*saved, tool]


def without_custom(saved: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [t for t in saved if not (t["type"] == CUSTOM_TOOL and t["name"] == name)]


def view(saved: list[dict[str, Any]], typed: Typed | None = None) -> dict[str, Any]:
    """What the tools section shows: the saved tools, or, after a save was refused, what its form had (`typed`,
    whose `tools_form` says which form it is), so the owner corrects it rather than types it again."""
    by_type = {t["type"]: t for t in saved if t["type"] != CUSTOM_TOOL}
    on, links = set(by_type), by_type.get("send_link", {}).get("links", [])
    destinations = by_type.get("transfer_call", {}).get("destinations", [])
    custom = dict.fromkeys(CUSTOM_FIELDS, "") | {"custom_parameters": NEW_PARAMETERS}
    kind = typed.get("tools_form") if typed is not None else None
    if typed is not None and kind == "builtins":
        on, links, destinations = {str(t) for t in typed.getall("tool", [])}, _links(typed), _destinations(typed)
    elif typed is not None and kind == "custom":
        custom = {f: _text(typed, f) for f in CUSTOM_FIELDS}
    blank_destination = {"name": "", "phone_number": "", "mode": TRANSFER_MODES[0], "message": ""}
    return {
        "builtins": [{"type": t, "description": AGENT_TOOLS[t], "on": t in on} for t in BUILTINS],
        "links": [*links, *[{"name": "", "url": ""}] * min(BLANK_ROWS, LINKS_MAX - len(links))],
        "destinations": [{**blank_destination, **d} for d in destinations]
        + [blank_destination] * min(BLANK_ROWS, DESTINATIONS_MAX - len(destinations)),
        "modes": TRANSFER_MODES,
        "custom": [{**t, "parameters": json.dumps(t["parameters"], ensure_ascii=False)}
                   for t in saved if t["type"] == CUSTOM_TOOL],
        "new_custom": custom,
    }
