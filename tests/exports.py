"""An export completed in the database, as the job leaves one (its parts made by the job's own rules), for the tests
of what serves it (the routes, the dashboard) while not every service answers ExportPage."""
import hashlib
import json
from datetime import timedelta

from core.ids import new_id, utcnow
from services.accounts.privacy import export_domain as rules


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
