"""Named JSON Schemas of the public objects, published at /api/v1/schemas and in OpenAPI.

Response objects are derived from the proto messages the handlers convert (see
gateway.convert), request bodies are written here because they are the public
input contract with its own rules.
"""
from __future__ import annotations

from gateway.convert import message_schema
from switchboard.v1 import accounts_pb2

UUID = {"type": "string", "format": "uuid"}
TIME = {"type": "string", "format": "date-time"}
NULLABLE_TIME = {"anyOf": [TIME, {"type": "null"}]}


def _obj(props: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": props, "required": list(required)}


ERROR = _obj({"error": _obj({"code": {"type": "string"}, "message": {"type": "string"}}, ("code", "message"))}, ("error",))

SIGNUP_REQUEST = _obj({
    "business_name": {"type": "string", "minLength": 1, "maxLength": 200},
    "email": {"type": "string", "minLength": 3, "maxLength": 320, "format": "email"},
    "business_type": {"type": "string", "maxLength": 100},
    "website": {"type": "string", "maxLength": 2000, "format": "uri"},
    "phone_forward_to": {"type": "string", "pattern": r"^\+[1-9][0-9]{5,14}$", "description": "E.164, e.g. +14155550123"},
    "plan_id": {"type": "string", "enum": ["starter", "growth", "scale"], "default": "starter"},
}, ("business_name", "email"))

_SIGNUP_REPLY = message_schema(accounts_pb2.SignupReply.DESCRIPTOR)
_SIGNUP_REPLY["properties"]["trial_ends_at"] = TIME

KEY_CREATE = _obj({
    "name": {"type": "string", "maxLength": 100, "default": "Untitled Key"},
    "business_id": {"anyOf": [UUID, {"type": "null"}], "description": "limit the key to one business; null or omitted: all"},
    "scopes": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "expires_at": NULLABLE_TIME,
})
KEY_UPDATE = _obj({
    "id": UUID,
    "name": {"type": "string", "minLength": 1, "maxLength": 100},
    "scopes": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "business_id": {"anyOf": [UUID, {"type": "null"}]},
    "expires_at": NULLABLE_TIME,
    "expire": {"type": "boolean", "description": "true sets the expiry to now"},
    "revoke": {"type": "boolean", "description": "true revokes the key; it stops working on the next request"},
}, ("id",))

METADATA = {"type": "object", "description": "free-form; merged into the existing metadata on update"}
WORKSPACE_CREATE = _obj({
    "name": {"type": "string", "minLength": 1, "maxLength": 200},
    "metadata": METADATA,
    "external_ref": {"type": "string", "maxLength": 200},
}, ("name",))
WORKSPACE_UPDATE = _obj({
    "id": UUID,
    "name": {"type": "string", "minLength": 1, "maxLength": 200},
    "metadata": METADATA,
    "action": {"type": "string", "enum": ["pause", "resume", "cancel", "teardown"]},
}, ("id",))

_KEY = message_schema(accounts_pb2.ApiKey.DESCRIPTOR, omit=("key",))
_KEY_WITH_SECRET = message_schema(accounts_pb2.ApiKey.DESCRIPTOR)
_WORKSPACE = message_schema(accounts_pb2.Workspace.DESCRIPTOR)
_USAGE = message_schema(accounts_pb2.UsageEntry.DESCRIPTOR, omit=("api_key_id", "account_id", "business_id"))
_BALANCE = message_schema(accounts_pb2.BalanceEntry.DESCRIPTOR)


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


SCHEMAS: dict[str, dict] = {
    "Error": ERROR,
    "SignupRequest": SIGNUP_REQUEST,
    "SignupResponse": _SIGNUP_REPLY,
    "ApiKey": _KEY,
    "ApiKeyCreated": _KEY_WITH_SECRET,
    "ApiKeyCreateRequest": KEY_CREATE,
    "ApiKeyUpdateRequest": KEY_UPDATE,
    "ApiKeyList": _obj({"keys": {"type": "array", "items": _ref("ApiKey")}}, ("keys",)),
    "Success": _obj({"success": {"type": "boolean"}}, ("success",)),
    "Workspace": _WORKSPACE,
    "WorkspaceCreateRequest": WORKSPACE_CREATE,
    "WorkspaceUpdateRequest": WORKSPACE_UPDATE,
    "WorkspaceList": _obj({"workspaces": {"type": "array", "items": _ref("Workspace")}, "has_more": {"type": "boolean"}},
                          ("workspaces", "has_more")),
    "UsageEntry": _USAGE,
    "UsageList": _obj({"usage": {"type": "array", "items": _ref("UsageEntry")}, "has_more": {"type": "boolean"}},
                      ("usage", "has_more")),
    "BalanceEntry": _BALANCE,
    "Balance": _obj({"businesses": {"type": "array", "items": _ref("BalanceEntry")}}, ("businesses",)),
    "Capabilities": _obj({
        "account_id": UUID,
        "key": _obj({"id": UUID, "scopes": {"type": "array", "items": {"type": "string"}},
                     "business_id": {"anyOf": [UUID, {"type": "null"}]}}),
        "workspaces": {"type": "array", "items": _obj({"id": UUID, "name": {"type": "string"},
                                                        "lifecycle_state": {"type": "string"}})},
        "scopes": {"type": "array", "items": {"type": "string"}, "description": "every scope a key can hold"},
        "endpoints": {"type": "array", "items": _obj({"method": {"type": "string"}, "path": {"type": "string"},
                                                       "scope": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                                                       "allowed": {"type": "boolean"}})},
    }, ("account_id", "key", "workspaces", "scopes", "endpoints")),
    "Health": _obj({
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "api": {"type": "string"},
        "queue": {"type": "string", "description": "event bus (NATS JetStream) status"},
        "services": {"type": "object", "additionalProperties": {"type": "string"}},
        "providers": {"type": "object", "additionalProperties": {"type": "string"}},
        "checked_at": TIME,
    }, ("status", "api", "queue", "services", "providers", "checked_at")),
}


def resolved(name: str) -> dict:
    """A schema with its $refs inlined, for /api/v1/schemas?name= (standalone documents)."""
    def walk(node):
        if isinstance(node, dict):
            if set(node) == {"$ref"}:
                return walk(SCHEMAS[node["$ref"].rsplit("/", 1)[1]])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": name, **walk(SCHEMAS[name])}
