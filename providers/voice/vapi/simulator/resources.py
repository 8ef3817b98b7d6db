"""The provider's resources, one collection class per kind: what a create or update must hold, what it
refers to, and what the provider adds. Collections know nothing of HTTP (`app` maps routes onto them),
so call playback and eval runs (`evals`) can drive them directly."""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from providers.voice.vapi.simulator import validation
from providers.voice.vapi.simulator.errors import bad_request, not_found
from providers.voice.vapi.simulator.state import Store

LIST_LIMIT_DEFAULT = 100
LIST_LIMIT_MAX = 1000


# GET /call's bounds on a call's createdAt, and how each compares it.
CREATED_BOUNDS: dict[str, Callable[[datetime, datetime], bool]] = {
    "createdAtGt": lambda c, at: c > at, "createdAtGe": lambda c, at: c >= at,
    "createdAtLt": lambda c, at: c < at, "createdAtLe": lambda c, at: c <= at}


def _instant(value: object, name: str) -> datetime:
    try:
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise bad_request([f"{name} must be a valid ISO 8601 date string"]) from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def check(messages: list[str]) -> None:
    if messages:
        raise bad_request(messages)


class Collection:
    kind = ""            # key in the store
    segment = ""         # path under the API root: /<segment>, /<segment>/{id}
    label = ""           # as in the provider's "Couldn't Find <label>"
    operations = frozenset({"create", "list", "get", "update", "delete"})
    filters: tuple[str, ...] = ()  # list query parameters that filter on the field of the same name
    after_create: Callable[[dict[str, Any]], None] | None = None  # called with each new record (the calls' playback)
    after_delete: Callable[[dict[str, Any]], None] | None = None  # called with each deleted one (a call's recording)

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- rules (overridden per kind) -------------------------------------------------------------------

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        """Validate a create and return the fields to store."""
        raise NotImplementedError

    def prepare_update(self, record: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """Validate an update of `record` and return the fields to merge."""
        raise NotImplementedError

    def require(self, kind: str, record_id: object, label: str) -> dict[str, Any]:
        """A record another request refers to; a 400 when it does not exist."""
        record = self.store.get(kind, record_id) if isinstance(record_id, str) else None
        if record is None:
            raise bad_request([f"Couldn't Find {label}"])
        return record

    # -- operations -----------------------------------------------------------------------------------------

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        record = self.store.create(self.kind, self.prepare_create(body))
        if self.after_create is not None:
            self.after_create(record)
        return record

    def get(self, record_id: str) -> dict[str, Any]:
        record = self.store.get(self.kind, record_id)
        if record is None:
            raise not_found(self.label)
        return record

    def list(self, limit: int = LIST_LIMIT_DEFAULT, **filters: object) -> list[dict[str, Any]]:
        return self.store.list(self.kind, limit, **filters)

    def update(self, record_id: str, body: dict[str, Any]) -> dict[str, Any]:
        record = self.get(record_id)
        return self.store.update(self.kind, record_id, self.prepare_update(record, body))

    def delete(self, record_id: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """The record as it was, gone from the store. `body`: the request's (only a call's delete has one)."""
        self.get(record_id)
        record = self.store.delete(self.kind, record_id)
        if self.after_delete is not None:
            self.after_delete(record)
        return record


class Assistants(Collection):
    kind, segment, label = "assistant", "assistant", "Assistant"

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(validation.assistant(body))
        return body

    def prepare_update(self, record: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        check(validation.assistant(body, updating=True))
        return body


class PhoneNumbers(Collection):
    kind, segment, label = "phone-number", "phone-number", "Phone Number"

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(validation.phone_number(body))
        if body.get("assistantId") is not None:
            self.require("assistant", body["assistantId"], "Assistant")
        fields = dict(body)
        if body["provider"] == "vapi":
            fields["number"] = self._pick_number(body.get("numberDesiredAreaCode") or "415")
        self._check_unique(fields["number"])
        return {**fields, "status": "active"}

    def prepare_update(self, record: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        check(validation.phone_number_update(body, record["provider"]))
        if body.get("assistantId") is not None:
            self.require("assistant", body["assistantId"], "Assistant")
        if "number" in body and body["number"] != record.get("number"):
            self._check_unique(body["number"])
        return body

    def _check_unique(self, number: str) -> None:
        if self.store.list(self.kind, 1, number=number):
            raise bad_request(["Number Already Exists"])

    def _pick_number(self, area_code: str) -> str:
        """A number the provider would buy: the first free one in the area code."""
        taken = {r.get("number") for r in self.store.list(self.kind)}
        for line in range(100, 10000):
            number = f"+1{area_code}555{line:04d}"
            if number not in taken:
                return number
        raise bad_request([f"No numbers available in area code {area_code}"])


class Calls(Collection):
    """Outbound calls. Created `queued`, then played (see playback). Deleted ("Delete Call", DELETE /call/{id})
    with their recording, transcript and artifact: GET /call/{id} is then 404, GET /call lists them no more, the
    recording's URL serves 404 (`after_delete`) and a call still going on stops playing."""

    kind, segment, label = "call", "call", "Call"
    operations = frozenset({"create", "list", "get", "delete"})
    filters = ("assistantId", "phoneNumberId", *CREATED_BOUNDS)

    def list(self, limit: int = LIST_LIMIT_DEFAULT, **filters: object) -> list[dict[str, Any]]:
        """Newest first; `createdAtGt`, `Ge`, `Lt`, `Le` bound the calls' createdAt (ISO 8601)."""
        bounds = {name: _instant(filters.pop(name), name) for name in CREATED_BOUNDS if name in filters}
        found = [c for c in self.store.list(self.kind, None, **filters)
                 if all(CREATED_BOUNDS[name](_instant(c["createdAt"], name), at) for name, at in bounds.items())]
        return found[:limit]

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(validation.call(body))
        if "assistantId" in body:
            self.require("assistant", body["assistantId"], "Assistant")
        self.require("phone-number", body["phoneNumberId"], "Phone Number")
        return {"type": "outboundPhoneCall", "status": "queued", **body}

    def delete(self, record_id: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        check(validation.delete_call(body or {}))
        return super().delete(record_id)


SECRET_FIELDS = ("secretKey", "token")  # of an authentication plan


def without_secrets(record: dict[str, Any]) -> dict[str, Any]:
    plan = record.get("authenticationPlan") or {}
    return {**record, "authenticationPlan": {k: v for k, v in plan.items() if k not in SECRET_FIELDS}}


class Credentials(Collection):
    """Webhook credentials: how server messages are authenticated (an assistant's `server.credentialId`).

    `/credential` is in the provider's guides, not in its OpenAPI document, and nothing says whether it shows a
    secret back: the simulator never does (the store keeps it, to sign the messages), so no client can come to
    depend on reading one."""

    kind, segment, label = "credential", "credential", "Credential"
    operations = frozenset({"create", "list", "get", "delete"})

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(validation.credential(body))
        return body

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        return without_secrets(super().create(body))

    def get(self, record_id: str) -> dict[str, Any]:
        return without_secrets(super().get(record_id))

    def list(self, limit: int = LIST_LIMIT_DEFAULT, **filters: object) -> list[dict[str, Any]]:
        return [without_secrets(r) for r in super().list(limit, **filters)]

    def delete(self, record_id: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return without_secrets(super().delete(record_id))


KINDS: tuple[type[Collection], ...] = (Assistants, PhoneNumbers, Calls, Credentials)  # evals: see `evals`


def collections(store: Store) -> dict[str, Collection]:
    """Every collection over `store`, by kind."""
    return {cls.kind: cls(store) for cls in KINDS}
