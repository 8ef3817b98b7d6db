"""Exports in tests: one completed in the database, as the job leaves one (its parts made by the job's own rules),
for the tests of what serves it (the routes, the dashboard) without waiting for a job; and one run through the API
to completion and downloaded through its link (`exported`)."""
import hashlib
import io
import json
import tarfile
from datetime import timedelta

from yarl import URL

from core.ids import new_id, utcnow
from services.accounts.privacy import export_domain as rules
from tests.waiting import wait_until

PATH = "/api/v1/exports"


async def completed_export(db, business_id: str) -> tuple[str, bytes]:
    """An export of the business completed in the database, as the job leaves one: its id and archive."""
    export_id, now = new_id(), utcnow()
    progress = [{"kind": "workspace", "records": 1, "pages": 1, "after": "", "done": True},
                {"kind": "calls", "records": 2, "pages": 1, "after": "", "done": True}]
    workspace, stream = rules.page_part("workspace", 1, [json.dumps({"id": business_id})], now.timestamp(),
                                        rules.Stream(), first=True)
    calls, stream = rules.page_part("calls", 1, ['{"id":"c1"}', '{"id":"c2"}'], now.timestamp(), stream, first=False)
    parts = [workspace, calls,
             rules.final_part(rules.manifest(export_id, business_id, now, progress), now.timestamp(), stream)]
    archive = b"".join(parts)
    await db.execute(
        "INSERT INTO accounts.exports (id, business_id, status, kinds, records, bytes, parts, sha256, next_attempt_at, "
        "created_at, updated_at, completed_at, expires_at) VALUES ($1, $2, 'completed', $3::jsonb, 3, $4, $5, $6, $7, "
        "$7, $7, $7, $8)", export_id, business_id, json.dumps(progress), len(archive), len(parts),
        hashlib.sha256(archive).hexdigest(), now, now + timedelta(days=7))
    await db.executemany("INSERT INTO accounts.export_parts (export_id, seq, data) VALUES ($1, $2, $3)",
                         [(export_id, seq, data) for seq, data in enumerate(parts)])
    return export_id, archive


async def under_way_export(db, business_id: str) -> str:
    """An export of the business running in the database under a lease no runner takes over for a day: its id."""
    export_id, now = new_id(), utcnow()
    progress = [{"kind": "workspace", "records": 1, "pages": 1, "after": "", "done": True},
                {"kind": "calls", "records": 0, "pages": 0, "after": "", "done": False}]
    await db.execute(
        "INSERT INTO accounts.exports (id, business_id, status, kinds, records, next_attempt_at, lease_token, "
        "lease_until, created_at, updated_at) VALUES ($1, $2, 'running', $3::jsonb, 1, $4, $5, $6, $4, $4)",
        export_id, business_id, json.dumps(progress), now, new_id(), now + timedelta(days=1))
    return export_id


async def exported(api, key: str) -> tuple[dict, dict[str, str]]:
    """A new export of the key's business run to completion, then downloaded through its link alone (no key): the
    export as answered, and the archive's files by name (the archive's size and SHA-256 checked)."""
    status, made, _ = await api.request("POST", PATH, key=key, json={})
    assert status == 202, made
    _, export, _ = await wait_until(lambda: api.request("GET", PATH, key=key, params={"id": made["id"]}),
                                    "the export to complete", lambda r: r[1]["status"] in ("completed", "failed"),
                                    timeout=120)
    assert export["status"] == "completed", export
    async with api.session.get(URL(export["download_url"], encoded=True)) as r:
        assert r.status == 200 and r.headers["Content-Type"] == "application/gzip"
        data = await r.read()
    assert len(data) == export["bytes"] and hashlib.sha256(data).hexdigest() == export["sha256"]
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return export, {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}  # type: ignore[union-attr]
