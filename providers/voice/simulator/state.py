"""The simulator's state: one collection of JSON objects per resource kind, saved to a file after
every change (written to a temporary file, then renamed) so a restart keeps everything."""
from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

KINDS = ("assistant", "phone-number", "call", "eval", "eval-run")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Store:
    def __init__(self, folder: Path):
        self.path = folder / "state.json"
        folder.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            data = json.loads(self.path.read_text())
        else:
            data = {"org_id": str(uuid.uuid4()), "collections": {}}
        self.org_id: str = data["org_id"]
        self.collections: dict[str, dict[str, dict]] = {k: data["collections"].get(k, {}) for k in KINDS}

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"org_id": self.org_id, "collections": self.collections}))
        os.replace(tmp, self.path)

    def create(self, kind: str, fields: dict) -> dict:
        stamp = now_iso()
        record = {**fields, "id": str(uuid.uuid4()), "orgId": self.org_id, "createdAt": stamp, "updatedAt": stamp}
        self.collections[kind][record["id"]] = record
        self.save()
        return record

    def get(self, kind: str, record_id: str) -> dict | None:
        return self.collections[kind].get(record_id)

    def update(self, kind: str, record_id: str, fields: dict, *, nulls_reset: bool = False) -> dict:
        """Shallow merge; with `nulls_reset`, a null removes the setting (the provider's default applies)."""
        record = {**self.collections[kind][record_id], **fields, "updatedAt": now_iso()}
        if nulls_reset:
            record = {k: v for k, v in record.items() if v is not None}
        self.collections[kind][record_id] = record
        self.save()
        return record

    def delete(self, kind: str, record_id: str) -> dict:
        record = self.collections[kind].pop(record_id)
        self.save()
        return record

    def list(self, kind: str, limit: int = 100, **equal) -> list[dict]:
        """Newest first, filtered on exact field values."""
        records = [r for r in self.collections[kind].values() if all(r.get(k) == v for k, v in equal.items())]
        return sorted(records, key=lambda r: r["createdAt"], reverse=True)[:limit]
