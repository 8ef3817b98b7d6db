"""What a provider publishes about a request or resource, read from its own documents: an OpenAPI document (Vapi,
Twilio) or the `stripe` package's parameter types (generated from Stripe's OpenAPI, pinned in pyproject.toml).

Both answer the same two questions about a schema, optionally at a dotted path inside it (`customer.name`): its
properties, and one keyword of one property (`maxLength`, `enum`, ...)."""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

from stripe._request_options import RequestOptions


class OpenApi:
    """An OpenAPI 3 document: schemas by name under components/schemas, `$ref`s followed, `allOf` merged."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    @classmethod
    def load(cls, path: Path) -> OpenApi:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            node: Any = self.document
            for part in schema["$ref"].removeprefix("#/").split("/"):
                node = node[part]
            schema = node
        if "allOf" in schema:
            merged: dict[str, Any] = {"properties": {}, "required": []}
            for part in schema["allOf"]:
                part = self._resolve(part)
                merged["properties"] |= part.get("properties", {})
                merged["required"] += part.get("required", [])
            return merged | {k: v for k, v in schema.items() if k != "allOf"}
        return schema

    def _nodes(self, name: str, path: str = "") -> list[dict[str, Any]]:
        """The schemas at `path` inside the schema `name` (a components/schemas name, a request body: `POST /path`,
        or a read's query parameters: `GET /path`): an array stands for its items, and a oneOf/anyOf for each of its options (null aside), so a path
        through a union reaches every option's property."""
        if " " in name:
            method, route = name.split(" ", 1)
            operation = self.document["paths"][route][method.lower()]
            if "requestBody" in operation:
                content = operation["requestBody"]["content"]
                nodes = self._options(next(iter(content.values()))["schema"])
            else:  # a read: its query parameters stand for the properties
                nodes = [{"properties": {p["name"]: p.get("schema", {}) for p in map(self._resolve,
                                                                                    operation.get("parameters", ()))
                                         if p.get("in") == "query"}}]
        else:
            nodes = self._options(self.document["components"]["schemas"][name])
        for part in filter(None, path.split(".")):
            found = [option for node in nodes if part in node.get("properties", {})
                     for option in self._options(node["properties"][part])]
            if not found:
                raise KeyError(f"{name}: no {path}")
            nodes = found
        return nodes

    def _options(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        node = self._resolve(node)
        if node.get("type") == "array" and "items" in node:
            return self._options(node["items"])
        for key in ("oneOf", "anyOf"):
            if key in node:
                return [o for option in node[key] for o in self._options(option) if o.get("type") != "null"]
        return [node]

    def properties(self, name: str, path: str = "") -> frozenset[str]:
        return frozenset(p for node in self._nodes(name, path) for p in node.get("properties", {}))

    def keyword(self, name: str, path: str, keyword: str) -> Any:
        """`keyword` of the property at `path`: None when the document states none; over a union's options, the
        values of every option's `enum` together, and a limit only where all options agree on it."""
        values = [node.get(keyword) for node in self._nodes(name, path)]
        if keyword == "enum":
            return sorted({v for listed in values if listed for v in listed}) or None
        return values[0] if len(set(map(repr, values))) == 1 else None


_FORWARD = re.compile(r"""ForwardRef\(['"](\w+)['"]\)""")
_OPTIONS = frozenset(RequestOptions.__annotations__)  # api_key, idempotency_key, ...: not request parameters


class StripeTypes:
    """The `stripe` package's TypedDicts of request parameters (`stripe.params`), by module and class name:
    `checkout._session_create_params:SessionCreateParams`."""

    def _typed_dict(self, name: str, path: str = "") -> type:
        module_name, _, class_name = name.partition(":")
        module = importlib.import_module(f"stripe.params.{module_name}")
        cls: type = getattr(module, class_name)
        for part in filter(None, path.split(".")):
            nested = _FORWARD.findall(repr(cls.__annotations__[part]))
            cls = next(getattr(module, n) for n in nested if hasattr(module, n))
        return cls

    def properties(self, name: str, path: str = "") -> frozenset[str]:
        return frozenset(self._typed_dict(name, path).__annotations__) - _OPTIONS

    def keyword(self, name: str, path: str, keyword: str) -> Any:
        """Stripe's types state only enums (`Literal[...]`): `enum` gives their values, other keywords None."""
        if keyword != "enum":
            return None
        parent, _, field = path.rpartition(".")
        literal = re.search(r"Literal\[([^\]]*)\]", repr(self._typed_dict(name, parent).__annotations__[field]))
        return re.findall(r"'([^']*)'", literal.group(1)) if literal else None
