"""The simulator's store: one collection of JSON objects per resource kind, in insertion order, saved to
`state.json` in the data folder (a temporary file, flushed, then renamed over the old one) and loaded again at
start, so a restart keeps everything. A save rewrites the whole state, so changes are saved at most every
`save_delay` seconds (a burst of calls is written once, not once per change; VOICE_SIM_SAVE_SECONDS, default 1:
benches holding thousands of calls save less often, as the dump grows with them) and at shutdown (`flush`)."""
from __future__ import annotations

import asyncio
import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FILE = "state.json"
SYSTEM_FIELDS = frozenset({"id", "orgId", "createdAt", "updatedAt"})


def now_iso() -> str:
    """ISO 8601 in UTC with milliseconds and a Z, as the provider writes timestamps."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _own(fields: dict[str, Any]) -> dict[str, Any]:
    """A request's fields without the ones the store owns."""
    return {k: v for k, v in fields.items() if k not in SYSTEM_FIELDS}


class Store:
    def __init__(self, folder: Path, save_delay: float = 1.0) -> None:
        self.save_delay = save_delay
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / FILE
        data = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.org_id: str = data.get("org_id") or str(uuid.uuid4())
        self.collections: dict[str, dict[str, dict[str, Any]]] = data.get("collections", {})
        self._saving: asyncio.TimerHandle | None = None
        if not self.path.exists():
            self.save()  # the org id is fixed from the first start

    def changed(self) -> None:
        """Save within save_delay (at once outside an event loop)."""
        if self._saving is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.save()
            return
        self._saving = loop.call_later(self.save_delay, self.flush)

    def flush(self) -> None:
        """Save now what changed since the last save."""
        if self._saving is not None:
            self._saving.cancel()
            self._saving = None
        self.save()

    def save(self) -> None:
        tmp = self.path.with_name(f".{FILE}.tmp")
        with open(tmp, "w") as f:
            json.dump({"org_id": self.org_id, "collections": self.collections}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def _kind(self, kind: str) -> dict[str, dict[str, Any]]:
        return self.collections.setdefault(kind, {})

    def create(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        stamp = now_iso()
        record = {"id": str(uuid.uuid4()), "orgId": self.org_id, **_own(fields), "createdAt": stamp, "updatedAt": stamp}
        self._kind(kind)[record["id"]] = record
        self.changed()
        return record

    def get(self, kind: str, record_id: str) -> dict[str, Any] | None:
        return self._kind(kind).get(record_id)

    def existing(self, kind: str, record_id: str) -> dict[str, Any]:
        """A record known to be stored (a KeyError otherwise)."""
        return self._kind(kind)[record_id]

    def update(self, kind: str, record_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Shallow merge of top-level keys."""
        record = {**self._kind(kind)[record_id], **_own(fields), "updatedAt": now_iso()}
        self._kind(kind)[record_id] = record
        self.changed()
        return record

    def delete(self, kind: str, record_id: str) -> dict[str, Any]:
        record = self._kind(kind).pop(record_id)
        self.changed()
        return record

    def list(self, kind: str, limit: int | None = None, **equal: object) -> list[dict[str, Any]]:
        """Newest first, filtered on exact top-level field values."""
        found = [r for r in reversed(self._kind(kind).values()) if all(r.get(k) == v for k, v in equal.items())]
        return found if limit is None else found[:limit]
